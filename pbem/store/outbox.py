"""Queries on the outbox: enqueue in the game's transaction, claim, and record delivery.

A sender claims due rows (`claim_due_outbox`), which marks them 'sending' for a lease
period; it then records each result with `mark_sent` or `mark_failed`. A sender that dies
mid-way leaves its rows 'sending'; they become due again when the lease runs out, or at
once through `release_interrupted` when the sender is known to be dead, so a message may
be sent twice but is never lost (its Message-ID lets clients drop the copy).

The rows a sender is transmitting carry an "in flight" note (set by the claim with
``in_flight``, or by `note_in_flight`): if it is still there after a crash, the server may
have accepted that message before the sender could record it, and sending it again may
give the recipient a second copy. A row left 'sending' without it never reached the server.
The sender records a batch's results together (`record_sent_many`), so after a crash at
most the one batch it was sending goes out again, with the same Message-IDs.

On PostgreSQL a claiming sender also holds a session advisory lock per claimed row
(`outbox_lock_key`) until it has recorded the row's result; the server frees the locks the
moment the sender's connection dies, which is how another worker tells a dead sender's
rows from a live one's.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Update, bindparam, insert, text, update
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session, col, select

from pbem.store._sql import is_postgresql, upsert
from pbem.store.models import Outbox, OutboxStatus
from pbem.store.named import index_outbox
from pbem.store.rawmail import write_outbox

DEFAULT_BACKOFF = timedelta(minutes=1)
# As Postfix: retries at most 4000 s apart (maximal_backoff_time), for 5 days
# (maximal_queue_lifetime).
DEFAULT_MAX_BACKOFF = timedelta(seconds=4000)
DEFAULT_MAX_AGE = timedelta(days=5)
DEFAULT_LEASE = timedelta(minutes=5)
DEFAULT_JITTER = 0.25
# Advisory lock keys of outbox rows: this base plus the row id (clear of the inbox reader's).
OUTBOX_LOCK_BASE = 0x6F7574 << 32
IN_FLIGHT = "in flight since"
INTERRUPTED = "interrupted"


def outbox_lock_key(row_id: int) -> int:
    """The PostgreSQL advisory lock key a sender holds while outbox row ``row_id`` is its."""
    return OUTBOX_LOCK_BASE + row_id


def enqueue_outbox(
    session: Session,
    message_id: str,
    recipient: str,
    sender: str,
    kind: str,
    raw: bytes,
    game_id: int | None = None,
    *,
    now: datetime,
) -> tuple[Outbox, bool]:
    """Queue a rendered message for delivery at `now`, unless its Message-ID is queued.

    Returns the row and whether this call created it.
    """
    values = outbox_row(message_id, recipient, sender, kind, raw, game_id, now=now)
    del values["raw"]
    statement = (
        upsert(session, Outbox)
        .values(values)
        .on_conflict_do_nothing(index_elements=["message_id"])
        .returning(col(Outbox.id))
    )
    inserted_id = session.exec(statement).scalar_one_or_none()
    if inserted_id is not None:
        write_outbox(session.connection(), [(int(inserted_id), raw)])
        index_outbox(session.connection(), [(int(inserted_id), raw, recipient, sender)])
    row = session.exec(
        select(Outbox)
        .where(Outbox.message_id == message_id)
        .execution_options(populate_existing=True)
    ).one()
    return row, inserted_id is not None


def outbox_row(
    message_id: str,
    recipient: str,
    sender: str,
    kind: str,
    raw: bytes,
    game_id: int | None = None,
    *,
    now: datetime,
    starts_clock: bool = False,
) -> dict[str, Any]:
    """The column values of a rendered message to queue for delivery at `now`, and its
    bytes (``raw``, stored apart: `pbem.store.rawmail`); ``starts_clock``: a turn mail
    whose delivery starts its player's clock (`pbem.store.delivery`)."""
    return {
        "message_id": message_id,
        "game_id": game_id,
        "recipient": recipient,
        "sender": sender,
        "kind": kind,
        "raw": raw,
        "status": OutboxStatus.PENDING.value,
        "attempts": 0,
        "next_attempt_at": now,
        "created_at": now,
        "starts_clock": starts_clock,
    }


