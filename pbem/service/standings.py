"""standings: the finished games as the standings' records, and the ``standings`` mail.

Every finished game is replayed (or taken from the game cache) for its events; the
records go to the pure `pbem.ratings.compute_standings`, which orders them by end time
and id, so the table is the same however often it is recomputed. A computer seat is the
pseudo-player of its level (`pbem.ratings.computer_key`).
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, col, select

from pbem.ratings import GameRecord, Place, Standings, compute_standings, computer_key, record_of
from pbem.render.standings import render_standings
from pbem.service import notify
from pbem.service.context import Context, is_computer, load_game, seats_of
from pbem.store import models as m

TOP = 10
"""How many lines the ``standings`` mail shows (and the asker's own)."""


def finished_records(ctx: Context, session: Session) -> list[GameRecord]:
    """Every finished game's record, in order of (end time, id)."""
    from pbem.service.play import computer_level

    rows = session.exec(
        select(m.Game)
        .where(m.Game.status == m.GameStatus.FINISHED.value)
        .order_by(col(m.Game.finished_at), col(m.Game.id))
    ).all()
    out: list[GameRecord] = []
    for game_row in rows:
        assert game_row.id is not None
        game = load_game(ctx, session, game_row)
        if not game.is_over:
            continue
        places = []
        for seated in seats_of(session, game_row.id):
            if is_computer(game_row, seated.seat.seat):
                level = computer_level(game_row)
                places.append(Place(computer_key(level), f"Computer ({level})", computer=True))
            else:
                places.append(Place(seated.player.email, seated.name))
        when = game_row.finished_at or game_row.updated_at
        out.append(record_of(game_row.id, when, game, places))
    return out


def current_standings(ctx: Context, session: Session) -> Standings:
    return compute_standings(finished_records(ctx, session))


def send_standings(
    ctx: Context,
    session: Session,
    player: m.Player,
    inbound_id: int,
    now: datetime,
    answering: str | None,
) -> None:
    """Answer ``standings`` to the asker only: the top of the table and their line."""
    mail = render_standings(current_standings(ctx, session), player.email, TOP)
    notify.answer(ctx, session, player, inbound_id, "standings", mail, now, answering)
