"""flow: one stored message, top to bottom, in the caller's transaction.

Intake's chain (`pbem.service.intake.chain`) ends the message by one of its rules — a
machine, a stranger, an answer to an invitation, a lobby command … each handled where
the rule sends it — or hands on a seat's proven mail, which its game handles
(`pbem.service.handle.game`).
"""

from __future__ import annotations

from sqlmodel import Session

from pbem.service import intake
from pbem.service.context import Context, Outcome
from pbem.service.handle import game
from pbem.store import models as m


def handle(ctx: Context, session: Session, row: m.Inbound) -> Outcome:
    """Take ``row`` through intake → its handler and mark it done; its final state.

    Writes nothing that is not rolled back with the transaction; the fault hook's steps
    ("read", "before-log", "before-render", "before-mark") fall where a crash is tested.
    """
    now = ctx.clock()
    assert row.id is not None
    ctx.fault("read")
    known = intake.identify(ctx, session, row, now)
    if isinstance(known, Outcome):
        return known
    return game.handle(ctx, session, row, known, now)
