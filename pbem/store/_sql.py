"""Small helpers for statements that differ between PostgreSQL and SQLite."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import Insert, Update, bindparam, event, update
from sqlalchemy.orm import Mapper
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session, SQLModel

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql, sqlite


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
    # Imported here: the dialect a database does not use is never loaded (PostgreSQL's
    # brings every one of its drivers' modules).
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)


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
    """Write `values` to `row`'s columns with one UPDATE by primary key, now (or, while
    the session holds writes back, with the batch's other writes: see `WriteBehind`).

    Unlike changing attributes and flushing, only the named columns are sent and the ORM's
    unit of work is not involved; `row`'s attributes are set to the new values as if they
    had been loaded, so it stays current and is not left dirty.
    """
    table = row.__table__  # type: ignore[attr-defined]
    behind = write_behind(session)
    if behind is not None:
        behind.update(table, row.id, values)  # type: ignore[attr-defined]
    else:
        session.connection().execute(
            _update_by_id(table, tuple(sorted(values))),
            {"row_id": row.id, **values},  # type: ignore[attr-defined]
        )
    for name, value in values.items():
        set_committed_value(row, name, value)


class WriteConflict(Exception):
    """Held-back writes found a row not as expected (a counter another transaction moved,
    a row gone): roll the transaction back."""


@dataclass
class _Pending:
    values: dict[str, Any]
    expected: tuple[str, Any] | None = None  # (column, value) the row must still hold


@dataclass
class WriteBehind:
    """The writes of a batch of messages, held back and sent just before the commit in as
    few statements as there are kinds of write (one executemany per table and set of
    columns), instead of one statement per write.

    Several updates of one row merge into one. The rows the session has loaded carry the
    new values at once (`update_row`), and a row the session loads (again) from the
    database while writes are held back gets them laid over it (`overlay`), so every read
    in the batch sees them. `mark`/`rewind` drop the writes of one message that failed.
    """

    updates: dict[tuple[Any, Any], _Pending] = field(default_factory=dict)
    inserts: list[tuple[Insert, dict[str, Any]]] = field(default_factory=list)
    # Writes that read what they change (a rating update): run last, in order.
    calls: list[Callable[[Session], None]] = field(default_factory=list)

    def update(
        self,
        table: Any,
        row_id: Any,
        values: dict[str, Any],
        expected: tuple[str, Any] | None = None,
    ) -> None:
        pending = self.updates.get((table, row_id))
        if pending is None:
            self.updates[(table, row_id)] = _Pending(dict(values), expected)
            return
        pending.values.update(values)
        if pending.expected is None:
            pending.expected = expected

    def insert(self, statement: Insert, rows: list[dict[str, Any]]) -> None:
        self.inserts.extend((statement, row) for row in rows)

    def later(self, call: Callable[[Session], None]) -> None:
        """Run ``call(session)`` when the writes are sent, after the updates and inserts
        (dropped with its message's other writes by `rewind`)."""
        self.calls.append(call)

    def overlay(self, row: SQLModel) -> None:
        """Set the held-back values of `row` on it again (after a reload)."""
        pending = self.updates.get((row.__table__, row.id))  # type: ignore[attr-defined]
        if pending is not None:
            for name, value in pending.values.items():
                set_committed_value(row, name, value)

    def mark(self) -> tuple[dict[tuple[Any, Any], _Pending], int, int]:
        """A point to `rewind` to."""
        copied = {key: _Pending(dict(p.values), p.expected) for key, p in self.updates.items()}
        return copied, len(self.inserts), len(self.calls)

    def rewind(self, mark: tuple[dict[tuple[Any, Any], _Pending], int, int]) -> None:
        """Drop every write held back since `mark`."""
        self.updates = mark[0]
        del self.inserts[mark[1] :]
        del self.calls[mark[2] :]

    def flush(self, session: Session) -> None:
        """Send every held-back write, then hold nothing.

        Raises WriteConflict if an expected value no longer held (nothing is undone: roll
        the transaction back).
        """
        if not self.updates and not self.inserts and not self.calls:
            return
        connection = session.connection()
        groups: dict[tuple[Any, tuple[str, ...], str | None], list[dict[str, Any]]] = {}
        for (table, row_id), pending in self.updates.items():
            column = pending.expected[0] if pending.expected else None
            params = {"row_id": row_id, **pending.values}
            if pending.expected is not None:
                params["expected"] = pending.expected[1]
            groups.setdefault((table, tuple(sorted(pending.values)), column), []).append(params)
        for (table, columns, column), rows in groups.items():
            statement = _update_by_id(table, columns, column)
            result = connection.execute(statement, rows)
            if column is not None and result.rowcount != len(rows):
                raise WriteConflict(
                    f"{table.name}: {len(rows) - result.rowcount} of {len(rows)} rows had "
                    f"moved on ({column})"
                )
        by_statement: dict[Insert, list[dict[str, Any]]] = {}
        for inserting, row in self.inserts:
            by_statement.setdefault(inserting, []).append(row)
        for inserting, rows in by_statement.items():
            connection.execute(inserting, rows)
        calls, self.calls = self.calls, []
        for call in calls:
            call(session)
        self.updates = {}
        self.inserts = []


@event.listens_for(Mapper, "load")
def _overlay_loaded(target: Any, context: Any) -> None:
    session = getattr(context, "session", None)
    behind = session.info.get("write_behind") if session is not None else None
    if behind is not None:
        behind.overlay(target)


@event.listens_for(Mapper, "refresh")
def _overlay_refreshed(target: Any, context: Any, attrs: Any) -> None:
    _overlay_loaded(target, context)


def write_behind(session: Session) -> WriteBehind | None:
    """The session's held-back writes, if it holds writes back."""
    return session.info.get("write_behind")


def hold_writes(session: Session) -> WriteBehind:
    """Hold the session's writes back until `WriteBehind.flush` (see `WriteBehind`)."""
    behind = WriteBehind()
    session.info["write_behind"] = behind
    return behind


def release_writes(session: Session) -> None:
    """Stop holding writes back (flush first: what is held is dropped)."""
    session.info.pop("write_behind", None)


@cache
def _update_by_id(table: Any, columns: tuple[str, ...], expected: str | None = None) -> Update:
    """UPDATE table SET columns WHERE id = :row_id (AND expected = :expected)."""
    where = [table.c.id == bindparam("row_id")]
    if expected is not None:
        where.append(table.c[expected] == bindparam("expected"))
    return update(table).where(*where).values({name: bindparam(name) for name in columns})