def queue_mails(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Queue messages (`outbox_row` values) whose Message-IDs are new, in one statement.

    A plain INSERT (the service's hot path): a Message-ID queued already raises
    IntegrityError. Use `enqueue_outbox` where the message may be queued already. Each
    mail is indexed by the mailboxes it names (`pbem.store.named`), its recipient among
    them.
    """
    if not rows:
        return
    connection = session.connection()
    by_id = {row["message_id"]: row for row in rows}
    columns = [{k: v for k, v in row.items() if k != "raw"} for row in rows]
    queued = [
        (int(row_id), by_id[message_id])
        for row_id, message_id in connection.execute(_QUEUE, columns)
    ]
    write_outbox(connection, [(row_id, row["raw"]) for row_id, row in queued])
    index_outbox(
        connection,
        [(row_id, row["raw"], row["recipient"], row["sender"]) for row_id, row in queued],
    )


_QUEUE = insert(Outbox.__table__).returning(  # type: ignore[attr-defined]
    Outbox.__table__.c.id,  # type: ignore[attr-defined]
    Outbox.__table__.c.message_id,  # type: ignore[attr-defined]
)


def claim_due_outbox(
    session: Session,
    now: datetime,
    limit: int = 20,
    *,
    lease: timedelta = DEFAULT_LEASE,
    lock_rows: bool = False,
    in_flight: bool = False,
) -> list[Outbox]:
    """Up to `limit` messages due at `now`, oldest due first, marked 'sending'.

    Each claimed row counts one more attempt and is not due again until `now + lease`.
    Rows left 'sending' by a sender that died are claimed again once their lease is over.
    On PostgreSQL rows locked by another transaction are skipped (``SKIP LOCKED``), and
    with `lock_rows` the session also takes each claimed row's advisory lock (the caller
    releases it once the row's result is recorded; see the module docstring). With
    `in_flight` each claimed row is noted in flight as well (`note_in_flight`), in the
    same statement: the caller is about to transmit them all.
    """
    statement = (
        select(Outbox)
        .where(
            col(Outbox.status).in_([OutboxStatus.PENDING.value, OutboxStatus.SENDING.value]),
            col(Outbox.next_attempt_at) <= now,
        )
        .order_by(col(Outbox.next_attempt_at), col(Outbox.id))
        .limit(limit)
    )
    if is_postgresql(session):
        statement = statement.with_for_update(skip_locked=True)
    rows = list(session.exec(statement))
    if lock_rows and rows and is_postgresql(session):
        rows = _lock_claimed(session, rows)
    if not rows:
        return rows
    # One statement for the batch; the rows' attributes set as if loaded after it.
    values: dict[str, Any] = {
        "status": OutboxStatus.SENDING.value,
        "next_attempt_at": now + lease,
    }
    if in_flight:
        values["last_error"] = in_flight_note(now)
    session.connection().execute(
        _CLAIM.values(attempts=_TABLE.c.attempts + 1, **values),
        {"ids": [row.id for row in rows]},
    )
    for row in rows:
        set_committed_value(row, "attempts", row.attempts + 1)
        for name, value in values.items():
            set_committed_value(row, name, value)
    return rows


_TABLE = Outbox.__table__  # type: ignore[attr-defined]
_CLAIM = update(_TABLE).where(_TABLE.c.id.in_(bindparam("ids", expanding=True)))


def _lock_claimed(session: Session, rows: list[Outbox]) -> list[Outbox]:
    """The rows whose advisory lock this session could take (see the module docstring).

    A row whose lock another sender holds is being delivered by that sender right now
    (its result not recorded yet) and is left to it; a 'sending' row whose lease ran out
    is taken over even then, as without locks.
    """
    keys = [outbox_lock_key(row.id) for row in rows if row.id is not None]
    got = {
        int(key)
        for key, locked in session.execute(
            text("SELECT k, pg_try_advisory_lock(k) FROM unnest(CAST(:keys AS bigint[])) AS k"),
            {"keys": keys},
        )
        if locked
    }
    return [
        row
        for row in rows
        if row.id is not None
        and (outbox_lock_key(row.id) in got or row.status == OutboxStatus.SENDING.value)
    ]


def in_flight_note(now: datetime) -> str:
    """The note a row carries while its message is on the wire (see the module doc)."""
    return f"{IN_FLIGHT} {now.isoformat(timespec='milliseconds')}"


def _in_flight(row_id: int, now: datetime) -> Update:
    return (
        update(Outbox)
        .where(col(Outbox.id) == row_id, col(Outbox.status) == OutboxStatus.SENDING.value)
        .values(last_error=in_flight_note(now))
        .execution_options(synchronize_session=False)
    )


def note_in_flight(session: Session, row_id: int, *, now: datetime) -> None:
    """Note on claimed row ``row_id`` that it is being transmitted now.

    The next `mark_sent` or `mark_failed` replaces the note; a note still there after a
    crash says the server may have accepted the message (see the module docstring).
    """
    session.exec(_in_flight(row_id, now))


_OUTBOX = Outbox.__table__  # type: ignore[attr-defined]
# One prepared statement for every delivered row of a batch (executemany).
_SENT = (
    update(_OUTBOX)
    .where(_OUTBOX.c.id == bindparam("row_id"))
    .values(status=OutboxStatus.SENT.value, sent_at=bindparam("sent_at"), last_error=None)
)


def record_sent_many(connection: Connection, row_ids: Sequence[int], *, now: datetime) -> None:
    """`mark_sent` for each of ``row_ids`` in one prepared statement run for all of them
    (executemany) on ``connection``: the caller commits at once, since until then a crash
    would send these messages again."""
    if row_ids:
        connection.execute(_SENT, [{"row_id": row_id, "sent_at": now} for row_id in row_ids])


def release_interrupted(session: Session, *, now: datetime) -> list[int]:
    """Make rows left 'sending' by a sender that died due again at ``now``; their ids.

    On SQLite only one sender runs (the daemon holds a lock file), so call this when it
    starts: every 'sending' row is then a dead sender's. On PostgreSQL a row counts as a
    dead sender's when nobody holds its advisory lock (checked with a transaction lock,
    so the caller's own claims count as alive). The row says it was interrupted, and
    whether the server may already have the message; only a row that was in flight
    keeps the claim in its count of attempts (the others were never tried).
    """
    statement = select(Outbox).where(Outbox.status == OutboxStatus.SENDING.value)
    postgres = is_postgresql(session)
    if postgres:
        statement = statement.with_for_update(skip_locked=True)
    rows = [row for row in session.exec(statement) if row.id is not None]
    if postgres and rows:
        keys = [outbox_lock_key(row.id) for row in rows if row.id is not None]
        free = {
            int(key)
            for key, locked in session.execute(
                text(
                    "SELECT k, pg_try_advisory_xact_lock(k) "
                    "FROM unnest(CAST(:keys AS bigint[])) AS k"
                ),
                {"keys": keys},
            )
            if locked
        }
        rows = [row for row in rows if row.id is not None and outbox_lock_key(row.id) in free]
    for row in rows:
        if (row.last_error or "").startswith(IN_FLIGHT):
            row.last_error = (
                f"{INTERRUPTED} in flight ({row.last_error}): the server may have accepted "
                "it; sent again with the same Message-ID"
            )
        else:
            row.last_error = f"{INTERRUPTED} before it was sent"
            row.attempts = max(0, row.attempts - 1)  # claimed, never tried: no attempt
        row.status = OutboxStatus.PENDING.value
        row.next_attempt_at = now
        session.add(row)
    session.flush()
    return [row.id for row in rows if row.id is not None]


def _load(session: Session, row: Outbox | int) -> Outbox:
    row_id = row if isinstance(row, int) else row.id
    if row_id is None:
        raise ValueError("this outbox row was never stored")
    loaded = session.get(Outbox, row_id)
    if loaded is None:
        raise LookupError(f"no outbox row {row_id}")
    return loaded


def mark_sent(session: Session, row: Outbox | int, *, now: datetime) -> Outbox:
    """Record that the message was delivered at `now`."""
    loaded = _load(session, row)
    loaded.status = OutboxStatus.SENT.value
    loaded.sent_at = now
    loaded.last_error = None
    session.add(loaded)
    session.flush()
    return loaded


def backoff_delay(
    attempts: int,
    *,
    base: timedelta = DEFAULT_BACKOFF,
    cap: timedelta = DEFAULT_MAX_BACKOFF,
    jitter: float = DEFAULT_JITTER,
    rand: Callable[[], float] = random.random,
) -> timedelta:
    """How long to wait after failed attempt number `attempts` (1 for the first).

    ``base * 2 ** (attempts - 1)``, at most `cap`, then stretched by up to `jitter` (a
    fraction) times ``rand()``, where `rand` returns a float in [0, 1).
    """
    exponent = max(attempts, 1) - 1
    delay = cap if exponent >= 32 else min(base * (2**exponent), cap)
    return delay * (1 + jitter * rand())


def mark_failed(
    session: Session,
    row: Outbox | int,
    error: str,
    *,
    temporary: bool,
    now: datetime,
    max_age: timedelta = DEFAULT_MAX_AGE,
    max_attempts: int | None = None,
    backoff: timedelta = DEFAULT_BACKOFF,
    max_backoff: timedelta = DEFAULT_MAX_BACKOFF,
    jitter: float = DEFAULT_JITTER,
    rand: Callable[[], float] = random.random,
) -> Outbox:
    """Record a failed delivery.

    A temporary failure puts the message back to 'pending', due after an exponential
    backoff with jitter (`backoff_delay`), but no later than `max_age` after it was
    queued (or queued again by `retry_outbox`), when it is tried a last time; a permanent
    failure, or a temporary one `max_age` after it was queued (or after `max_attempts`
    attempts, when given), makes it 'failed' until `retry_outbox`.
    """
    loaded = _load(session, row)
    loaded.last_error = error
    attempts = max(loaded.attempts, 1)
    give_up = (loaded.retried_at or loaded.created_at) + max_age
    if not temporary or now >= give_up or (max_attempts is not None and attempts >= max_attempts):
        loaded.status = OutboxStatus.FAILED.value
        loaded.next_attempt_at = now
    else:
        loaded.status = OutboxStatus.PENDING.value
        delay = backoff_delay(attempts, base=backoff, cap=max_backoff, jitter=jitter, rand=rand)
        loaded.next_attempt_at = min(now + delay, give_up)
    session.add(loaded)
    session.flush()
    return loaded


def retry_outbox(
    session: Session,
    *,
    now: datetime,
    ids: Sequence[int] | None = None,
    all_failed: bool = False,
) -> int:
    """Make messages due again at `now` with a fresh attempt count (and a fresh
    `max_age` of retries, from `now`).

    Either `ids` (rows that are 'failed' or 'pending'; sent rows are left alone) or
    `all_failed=True` (every 'failed' row). Returns how many rows were reset.
    """
    if (ids is None) == (not all_failed):
        raise ValueError("give either ids or all_failed=True")
    statement = update(Outbox).values(
        status=OutboxStatus.PENDING.value, attempts=0, next_attempt_at=now, retried_at=now
    )
    if ids is not None:
        if not ids:
            return 0
        statement = statement.where(
            col(Outbox.id).in_(list(ids)),
            col(Outbox.status).in_([OutboxStatus.FAILED.value, OutboxStatus.PENDING.value]),
        )
    else:
        statement = statement.where(col(Outbox.status) == OutboxStatus.FAILED.value)
    result = session.exec(statement.execution_options(synchronize_session="fetch"))
    return result.rowcount


def cancel_game_mail(session: Session, game_id: int, reason: str) -> int:
    """Cancel a game's mail that is not on its way yet ('pending', or 'failed' and waiting
    for a retry): it is never sent. Mail being sent ('sending') is left alone. Returns how
    many rows were cancelled."""
    statement = (
        update(Outbox)
        .where(
            col(Outbox.game_id) == game_id,
            col(Outbox.status).in_([OutboxStatus.PENDING.value, OutboxStatus.FAILED.value]),
        )
        .values(status=OutboxStatus.CANCELLED.value, last_error=f"cancelled: {reason}")
    )
    result = session.exec(statement.execution_options(synchronize_session=False))
    return result.rowcount


def list_outbox(
    session: Session, status: str | None = None, limit: int | None = None
) -> list[Outbox]:
    """Outbox rows (only those with `status` if given), newest first."""
    statement = select(Outbox).order_by(col(Outbox.id).desc())
    if status is not None:
        statement = statement.where(Outbox.status == status)
    if limit is not None:
        statement = statement.limit(limit)
    return list(session.exec(statement))


def sent_recipients(session: Session, message_ids: Sequence[str]) -> set[str]:
    """The recipients of the outbox rows with any of these Message-IDs (with or without
    angle brackets): whom mail that a bounce answers went to."""
    if not message_ids:
        return set()
    ids = sorted({f"<{i.strip().strip('<>')}>" for i in message_ids} | set(message_ids))
    rows = session.connection().execute(_RECIPIENTS_BY_IDS, {"ids": ids})
    return {str(recipient).lower() for (recipient,) in rows}


_OUTBOX = Outbox.__table__  # type: ignore[attr-defined]
_RECIPIENTS_BY_IDS = select(_OUTBOX.c.recipient).where(
    _OUTBOX.c.message_id.in_(bindparam("ids", expanding=True))
)
