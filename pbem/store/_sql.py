"""Small helpers for statements that differ between PostgreSQL and SQLite."""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import Update, bindparam, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session, SQLModel


def dialect_name(session: Session) -> str:
    """'postgresql' or 'sqlite': the backend `session` talks to."""
    return session.get_bind().dialect.name


def upsert(session: Session, table: Any) -> postgresql.Insert | sqlite.Insert:
    """An INSERT for `table` that supports ``ON CONFLICT`` on the session's backend."""
    return insert_for(dialect_name(session), table)


def insert_for(dialect: str, table: Any) -> postgresql.Insert | sqlite.Insert:
    """An INSERT for `table` that supports ``ON CONFLICT`` on backend `dialect`.

    Statements built once per backend and executed with parameters skip SQLAlchemy's
    per-call statement building: the hot path of the service uses them.
    """
    if dialect == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def is_postgresql(session: Session) -> bool:
    """Whether the session talks to PostgreSQL (row locks, SKIP LOCKED)."""
    return dialect_name(session) == "postgresql"


# PostgreSQL errors that only say another transaction was in the way: a lock not granted
# at once (NOWAIT), a deadlock broken, a serialization failure. Trying again later works.
_TRANSIENT_SQLSTATES = frozenset({"55P03", "40P01", "40001"})


def is_transient(exc: BaseException) -> bool:
    """Whether a database error only reports a clash with a concurrent transaction."""
    orig = getattr(exc, "orig", None)
    return getattr(orig, "sqlstate", None) in _TRANSIENT_SQLSTATES


def update_row(session: Session, row: SQLModel, **values: Any) -> None:
    """Write `values` to `row`'s columns with one UPDATE by primary key, now.

    Unlike changing attributes and flushing, only the named columns are sent and the ORM's
    unit of work is not involved; `row`'s attributes are set to the new values as if they
    had been loaded, so it stays current and is not left dirty.
    """
    table = row.__table__  # type: ignore[attr-defined]
    session.connection().execute(
        _update_by_id(table, tuple(sorted(values))),
        {"row_id": row.id, **values},  # type: ignore[attr-defined]
    )
    for name, value in values.items():
        set_committed_value(row, name, value)


@cache
def _update_by_id(table: Any, columns: tuple[str, ...]) -> Update:
    return (
        update(table)
        .where(table.c.id == bindparam("row_id"))
        .values({name: bindparam(name) for name in columns})
    )
