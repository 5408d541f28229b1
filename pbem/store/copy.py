"""Moving a whole installation from one database to another (``pbem db copy``).

`copy_database` brings the target's schema to the newest revision, refuses a target
that holds any row (unless told to empty it), then copies every table in dependency
order (a row's foreign keys point at rows already copied), in batches of `BATCH` rows
ordered by id, through the tables' own column types (so times, JSON and booleans are
converted between backends as the service reads and writes them). On PostgreSQL the id
sequences are then set past the largest copied id. The whole copy is one transaction on
the target: a copy that fails leaves it as it was.

Checking that the copied games replay and their deals verify is the caller's
(`pbem.service.audit`), which needs the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import Connection, Engine, Table, func, select, text
from sqlmodel import SQLModel

import pbem.store.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from pbem.store.db import check_schema, migrate
from pbem.store.errors import StoreError

BATCH = 500
"""Rows read and written at a time."""


class CopyError(StoreError):
    """A copy that cannot be made (the message says why)."""


@dataclass
class CopyReport:
    """The rows copied per table, in the order they were copied."""

    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def tables() -> list[Table]:
    """Every table of the service, each after the tables its foreign keys name."""
    return list(SQLModel.metadata.sorted_tables)


def row_counts(connection: Connection) -> dict[str, int]:
    """The number of rows of each table."""
    return {
        table.name: int(connection.execute(select(func.count()).select_from(table)).scalar_one())
        for table in tables()
    }


def copy_database(
    source: Engine,
    target: Engine,
    *,
    replace: bool = False,
    progress: Callable[[str, int], None] | None = None,
) -> CopyReport:
    """Copy every row of ``source`` into ``target``.

    Raises CopyError when the source's schema is not current, when source and target are
    the same database, or when the target holds rows and ``replace`` is not set (with
    ``replace`` they are deleted first, in the same transaction as the copy).
    """
    try:
        check_schema(source)
    except StoreError as exc:
        raise CopyError(f"the source database: {exc}") from exc
    if source.url == target.url:
        raise CopyError("the source and the target are the same database")
    migrate(target)
    report = CopyReport()
    with source.connect() as reading, target.connect() as writing, writing.begin():
        if writing.dialect.name == "postgresql":
            # Nobody else may write while the copy is under way.
            for table in tables():
                writing.execute(text(f'LOCK TABLE "{table.name}" IN EXCLUSIVE MODE'))
        held = {name: n for name, n in row_counts(writing).items() if n}
        if held.get("rating_total") == 1 and _fresh_total(writing):
            del held["rating_total"]  # the row a new schema is made with, counting nothing
        if held and not replace:
            listed = ", ".join(f"{name} {n}" for name, n in held.items())
            raise CopyError(
                f"the target database is not empty ({listed}); "
                "give --replace to delete its rows first"
            )
        for table in reversed(tables()):
            writing.execute(table.delete())
        for table in tables():
            report.counts[table.name] = _copy_table(reading, writing, table)
            if progress is not None:
                progress(table.name, report.counts[table.name])
        if writing.dialect.name == "postgresql":
            _reset_sequences(writing)
    return report


def _fresh_total(writing: Connection) -> bool:
    """Whether the target's one ``rating_total`` row is the one its migration made: no
    game rated yet."""
    games = writing.execute(text("SELECT games FROM rating_total")).scalar_one()
    return int(games) == 0


def _copy_table(reading: Connection, writing: Connection, table: Table) -> int:
    """Copy ``table`` in batches, in the order of its primary key (an integer, or the
    counter's name for ``event_count``)."""
    [key] = table.primary_key.columns  # every table of the service has a one-column key
    copied = 0
    last: object = None
    while True:
        query = select(table).order_by(key).limit(BATCH)
        if last is not None:
            query = query.where(key > last)
        rows = [dict(row._mapping) for row in reading.execute(query)]
        if not rows:
            return copied
        writing.execute(table.insert(), rows)
        copied += len(rows)
        last = rows[-1][key.name]


def _reset_sequences(writing: Connection) -> None:
    """Set each id sequence so that the next row gets the largest copied id plus one."""
    for table in tables():
        if "id" not in table.c:
            continue  # keyed by another table's id (rated_game): no sequence of its own
        sequence = writing.execute(
            text("SELECT pg_get_serial_sequence(:table, 'id')"), {"table": table.name}
        ).scalar()
        if sequence is None:
            continue
        top = writing.execute(select(func.max(table.c.id))).scalar()
        if top is None:
            writing.execute(text("SELECT setval(:seq, 1, false)"), {"seq": sequence})
        else:
            writing.execute(text("SELECT setval(:seq, :top, true)"), {"seq": sequence, "top": top})
