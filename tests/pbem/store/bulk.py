"""Many rows in the service's tables at once, made by the database itself (one
``INSERT … SELECT`` over a series per table), for the query plan test and the scale
benchmark: finished games with their seats and moves, players, their ratings, old mail
in and out (pruned: their raw bytes gone). Every row is valid for its table's
constraints; none is a game to replay.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import Boolean, Connection, DateTime, Float, Integer, LargeBinary, Text
from sqlmodel import SQLModel

import pbem.store.models  # noqa: F401  (the tables)


@dataclass(frozen=True)
class Sizes:
    """How many rows of each kind."""

    games: int
    players: int
    actions_per_game: int = 5
    mails: int = 0  # inbound and outbox rows each

    @property
    def actions(self) -> int:
        return self.games * self.actions_per_game


def _literals(dialect: str) -> dict[str, str]:
    if dialect == "postgresql":
        return {
            "when": "TIMESTAMPTZ '2020-01-01 00:00:00+00'",
            "false": "false",
            "true": "true",
            "bytes": "'\\x00'::bytea",
        }
    return {"when": "'2020-01-01 00:00:00.000000'", "false": "0", "true": "1", "bytes": "X'00'"}


def _insert(
    connection: Connection, table: str, count: int, given: Mapping[str, str], offset: int = 0
) -> None:
    """Insert ``count`` rows into ``table``, row ``i`` (from ``offset + 1``) made of the
    ``given`` expressions of ``i`` and a plain value for every other required column."""
    dialect = connection.dialect.name
    lit = _literals(dialect)
    columns: dict[str, str] = {}
    for column in SQLModel.metadata.tables[table].columns:
        if column.name in given:
            columns[column.name] = given[column.name].format(**lit)
            continue
        if column.nullable or column.server_default is not None or column.primary_key:
            continue
        kind = column.type
        if isinstance(kind, Boolean):
            columns[column.name] = lit["false"]
        elif isinstance(kind, DateTime) or "DateTime" in type(kind).__name__:
            columns[column.name] = lit["when"]
        elif isinstance(kind, LargeBinary):
            columns[column.name] = lit["bytes"]
        elif isinstance(kind, Float):
            columns[column.name] = "1.0"
        elif isinstance(kind, Integer):
            columns[column.name] = "0"
        elif isinstance(kind, Text):
            columns[column.name] = "'x'"
        else:
            columns[column.name] = f"'{table}' || i"
    names = ", ".join(columns)
    values = ", ".join(columns.values())
    if dialect == "postgresql":
        sql = (
            f"INSERT INTO {table} ({names}) SELECT {values} "
            f"FROM generate_series({offset + 1}, {offset + count}) AS s(i)"
        )
    else:
        sql = (
            f"INSERT INTO {table} ({names}) WITH RECURSIVE s(i) AS (SELECT {offset + 1} "
            f"UNION ALL SELECT i + 1 FROM s WHERE i < {offset + count}) SELECT {values} FROM s"
        )
    if dialect == "postgresql":
        sql = sql.replace("%", "%%")  # the driver's placeholders: '%' is '%%'
    connection.exec_driver_sql(sql)


def fill(connection: Connection, sizes: Sizes, *, base: int = 1_000_000) -> None:
    """Add ``sizes`` of history: ids from ``base`` on (clear of the rows a test makes)."""
    b = base
    _insert(
        connection,
        "player",
        sizes.players,
        {"id": f"{b} + i", "email": "'bulk' || i || '@bulk.example'", "display_name": "'B' || i"},
    )
    _insert(
        connection,
        "game",
        sizes.games,
        {
            "id": f"{b} + i",
            "status": "'finished'",
            "settings": '\'{{"players": 2, "target": 121}}\'',
            "seed": "'bulk' || i",
            "finished_at": "{when}",
            "action_count": str(sizes.actions_per_game),
            "outcome": "'{{}}'",
        },
    )
    players = sizes.players
    for seat in (0, 1):
        _insert(
            connection,
            "seat",
            sizes.games,
            {
                "id": f"{b} + i * 2 + {seat}",
                "game_id": f"{b} + i",
                "seat": str(seat),
                "player_id": f"{b} + 1 + ((i * 2 + {seat}) % {players})",
                "token": f"'bulk{seat}-' || i",
            },
        )
    per = sizes.actions_per_game
    _insert(
        connection,
        "action_log",
        sizes.actions,
        {
            "id": f"{b} + i",
            "game_id": f"{b} + 1 + ((i - 1) / {per})",
            "seq": f"(i - 1) % {per}",
            "seat": "i % 2",
            "action": '\'{{"type": "go"}}\'',
        },
    )
    _insert(
        connection,
        "rated_game",
        sizes.games,
        {"game_id": f"{b} + i", "seq": f"{b} + i", "rated_at": "{when}"},
    )
    _insert(
        connection,
        "rating",
        players,
        {
            "id": f"{b} + i",
            "key": "'bulk' || i || '@bulk.example'",
            "player_id": f"{b} + i",
            "name": "'B' || i",
            "mu": "25.0 + (i % 1000) / 100.0",
            "sigma": "5.0",
            "rating": "10.0 + (i % 1000) / 100.0",
            "games": "1 + i % 50",
        },
    )
    if sizes.mails:
        _insert(
            connection,
            "inbound",
            sizes.mails,
            {
                "id": f"{b} + i",
                "message_key": "'bulk' || i",
                "status": "'applied'",
                "sender": "'bulk' || (i % 1000) || '@bulk.example'",
                "game_id": f"{b} + 1 + (i % {sizes.games})",
                "processed_at": "{when}",
                "pruned_at": "{when}",  # old mail: its raw bytes long gone
            },
        )
        _insert(
            connection,
            "outbox",
            sizes.mails,
            {
                "id": f"{b} + i",
                "message_id": "'bulk' || i || '@bulk.example'",
                "status": "'sent'",
                "game_id": f"{b} + 1 + (i % {sizes.games})",
                "sent_at": "{when}",
                "pruned_at": "{when}",
            },
        )
