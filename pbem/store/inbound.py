"""Queries on inbound mail: store first, deduplicate, claim, mark."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import bindparam
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session, col, func, select

from pbem.store._sql import dialect_name, insert_for, is_postgresql, update_row
from pbem.store.models import Inbound, InboundStatus
from pbem.store.named import index_inbound
from pbem.store.rawmail import write_inbound
from pbem.store.text import LINE_MAX, REASON_MAX, SENDER_MAX, db_key, db_text

_TABLE = Inbound.__table__  # type: ignore[attr-defined]

_FINAL_STATUSES = frozenset(
    {InboundStatus.APPLIED, InboundStatus.REJECTED, InboundStatus.IGNORED, InboundStatus.FAILED}
)


def message_key(raw: bytes, message_id: str | None = None) -> str:
    """The deduplication key of a message: its Message-ID (trimmed; hashed when it is long
    or holds what a column cannot, see `db_key`), or, when it has none, ``sha256:<hex>`` of
    the raw bytes."""
    if message_id is not None:
        trimmed = " ".join(message_id.split())
        if trimmed and trimmed != "<>":
            return db_key(trimmed)
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
    _, created = insert_inbound(session, raw, source, key, now=now, sender=sender, subject=subject)
    row = session.exec(
        select(Inbound).where(Inbound.message_key == key).execution_options(populate_existing=True)
    ).one()
    return row, created


def insert_inbound(
    session: Session,
    raw: bytes,
    source: str,
    key: str,
    *,
    now: datetime,
    sender: str | None = None,
    subject: str | None = None,
) -> tuple[int, bool]:
    """`store_inbound` without loading the row back: (its id, whether this call created it)."""
    params = _new_row(source, key, sender, subject, now)
    connection = session.connection()
    inserted = connection.execute(_insert_new(dialect_name(session)), params).scalar()
    if inserted is not None:
        write_inbound(connection, [(int(inserted), raw)])
        index_inbound(connection, [(int(inserted), raw)])
        return int(inserted), True
    found = connection.execute(_ID_BY_KEY, {"key": key}).scalar_one()
    return int(found), False


def insert_inbound_many(
    session: Session,
    messages: Sequence[tuple[bytes, str, str, str | None, str | None]],
    *,
    now: datetime,
    own: Collection[str] = (),
) -> list[tuple[int, bool]]:
    """`insert_inbound` for several messages ``(raw, source, key, sender, subject)`` in one
    INSERT (and one SELECT for those already stored): (id, created) for each, in order. A
    key given twice is stored once; its second message gets (that id, False). Each new
    message is indexed by the mailboxes it names (`pbem.store.named`), but ``own`` (the
    service's own addresses).

    Text columns are made storable (`db_text`). Should the INSERT fail all the same, the
    messages are stored one by one, and one that still cannot be stored is quarantined:
    kept raw with status 'failed' and the database's reason, for the admin (`pbem inbox
    list`), so no message holds back the others of its fetch.
    """
    if not messages:
        return []
    try:
        with session.begin_nested():
            return _insert_many(session, messages, now, own)
    except DBAPIError:
        pass
    out: list[tuple[int, bool]] = []
    for message in messages:
        try:
            with session.begin_nested():
                out.extend(_insert_many(session, [message], now, own))
        except DBAPIError as exc:
            out.append(_quarantine(session, message[0], message[1], exc, now, own))
    return out


def _insert_many(
    session: Session,
    messages: Sequence[tuple[bytes, str, str, str | None, str | None]],
    now: datetime,
    own: Collection[str],
) -> list[tuple[int, bool]]:
    firsts: dict[str, dict[str, Any]] = {}
    raws: dict[str, bytes] = {}
    for raw, source, key, sender, subject in messages:
        if key not in firsts:
            firsts[key] = _new_row(source, key, sender, subject, now)
            raws[key] = raw
    connection = session.connection()
    created: dict[str, int] = {
        key: int(inbound_id)
        for inbound_id, key in connection.execute(
            _insert_new_many(dialect_name(session)), list(firsts.values())
        )
    }
    stored = [(i, raws[key]) for key, i in created.items()]
    write_inbound(connection, stored)
    index_inbound(connection, stored, own)
    missing = [key for key in firsts if key not in created]
    known: dict[str, int] = {}
    if missing:
        known = {
            key: int(inbound_id)
            for inbound_id, key in connection.execute(_IDS_BY_KEYS, {"keys": missing})
        }
    out: list[tuple[int, bool]] = []
    for _, _, key, _, _ in messages:
        if key in created:
            out.append((created.pop(key), True))
            known[key] = out[-1][0]
        else:
            out.append((known[key], False))
    return out


def _quarantine(
    session: Session,
    raw: bytes,
    source: str,
    error: Exception,
    now: datetime,
    own: Collection[str] = (),
) -> tuple[int, bool]:
    """Store a message that could not be stored normally: raw, keyed by its SHA-256, with
    status 'failed' and why. (id, created) as `insert_inbound_many` returns them."""
    key = message_key(raw)
    reason = f"quarantined: could not be stored as received ({type(error).__name__}: {error})"
    params = _new_row(source, key, None, None, now)
    params.update(
        status=InboundStatus.FAILED.value,
        reason=db_text(reason, REASON_MAX, multiline=True),
        processed_at=now,
    )
    connection = session.connection()
    inserted = connection.execute(_insert_new(dialect_name(session)), params).scalar()
    if inserted is not None:
        write_inbound(connection, [(int(inserted), raw)])
        index_inbound(connection, [(int(inserted), raw)], own)
        return int(inserted), True
    return int(connection.execute(_ID_BY_KEY, {"key": key}).scalar_one()), False


@cache
def _insert_new_many(dialect: str) -> Any:
    return (
        insert_for(dialect, _TABLE)
        .on_conflict_do_nothing(index_elements=["message_key"])
        .returning(_TABLE.c.id, _TABLE.c.message_key)
    )


_IDS_BY_KEYS = select(_TABLE.c.id, _TABLE.c.message_key).where(
    _TABLE.c.message_key.in_(bindparam("keys", expanding=True))
)


def _new_row(
    source: str, key: str, sender: str | None, subject: str | None, now: datetime
) -> dict[str, Any]:
    """The columns of a message stored pending (its bytes go to `pbem.store.rawmail`)."""
    return {
        "message_key": key,
        "source": source,
        "received_at": now,
        "status": InboundStatus.PENDING.value,
        "sender": db_text(sender, SENDER_MAX),
        "subject": db_text(subject, LINE_MAX),
        "attempts": 0,
    }


@cache
def _insert_new(dialect: str) -> Any:
    return (
        insert_for(dialect, _TABLE)
        .on_conflict_do_nothing(index_elements=["message_key"])
        .returning(_TABLE.c.id)
    )


_ID_BY_KEY = select(_TABLE.c.id).where(_TABLE.c.message_key == bindparam("key"))
_BY_ID = select(Inbound).where(col(Inbound.id) == bindparam("id"))


def count_recent_from(session: Session, sender: str, since: datetime, *, before: int) -> int:
    """How many messages from `sender` were received at or after `since`, among those
    stored before message id `before` (the hourly cap per sender)."""
    params = {"sender": sender, "since": since, "before": before}
    return int(session.connection().execute(_COUNT_RECENT, params).scalar_one())


_COUNT_RECENT = (
    select(func.count())
    .select_from(_TABLE)
    .where(
        _TABLE.c.sender == bindparam("sender"),
        _TABLE.c.received_at >= bindparam("since"),
        _TABLE.c.id < bindparam("before"),
    )
)


def window_opens_at(
    session: Session, sender: str, since: datetime, *, before: int, leaving: int
) -> datetime | None:
    """When the ``leaving``-th oldest (from 1) of the messages `count_recent_from` counts
    was received: the hour after it, that many have left the window."""
    params = {"sender": sender, "since": since, "before": before, "skip": max(0, leaving - 1)}
    return session.connection().execute(_NTH_RECENT, params).scalar()


_NTH_RECENT = (
    select(_TABLE.c.received_at)
    .where(
        _TABLE.c.sender == bindparam("sender"),
        _TABLE.c.received_at >= bindparam("since"),
        _TABLE.c.id < bindparam("before"),
    )
    .order_by(_TABLE.c.received_at, _TABLE.c.id)
    .offset(bindparam("skip"))
    .limit(1)
)


def count_recent_many(
    session: Session, messages: Sequence[tuple[int, str]], since: datetime
) -> dict[int, int]:
    """`count_recent_from` for several messages ``(id, sender)`` in two queries: for each
    message id, how many messages its sender sent at or after `since`, stored before it."""
    if not messages:
        return {}
    senders = sorted({sender for _, sender in messages})
    low = min(inbound_id for inbound_id, _ in messages)
    high = max(inbound_id for inbound_id, _ in messages)
    connection = session.connection()
    params = {"senders": senders, "since": since, "low": low, "high": high}
    before: dict[str, int] = {
        sender: count for sender, count in connection.execute(_COUNT_BEFORE, params)
    }
    within: dict[str, list[int]] = {}
    for sender, inbound_id in connection.execute(_IDS_WITHIN, params):
        within.setdefault(sender, []).append(inbound_id)
    return {
        inbound_id: before.get(sender, 0)
        + sum(1 for other in within.get(sender, ()) if other < inbound_id)
        for inbound_id, sender in messages
    }


_RECENT_FROM = (
    _TABLE.c.sender.in_(bindparam("senders", expanding=True)),
    _TABLE.c.received_at >= bindparam("since"),
)
_COUNT_BEFORE = (
    select(_TABLE.c.sender, func.count())
    .where(*_RECENT_FROM, _TABLE.c.id < bindparam("low"))
    .group_by(_TABLE.c.sender)
)
_IDS_WITHIN = select(_TABLE.c.sender, _TABLE.c.id).where(
    *_RECENT_FROM, _TABLE.c.id >= bindparam("low"), _TABLE.c.id < bindparam("high")
)


def get_inbound(session: Session, inbound_id: int) -> Inbound | None:
    """The inbound message with this id, or None."""
    return session.get(Inbound, inbound_id)


def lock_pending_inbound(session: Session, inbound_id: int) -> Inbound | None:
    """The message with this id if it is still pending, locked for this transaction.

    On PostgreSQL a row another transaction holds is skipped (``FOR UPDATE SKIP LOCKED``):
    None then means another worker has it. On SQLite the write transaction already
    excludes every other writer.
    """
    statement = _BY_ID
    if is_postgresql(session):
        statement = _BY_ID_LOCKED
    row = session.exec(statement, params={"id": inbound_id}).first()
    if row is None or row.status != InboundStatus.PENDING.value:
        return None
    return row


_BY_ID_LOCKED = _BY_ID.with_for_update(skip_locked=True)


def lock_pending_inbound_many(session: Session, ids: Sequence[int]) -> dict[int, Inbound]:
    """`lock_pending_inbound` for several messages in one query: those still pending (and,
    on PostgreSQL, not held by another transaction), by id."""
    statement = _PENDING_BY_IDS_LOCKED if is_postgresql(session) else _PENDING_BY_IDS
    rows = session.exec(statement, params={"ids": list(ids)})
    return {row.id: row for row in rows if row.id is not None}


_PENDING_BY_IDS = (
    select(Inbound)
    .where(
        col(Inbound.id).in_(bindparam("ids", expanding=True)),
        Inbound.status == InboundStatus.PENDING.value,
    )
    .order_by(col(Inbound.id))
)
_PENDING_BY_IDS_LOCKED = _PENDING_BY_IDS.with_for_update(skip_locked=True)


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
    rule: str | None = None,
    not_before: datetime | None = None,
) -> Inbound:
    """Record what became of a message and count the attempt; ``rule``: the rule of
    intake's chain that ended it (`pbem.service.intake.chain`); ``not_before``: a
    message left 'pending' waits until then (a proven mail over the hourly volume).

    A final status ('applied', 'rejected', 'ignored', 'failed') sets `processed_at`;
    'pending' leaves the message to be tried again. `game_id`, `sender` and `subject` are
    stored when given. Raises ValueError for an unknown status.
    """
    try:
        new_status = InboundStatus(status)
    except ValueError:
        raise ValueError(f"unknown inbound status {status!r}") from None
    values: dict[str, Any] = {
        "status": new_status.value,
        "reason": db_text(reason, REASON_MAX, multiline=True),
        "game_id": inbound.game_id if game_id is None else game_id,
        "sender": inbound.sender if sender is None else db_text(sender, SENDER_MAX),
        "subject": inbound.subject if subject is None else db_text(subject, LINE_MAX),
        "attempts": inbound.attempts + 1,
        "processed_at": now if new_status in _FINAL_STATUSES else None,
        "rule": rule,
        "not_before": not_before,
    }
    update_row(session, inbound, **values)
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
