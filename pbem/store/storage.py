"""What the database stores, and how much: ``pbem db stats``.

`storage_stats` counts the stored mail by kind — received and outgoing, with their raw
bytes (``inbound_raw``, ``outbox_raw``) still kept or pruned (`pbem.store.retention`),
and those that must keep them (waiting to be processed, to be delivered or retried) —
with the raw bytes each kind holds; then each table's rows and the space it takes in the
database (SQLite's ``dbstat``, PostgreSQL's ``pg_total_relation_size``: indexes
included), and the database's size (SQLite: the file, its free pages among them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Connection, Engine, Table, case, func, select, text
from sqlmodel import SQLModel

from pbem.store.models import Inbound, InboundStatus, Outbox, OutboxStatus
from pbem.store.rawmail import INBOUND_RAW, OUTBOX_RAW

__all__ = ["Kind", "Storage", "storage_stats"]

_IN = Inbound.__table__  # type: ignore[attr-defined]
_OUT = Outbox.__table__  # type: ignore[attr-defined]


@dataclass
class Kind:
    """Rows of one kind and the bytes they take (None: the backend cannot tell)."""

    name: str
    rows: int
    bytes: int | None


@dataclass
class Storage:
    """`storage_stats`'s answer."""

    mail: list[Kind] = field(default_factory=list)
    tables: list[Kind] = field(default_factory=list)
    database_bytes: int = 0
    free_bytes: int | None = None


def _mail(
    connection: Connection, t: Table, kept: Table, waiting: list[str], label: str
) -> list[Kind]:
    """The mails of ``t`` by state, with the bytes ``kept`` (the table of their raw
    bytes, keyed by the mail's id) holds for them."""
    state = case(
        (t.c.pruned_at.is_not(None), "pruned"),
        (t.c.status.in_(waiting), "waiting"),
        else_="kept",
    )
    [key] = kept.primary_key.columns
    size = func.coalesce(func.sum(func.length(kept.c.raw)), 0)
    mails = t.outerjoin(kept, key == t.c.id)
    rows = connection.execute(
        select(state, func.count(), size).select_from(mails).group_by(state)
    ).all()
    found = {str(name): (int(n), int(size)) for name, n, size in rows}
    words = {
        "waiting": "raw kept: not done with",
        "kept": "raw kept: within retention",
        "pruned": "raw pruned",
    }
    return [
        Kind(f"{label} ({words[key]})", *found.get(key, (0, 0)))
        for key in ("waiting", "kept", "pruned")
    ]


def storage_stats(db: Engine) -> Storage:
    """Count what ``db`` stores (see the module's docstring)."""
    out = Storage()
    with db.connect() as connection:
        waiting_in = [InboundStatus.PENDING.value]
        out.mail += _mail(connection, _IN, INBOUND_RAW, waiting_in, "received mail")
        waiting_out = [
            OutboxStatus.PENDING.value,
            OutboxStatus.SENDING.value,
            OutboxStatus.FAILED.value,
        ]
        out.mail += _mail(connection, _OUT, OUTBOX_RAW, waiting_out, "outgoing mail")
        sizes = _table_sizes(connection)
        for table in sorted(SQLModel.metadata.tables.values(), key=lambda t: t.name):
            rows = int(connection.execute(select(func.count()).select_from(table)).scalar_one())
            out.tables.append(Kind(table.name, rows, sizes.get(table.name)))
        if connection.dialect.name == "sqlite":
            page = int(connection.exec_driver_sql("PRAGMA page_size").scalar_one())
            pages = int(connection.exec_driver_sql("PRAGMA page_count").scalar_one())
            free = int(connection.exec_driver_sql("PRAGMA freelist_count").scalar_one())
            out.database_bytes, out.free_bytes = page * pages, page * free
        else:
            out.database_bytes = int(
                connection.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
            )
    return out


def _table_sizes(connection: Connection) -> dict[str, int]:
    """Bytes per table, its indexes included, where the backend can tell."""
    if connection.dialect.name == "postgresql":
        rows = connection.execute(
            text(
                "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE c.relkind = 'r' AND n.nspname = current_schema()"
            )
        ).all()
        return {str(name): int(size) for name, size in rows}
    try:
        rows = connection.exec_driver_sql(
            "SELECT coalesce(m.tbl_name, d.name), sum(d.pgsize) FROM dbstat d "
            "LEFT JOIN sqlite_schema m ON m.name = d.name GROUP BY 1"
        ).all()
    except Exception:  # a SQLite built without dbstat
        return {}
    return {str(name): int(size) for name, size in rows}
