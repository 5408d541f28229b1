"""site: what ``pbem site`` needs to know to remake only the pages that changed.

A finished game's pages (its replay page, its archive, its line of the index) change
only when the game row does or when a player at it changes their name: `finished_stamps`
reads that for every finished game in one query of a few columns (no game replayed), and
the command remakes the pages of the games whose stamp differs from the one it wrote
down last time.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from sqlalchemy import select
from sqlmodel import Session, col

from pbem.store import models as m


def finished_stamps(session: Session) -> list[tuple[int, datetime | None, str]]:
    """Every finished game, newest first: (id, end time, stamp). The stamp is a digest
    of what its pages show that can change: the row's last change, its state, and the
    chosen names of its players."""
    rows = session.execute(
        select(
            col(m.Game.id),
            col(m.Game.finished_at),
            col(m.Game.updated_at),
            col(m.Game.state_hash),
            col(m.Seat.seat),
            col(m.Player.id),
            col(m.Player.display_name),
        )
        .join(m.Seat, col(m.Seat.game_id) == col(m.Game.id))
        .join(m.Player, col(m.Player.id) == col(m.Seat.player_id))
        .where(col(m.Game.status) == m.GameStatus.FINISHED.value)
        .order_by(col(m.Game.id), col(m.Seat.seat))
    ).all()
    parts: dict[int, list[str]] = {}
    ended: dict[int, datetime | None] = {}
    for game_id, finished_at, updated_at, state_hash, seat, player_id, name in rows:
        assert game_id is not None
        if game_id not in parts:
            parts[game_id] = [updated_at.isoformat(), state_hash or ""]
            ended[game_id] = finished_at
        parts[game_id].append(f"{seat}:{player_id}:{name or ''}")
    out = [
        (game_id, ended[game_id], hashlib.sha256("\n".join(p).encode()).hexdigest()[:32])
        for game_id, p in parts.items()
    ]
    out.sort(key=lambda row: (row[1] is not None, row[1] or datetime.min, row[0]), reverse=True)
    return out
