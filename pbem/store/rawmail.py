"""The raw bytes of stored mail, in tables of their own: ``inbound_raw`` and
``outbox_raw``, one row per mail keyed by the mail's id (``inbound.id``, ``outbox.id``),
while the bytes are kept.

A mail's row (``inbound``, ``outbox``: Message-ID, sender or recipient, subject, status,
times) stays for good; its bytes go when it is pruned (`pbem.store.retention`), which
deletes the whole row of bytes. On SQLite that frees whole pages (the deleted rows' leaf
pages merge, their overflow pages go to the free list) instead of leaving a short row on
each page of the mail's table; on PostgreSQL the bytes' TOAST storage is freed as before.

Reading: ``Inbound.raw`` and ``Outbox.raw`` are read-only attributes of the rows (a
scalar subquery on this table, loaded with the row; ``b""`` once pruned), so every reader
of a stored mail's bytes reads them here. Writing goes through the functions below:
`write_inbound`/`write_outbox` when a mail is stored, `replace_inbound`/`replace_outbox`
when a mail is rewritten (``pbem player forget``); setting the attribute on a row writes
nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, LargeBinary, bindparam, func, insert, literal, select, update
from sqlalchemy.orm import column_property
from sqlmodel import Field, SQLModel

from pbem.store.types import ID_TYPE

__all__ = [
    "InboundRaw",
    "OutboxRaw",
    "raw_property",
    "replace_inbound",
    "replace_outbox",
    "write_inbound",
    "write_outbox",
]


class InboundRaw(SQLModel, table=True):
    """A received mail's raw bytes, as received, while they are kept."""

    __tablename__ = "inbound_raw"

    inbound_id: int = Field(
        primary_key=True,
        foreign_key="inbound.id",
        sa_type=ID_TYPE,
        sa_column_kwargs={"autoincrement": False},
    )
    raw: bytes = Field(sa_type=LargeBinary)


class OutboxRaw(SQLModel, table=True):
    """A queued mail's raw bytes, as rendered, while they are kept."""

    __tablename__ = "outbox_raw"

    outbox_id: int = Field(
        primary_key=True,
        foreign_key="outbox.id",
        sa_type=ID_TYPE,
        sa_column_kwargs={"autoincrement": False},
    )
    raw: bytes = Field(sa_type=LargeBinary)


INBOUND_RAW = InboundRaw.__table__  # type: ignore[attr-defined]
OUTBOX_RAW = OutboxRaw.__table__  # type: ignore[attr-defined]


def raw_property(mail_id: Any, outgoing: bool) -> Any:
    """The read-only ``raw`` attribute of a mail's row: its bytes from the table of raw
    bytes (``b""`` when there are none: pruned), loaded with the row. Kept after a flush
    of the row's other columns, which never change the bytes."""
    table = OUTBOX_RAW if outgoing else INBOUND_RAW
    key = table.c.outbox_id if outgoing else table.c.inbound_id
    bytes_of = select(table.c.raw).where(key == mail_id).correlate_except(table).scalar_subquery()
    return column_property(
        func.coalesce(bytes_of, literal(b"", LargeBinary)).label(None), expire_on_flush=False
    )


_WRITE_IN = insert(INBOUND_RAW)
_WRITE_OUT = insert(OUTBOX_RAW)
_REPLACE_IN = (
    update(INBOUND_RAW)
    .where(INBOUND_RAW.c.inbound_id == bindparam("mail_id"))
    .values(raw=bindparam("bytes"))
)
_REPLACE_OUT = (
    update(OUTBOX_RAW)
    .where(OUTBOX_RAW.c.outbox_id == bindparam("mail_id"))
    .values(raw=bindparam("bytes"))
)


def write_inbound(connection: Connection, mails: Iterable[tuple[int, bytes]]) -> None:
    """Store the bytes of new received mails ``(inbound id, raw)``, in one statement."""
    rows = [{"inbound_id": mail_id, "raw": raw} for mail_id, raw in mails]
    if rows:
        connection.execute(_WRITE_IN, rows)


def write_outbox(connection: Connection, mails: Iterable[tuple[int, bytes]]) -> None:
    """Store the bytes of newly queued mails ``(outbox id, raw)``, in one statement."""
    rows = [{"outbox_id": mail_id, "raw": raw} for mail_id, raw in mails]
    if rows:
        connection.execute(_WRITE_OUT, rows)


def replace_inbound(connection: Connection, mail_id: int, raw: bytes) -> None:
    """Rewrite the kept bytes of received mail ``mail_id`` (none kept: nothing to do)."""
    connection.execute(_REPLACE_IN, {"mail_id": mail_id, "bytes": raw})


def replace_outbox(connection: Connection, mail_id: int, raw: bytes) -> None:
    """Rewrite the kept bytes of queued mail ``mail_id`` (none kept: nothing to do)."""
    connection.execute(_REPLACE_OUT, {"mail_id": mail_id, "bytes": raw})
