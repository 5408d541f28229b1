"""standings (mail): the answer to ``standings`` — the top of the table and the asker's line.

The table itself is kept by `pbem.service.game.standings`; this module only mails it,
as an answer to the writer (`pbem.service.send.outside.answer`).
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session

from pbem.render.standings import render_standings
from pbem.service.context import (
    Context,
)
from pbem.service.game.standings import TOP, standings_for
from pbem.service.send.outside import answer
from pbem.store import models as m


def send_standings(
    ctx: Context,
    session: Session,
    player: m.Player,
    inbound_id: int,
    now: datetime,
    answering: str | None,
) -> None:
    """Answer ``standings`` to the asker only: the top of the table and their line."""
    mail = render_standings(standings_for(ctx, session, player.email, TOP), player.email, TOP)
    answer(ctx, session, player, inbound_id, "standings", mail, now, answering)
