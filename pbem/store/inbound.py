"""Queries on inbound mail: store first, deduplicate, claim, mark."""

from __future__ import annotations

import hashlib
from datetime import datetime

from sqlmodel import Session, col, select

from pbem.store._sql import is_postgresql, upsert
from pbem.store.models import Inbound, InboundStatus

_FINAL_STATUSES = frozenset(
    {InboundStatus.APPLIED, InboundStatus.REJECTED, InboundStatus.IGNORED, InboundStatus.FAILED}
)


def message_key(raw: bytes, message_id: str | None = None) -> str:
    """The deduplication key of a message: its Message-ID (trimmed), or, when it has none,
    ``sha256:<hex>`` of the raw bytes."""
    if message_id is not None:
        trimmed = " ".join(message_id.split())
        if trimmed and trimmed != "<>":
            return trimmed
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def store_inbound(
    session: Session,
    raw: bytes,
    source: str,
    key: str | None = None,
    *,
    now: datetime,
    sender: str | None = None,
    subject: str | None = None,
) -> tuple[Inbound, bool]:
    """Store a received message unless one with the same key is stored already.

    `key` defaults to the SHA-256 of `raw` (see `message_key`). Returns the stored row and
    whether this call created it; a re-delivery returns the first row untouched. Safe
    against a concurrent delivery of the same message (``ON CONFLICT DO NOTHING``).
    """
    if key is None:
        key = message_key(raw)
    statement = (
        upsert(session, Inbound)
        .values(
            message_key=key,
            raw=raw,
            source=source,
            received_at=now,
            status=InboundStatus.PENDING.value,
            sender=sender,
            subject=subject,
            attempts=0,
        )
        .on_conflict_do_nothing(index_elements=["message_key"])
        .returning(col(Inbound.id))
    )
    inserted_id = session.exec(statement).scalar_one_or_none()
    row = session.exec(
        select(Inbound).where(Inbound.message_key == key).execution_options(populate_existing=True)
    ).one()
    return row, inserted_id is not None


def get_inbound(session: Session, inbound_id: int) -> Inbound | None:
    """The inbound message with this id, or None."""
    return session.get(Inbound, inbound_id)


def claim_pending_inbound(session: Session, limit: int = 10) -> list[Inbound]:
    """Up to `limit` pending messages, oldest first, for this transaction to process.

    On PostgreSQL the rows are locked (``FOR UPDATE SKIP LOCKED``), so concurrent workers
    get different messages; mark each before committing. On SQLite, where a write
    transaction already excludes every other writer, it is a plain select.
    """
    statement = (
        select(Inbound)
        .where(Inbound.status == InboundStatus.PENDING.value)
        .order_by(col(Inbound.id))
        .limit(limit)
    )
    if is_postgresql(session):
        statement = statement.with_for_update(skip_locked=True)
    return list(session.exec(statement))


def mark_inbound(
    session: Session,
    inbound: Inbound,
    status: str,
    reason: str | None = None,
    game_id: int | None = None,
    *,
    now: datetime,
    sender: str | None = None,
    subject: str | None = None,
) -> Inbound:
    """Record what became of a message and count the attempt.

    A final status ('applied', 'rejected', 'ignored', 'failed') sets `processed_at`;
    'pending' leaves the message to be tried again. `game_id`, `sender` and `subject` are
    stored when given. Raises ValueError for an unknown status.
    """
    try:
        new_status = InboundStatus(status)
    except ValueError:
        raise ValueError(f"unknown inbound status {status!r}") from None
    inbound.status = new_status.value
    inbound.reason = reason
    if game_id is not None:
        inbound.game_id = game_id
    if sender is not None:
        inbound.sender = sender
    if subject is not None:
        inbound.subject = subject
    inbound.attempts += 1
    inbound.processed_at = now if new_status in _FINAL_STATUSES else None
    session.add(inbound)
    session.flush()
    return inbound


def list_inbound(
    session: Session, status: str | None = None, limit: int | None = None
) -> list[Inbound]:
    """Inbound messages (only those with `status` if given), newest first."""
    statement = select(Inbound).order_by(col(Inbound.id).desc())
    if status is not None:
        statement = statement.where(Inbound.status == status)
    if limit is not None:
        statement = statement.limit(limit)
    return list(session.exec(statement))
