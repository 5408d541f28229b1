"""The index of stored mail by the mailboxes it names (table ``mail_name``).

Every mail stored, received (`pbem.store.inbound`) or queued (`pbem.store.outbox`), gets
one row per mailbox it names (`pbem.mail.named.named_mailboxes`), in the transaction
that stores it: ``pbem player forget`` then reads the rows of one player's mailbox, not
every stored mail. A mail that names too many mailboxes to list has one row under
`MANY`, which every forgetting reads.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from sqlalchemy import Connection, Index, bindparam, insert, select
from sqlmodel import Field, SQLModel

from pbem.mail.named import MANY, fold_mailbox, named_mailboxes
from pbem.store.types import ID_TYPE

__all__ = ["MANY", "MailName", "index_inbound", "index_outbox", "mail_naming"]


class MailName(SQLModel, table=True):
    """One mailbox a stored mail names: the mail is an ``inbound`` or an ``outbox`` row."""

    __tablename__ = "mail_name"
    __table_args__ = (Index(None, "mailbox"),)

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    mailbox: str
    inbound_id: int | None = Field(default=None, foreign_key="inbound.id", sa_type=ID_TYPE)
    outbox_id: int | None = Field(default=None, foreign_key="outbox.id", sa_type=ID_TYPE)


_TABLE = MailName.__table__  # type: ignore[attr-defined]
_INSERT = insert(_TABLE)


def _rows(
    column: str, mails: Iterable[tuple[int, bytes, Sequence[str], Collection[str]]]
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for row_id, raw, extra, own in mails:
        named = named_mailboxes(raw, own)
        if MANY not in named:
            named.update(fold_mailbox(box) for box in extra if box)
        other = "outbox_id" if column == "inbound_id" else "inbound_id"
        rows += [{"mailbox": box, column: row_id, other: None} for box in sorted(named)]
    return rows


def index_inbound(
    connection: Connection, mails: Iterable[tuple[int, bytes]], own: Collection[str] = ()
) -> int:
    """Index received mails ``(inbound id, raw)``, but the mailboxes of ``own`` (the
    service's addresses); the rows written."""
    rows = _rows("inbound_id", ((i, raw, (), own) for i, raw in mails))
    if rows:
        connection.execute(_INSERT, rows)
    return len(rows)


def index_outbox(connection: Connection, mails: Iterable[tuple[int, bytes, str, str]]) -> int:
    """Index queued mails ``(outbox id, raw, recipient, sender)``: the mailboxes the mail
    names and its recipient, but its sender's (the service's own); the rows written."""
    rows = _rows("outbox_id", ((i, raw, (to,), (by,)) for i, raw, to, by in mails))
    if rows:
        connection.execute(_INSERT, rows)
    return len(rows)


_NAMING = select(_TABLE.c.inbound_id, _TABLE.c.outbox_id).where(
    _TABLE.c.mailbox.in_(bindparam("boxes", expanding=True))
)


def mail_naming(connection: Connection, mailboxes: Iterable[str]) -> tuple[set[int], set[int]]:
    """The ids of the stored mails (inbound, outbox) that name any of ``mailboxes``, or
    that name too many mailboxes to list."""
    boxes = sorted({*(fold_mailbox(b) for b in mailboxes), MANY})
    inbound: set[int] = set()
    outbox: set[int] = set()
    for inbound_id, outbox_id in connection.execute(_NAMING, {"boxes": boxes}):
        if inbound_id is not None:
            inbound.add(int(inbound_id))
        if outbox_id is not None:
            outbox.add(int(outbox_id))
    return inbound, outbox
