"""The flow of one stored message through the stages, in the caller's transaction."""

from __future__ import annotations

from sqlmodel import Session

from pbem.service import cutting, intake, notify, play
from pbem.service.context import Context, Outcome, finish
from pbem.store import models as m


def handle(ctx: Context, session: Session, row: m.Inbound) -> Outcome:
    """Take ``row`` through intake → play → notify and mark it done; its final state.

    Writes nothing that is not rolled back with the transaction; the fault hook's steps
    ("read", "before-log", "before-render", "before-mark") fall where a crash is tested.
    """
    now = ctx.clock()
    assert row.id is not None
    ctx.fault("read")
    known = intake.identify(ctx, session, row, now)
    if isinstance(known, Outcome):
        return known
    if known.game_row.seed is None:  # a fair game not dealt: waiting for the cuts
        move = cutting.play_cut(ctx, session, known, known.message_id)
        cutting.answer_cut(ctx, session, move, row.id, now)
        status, reason, applied = cutting.verdict(move)
        return finish(
            ctx,
            session,
            row,
            status,
            reason,
            sender=known.sender,
            game_id=known.game_row.id,
            applied=applied,
        )
    move = play.play(ctx, session, known)
    if move.actions:
        ctx.fault("before-log")
        play.record(ctx, session, move, row.id, now)
        ctx.fault("before-render")
    notify.answer_move(ctx, session, move, row.id, now)
    status, reason, applied = play.verdict(move)
    if move.actions:
        ctx.fault("before-mark")
    return finish(
        ctx,
        session,
        row,
        status,
        reason,
        sender=known.sender,
        game_id=known.game_row.id,
        applied=applied,
    )
