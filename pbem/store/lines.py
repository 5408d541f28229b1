"""The stored standings' lines as they are read, in SQLAlchemy Core alone.

``pbem standings`` reads every line of a table that may hold tens of thousands and has
nothing else to do: it should not pay for the ORM (SQLModel and the table models, about
a third of its time), so the statements that read the table are built here from the
tables' names and the columns read. `pbem.store.ratings` (models, writes, ranks) uses
the same statements; ``tests/pbem/store/test_lines.py`` checks the names against the
models.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Select, column, select, table

COUNTED = (
    "games",
    "wins",
    "skunks",
    "skunked",
    "hands",
    "cribs",
    "pegging",
    "hand",
    "crib",
)
"""The columns of a line that count (beside the rating itself)."""

LINE = (
    "key",
    "player_id",
    "name",
    "computer",
    "mu",
    "sigma",
    "rating",
    *COUNTED,
)
"""The columns `top_lines` and `line_of` read, then the player's chosen name."""

RATING = table("rating", *(column(name) for name in LINE))
PLAYER = table("player", column("id"), column("display_name"))
TOTAL = table("rating_total", column("id"), column("games"))


def lines() -> Select[Any]:
    """Every line with its player's chosen name (None for a computer's line)."""
    return select(*(RATING.c[name] for name in LINE), PLAYER.c.display_name).join_from(
        RATING, PLAYER, PLAYER.c.id == RATING.c.player_id, isouter=True
    )


def top_lines(connection: Connection, limit: int | None) -> list[dict[str, Any]]:
    """The best ``limit`` lines (all of them for None), in the table's order (on the
    ``(rating, games)`` index): each the columns of `LINE` and ``display_name``, read as
    plain rows, not objects."""
    statement = lines().order_by(RATING.c.rating.desc(), RATING.c.games.desc(), RATING.c.key)
    if limit is not None:
        statement = statement.limit(limit)
    names = (*LINE, "display_name")
    return [dict(zip(names, row, strict=True)) for row in connection.execute(statement)]


def line_of(connection: Connection, key: str) -> dict[str, Any] | None:
    """The line of ``key`` (as `top_lines` gives it), or None."""
    found = connection.execute(lines().where(RATING.c.key == key)).mappings().first()
    return None if found is None else dict(found)


def rated_games(connection: Connection) -> int:
    """How many games the stored standings count."""
    total = connection.execute(select(TOTAL.c.games).where(TOTAL.c.id == 1)).scalar()
    return int(total or 0)
