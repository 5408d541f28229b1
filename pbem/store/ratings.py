"""The stored standings: the `Rating` lines, the `RatedGame` log and the `RatingTotal` count.

Every statement here goes to the database at once (never held back: see
`pbem.store._sql.WriteBehind.later`), and each is served by an index: a line by its key,
the top of the table by ``(rating, games)``, a rank by counting the lines above it on
that index, the count of rated games from its one row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import (
    Delete,
    Insert,
    Update,
    bindparam,
    delete,
    func,
    insert,
    or_,
    update,
)
from sqlmodel import Session, col, select

from pbem.store._sql import upsert
from pbem.store.lines import COUNTED
from pbem.store.lines import line_of as _line_of
from pbem.store.lines import rated_games as _rated_games
from pbem.store.lines import top_lines as _top_lines
from pbem.store.models import RatedGame, Rating, RatingTotal

_RATING = Rating.__table__  # type: ignore[attr-defined]
_TOTAL = RatingTotal.__table__  # type: ignore[attr-defined]
_RATED = RatedGame.__table__  # type: ignore[attr-defined]


def next_turn(session: Session) -> int:
    """Count one more rated game and return its number (its ``seq``).

    Takes the row lock of the count, held until the transaction ends: two transactions
    that rate games wait for each other here, before they read a line, so each reads the
    lines the other wrote. Adds the row first when it is missing (a table emptied by
    hand; two transactions that both find it missing add it once).
    """
    connection = session.connection()
    turn = connection.execute(_TAKE_TURN).scalar()
    if turn is None:
        connection.execute(upsert(session, _TOTAL).values(id=1, games=0).on_conflict_do_nothing())
        turn = connection.execute(_TAKE_TURN).scalar()
    assert turn is not None
    return int(turn)


_TAKE_TURN = (
    update(_TOTAL)
    .where(_TOTAL.c.id == 1)
    .values(games=_TOTAL.c.games + 1)
    .returning(_TOTAL.c.games)
)


def lines_of(session: Session, keys: Iterable[str]) -> dict[str, Rating]:
    """The stored lines of ``keys`` (those that have one)."""
    wanted = sorted(set(keys))
    rows = session.exec(select(Rating).where(col(Rating.key).in_(wanted))).all()
    return {row.key: row for row in rows}


def save_lines(
    session: Session,
    new: Sequence[Mapping[str, Any]],
    changed: Sequence[Mapping[str, Any]],
) -> None:
    """Insert the ``new`` lines and update the ``changed`` ones (by ``id``): each a mapping
    of every column (``id`` too, for a changed line)."""
    connection = session.connection()
    if new:
        connection.execute(insert(_RATING), [dict(v) for v in new])
    if changed:
        connection.execute(_update_line(), [{**v, "row_id": v["id"]} for v in changed])


@cache
def _update_line() -> Update:
    columns = ("name", "mu", "sigma", "rating", *COUNTED)
    return (
        update(_RATING)
        .where(_RATING.c.id == bindparam("row_id"))
        .values({name: bindparam(name) for name in columns})
    )


def log_rated(session: Session, game_id: int, seq: int, now: datetime) -> None:
    """Log ``game_id`` as the ``seq``-th rated game (IntegrityError if it is already)."""
    session.connection().execute(_LOG_RATED, {"game_id": game_id, "seq": seq, "rated_at": now})


_LOG_RATED: Insert = insert(_RATED)


def log_all_rated(session: Session, game_ids: Sequence[int], now: datetime) -> None:
    """Log ``game_ids`` as rated, in that order, after none (`clear` first), and count
    them."""
    connection = session.connection()
    rows = [
        {"game_id": game_id, "seq": seq, "rated_at": now}
        for seq, game_id in enumerate(game_ids, start=1)
    ]
    for start in range(0, len(rows), 5000):
        connection.execute(_LOG_RATED, rows[start : start + 5000])
    connection.execute(update(_TOTAL).where(_TOTAL.c.id == 1).values(games=len(rows)))


def rated_games(session: Session) -> int:
    """How many games the stored standings count."""
    return _rated_games(session.connection())


def top_lines(session: Session, limit: int | None) -> list[dict[str, Any]]:
    """The best ``limit`` lines (all of them for None), best first: `pbem.store.lines`."""
    return _top_lines(session.connection(), limit)


def line_of(session: Session, key: str) -> dict[str, Any] | None:
    """The line of ``key`` (as `top_lines` gives it), or None."""
    return _line_of(session.connection(), key)


def rank_of(session: Session, line: Mapping[str, Any]) -> int:
    """``line``'s place in the table (1: the best): one more than the lines before it,
    counted on the ``(rating, games)`` index."""
    better = session.exec(
        select(func.count()).select_from(Rating).where(col(Rating.rating) > line["rating"])
    ).one()
    level = session.exec(
        select(func.count())
        .select_from(Rating)
        .where(
            col(Rating.rating) == line["rating"],
            or_(
                col(Rating.games) > line["games"],
                (col(Rating.games) == line["games"]) & (col(Rating.key) < line["key"]),
            ),
        )
    ).one()
    return 1 + int(better) + int(level)


def clear(session: Session) -> None:
    """Forget every stored line and rated game (before a rebuild)."""
    connection = session.connection()
    for statement in _CLEAR:
        connection.execute(statement)
    connection.execute(insert(_TOTAL).values(id=1, games=0))


_CLEAR: tuple[Delete, ...] = (delete(_RATED), delete(_RATING), delete(_TOTAL))
