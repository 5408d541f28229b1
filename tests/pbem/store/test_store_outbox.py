"""The outbox: enqueue, claim, sent, failed with backoff, retry."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from sqlmodel import Session, select

from pbem.store import Outbox, OutboxStatus
from pbem.store.claim import claim_due
from pbem.store.queries import (
    backoff_delay,
    claim_due_outbox,
    enqueue_outbox,
    list_outbox,
    mark_failed,
    mark_sent,
    retry_outbox,
)

MINUTE = timedelta(minutes=1)


def _enqueue(session: Session, now: datetime, n: int = 1) -> Outbox:
    row, _ = enqueue_outbox(
        session,
        f"<out{n}@pbem.example>",
        "ann@example.org",
        "cribbage@pbem.example",
        "turn",
        b"raw message %d" % n,
        now=now,
    )
    return row


def test_enqueue_outbox_is_insert_if_absent(session: Session, now: datetime) -> None:
    row, created = enqueue_outbox(
        session, "<o@x>", "ann@example.org", "pbem@x", "turn", b"first", now=now
    )
    again, created_again = enqueue_outbox(
        session, "<o@x>", "bob@example.org", "pbem@x", "error", b"second", now=now + MINUTE
    )
    session.commit()
    assert created and not created_again
    assert again.id == row.id
    assert (again.recipient, again.kind, again.raw) == ("ann@example.org", "turn", b"first")
    assert (again.status, again.attempts, again.next_attempt_at) == ("pending", 0, now)
    assert again.created_at == now
    assert len(session.exec(select(Outbox)).all()) == 1


def test_claim_due_outbox_marks_rows_sending(session: Session, now: datetime) -> None:
    early = _enqueue(session, now - MINUTE, 1)
    due = _enqueue(session, now, 2)
    _enqueue(session, now + MINUTE, 3)  # not due yet
    claimed = claim_due_outbox(session, now, lease=5 * MINUTE)
    assert claimed == [early, due]
    for row in claimed:
        assert (row.status, row.attempts, row.next_attempt_at) == ("sending", 1, now + 5 * MINUTE)
    assert claim_due_outbox(session, now) == []
    assert claim_due_outbox(session, now + MINUTE, limit=1)[0].message_id == "<out3@pbem.example>"


def test_a_claim_whose_lease_ran_out_is_claimed_again(session: Session, now: datetime) -> None:
    row = _enqueue(session, now)
    claim_due_outbox(session, now, lease=5 * MINUTE)
    assert claim_due_outbox(session, now + 4 * MINUTE) == []
    assert claim_due_outbox(session, now + 5 * MINUTE) == [row]
    assert row.attempts == 2


def test_mark_sent(session: Session, now: datetime) -> None:
    row = _enqueue(session, now)
    claim_due_outbox(session, now)
    session.commit()
    mark_sent(session, row.id or 0, now=now + MINUTE)
    session.commit()
    session.expire_all()
    (reloaded,) = list_outbox(session)
    assert (reloaded.status, reloaded.sent_at, reloaded.last_error) == ("sent", now + MINUTE, None)
    assert claim_due_outbox(session, now + timedelta(days=1)) == []


def test_temporary_failures_back_off_exponentially_with_jitter(
    session: Session, now: datetime
) -> None:
    row = _enqueue(session, now)
    delays = []
    at = now
    for _ in range(4):
        (claimed,) = claim_due_outbox(session, at)
        mark_failed(session, claimed, "451 try later", temporary=True, now=at, rand=lambda: 0.5)
        assert row.status == "pending"
        delays.append(row.next_attempt_at - at)
        at = row.next_attempt_at
    # base 1 min, doubled each attempt, stretched by jitter 0.25 * 0.5
    assert delays == [MINUTE * factor * 1.125 for factor in (1, 2, 4, 8)]
    assert row.last_error == "451 try later"
    assert row.attempts == 4


def test_a_temporary_failure_fails_after_max_attempts(session: Session, now: datetime) -> None:
    row = _enqueue(session, now)
    at = now
    for attempt in range(1, 4):
        claim_due_outbox(session, at)
        mark_failed(session, row, "451", temporary=True, now=at, max_attempts=3, rand=lambda: 0)
        at = row.next_attempt_at
        expected = "failed" if attempt == 3 else "pending"
        assert row.status == expected
    assert claim_due_outbox(session, at + timedelta(days=30)) == []


def test_a_temporary_failure_is_retried_for_max_age_then_fails(
    session: Session, now: datetime
) -> None:
    """Five days of refusals, as Postfix: retries at most 4000 s apart, the last one at
    the five days (however the backoff falls), then failed; never before."""
    row = _enqueue(session, now)
    give_up = now + timedelta(days=5)
    at, tries = now, 0
    while True:
        claim_due_outbox(session, at)
        mark_failed(session, row, "451 later", temporary=True, now=at, rand=lambda: 0.5)
        tries += 1
        if row.status == "failed":
            break
        assert row.status == "pending" and row.next_attempt_at <= give_up
        assert row.next_attempt_at - at <= timedelta(seconds=4000 * 1.125)
        at = row.next_attempt_at
    assert at == give_up  # the last try came at the five days, not later
    assert 100 < tries < 130  # each about an hour apart once the backoff is capped
    assert claim_due_outbox(session, at + timedelta(days=30)) == []


def test_a_retried_mail_gets_a_fresh_max_age(session: Session, now: datetime) -> None:
    row = _enqueue(session, now)
    claim_due_outbox(session, now)
    mark_failed(session, row, "451", temporary=True, now=now, max_age=timedelta(hours=1))
    later = now + timedelta(hours=2)
    claim_due_outbox(session, later)
    mark_failed(session, row, "451", temporary=True, now=later, max_age=timedelta(hours=1))
    assert row.status == "failed"  # an hour since it was queued: given up
    assert retry_outbox(session, now=later, ids=[row.id or 0]) == 1
    session.refresh(row)
    assert row.retried_at == later
    claim_due_outbox(session, later)
    mark_failed(session, row, "451", temporary=True, now=later, max_age=timedelta(hours=1))
    assert row.status == "pending"  # its hour runs from the retry
    assert row.next_attempt_at <= later + timedelta(hours=1)


def test_a_permanent_failure_fails_at_once(session: Session, now: datetime) -> None:
    row = _enqueue(session, now)
    claim_due_outbox(session, now)
    mark_failed(session, row, "550 no such user", temporary=False, now=now)
    assert (row.status, row.attempts, row.last_error) == ("failed", 1, "550 no such user")


def test_backoff_delay_is_capped() -> None:
    cap = timedelta(seconds=4000)  # Postfix's maximal_backoff_time
    assert backoff_delay(1, rand=lambda: 0) == MINUTE
    assert backoff_delay(3, rand=lambda: 0) == 4 * MINUTE
    assert backoff_delay(30, rand=lambda: 0) == cap
    assert backoff_delay(10_000, rand=lambda: 0) == cap
    assert backoff_delay(10_000, jitter=0.5, rand=lambda: 1.0) == cap * 1.5


def test_retry_outbox_by_ids_and_all_failed(session: Session, now: datetime) -> None:
    rows = [_enqueue(session, now, n) for n in range(4)]
    claim_due_outbox(session, now)
    for row in rows[:3]:
        mark_failed(session, row, "550", temporary=False, now=now)
    mark_sent(session, rows[3], now=now)
    session.commit()
    later = now + timedelta(hours=2)
    assert retry_outbox(session, ids=[rows[0].id or 0, rows[3].id or 0], now=later) == 1
    session.commit()
    assert (rows[0].status, rows[0].attempts, rows[0].next_attempt_at) == ("pending", 0, later)
    assert rows[3].status == OutboxStatus.SENT
    assert retry_outbox(session, all_failed=True, now=later) == 2
    session.commit()
    assert claim_due_outbox(session, later) == rows[:3]
    assert retry_outbox(session, ids=[], now=later) == 0
    with pytest.raises(ValueError, match="either ids or all_failed"):
        retry_outbox(session, now=later)
    with pytest.raises(ValueError, match="either ids or all_failed"):
        retry_outbox(session, ids=[1], all_failed=True, now=later)


def test_list_outbox(session: Session, now: datetime) -> None:
    rows = [_enqueue(session, now, n) for n in range(3)]
    mark_failed(session, rows[1], "550", temporary=False, now=now)
    assert list_outbox(session) == rows[::-1]
    assert list_outbox(session, "failed") == [rows[1]]
    assert list_outbox(session, limit=2) == rows[:0:-1]


@pytest.mark.parametrize("in_flight", [False, True])
def test_the_senders_claim_takes_and_marks_what_claim_due_outbox_does(
    session: Session, now: datetime, in_flight: bool
) -> None:
    """`claim_due` (plain statements, the daemon's) claims the rows `claim_due_outbox`
    claims, in its order, and leaves them as it does: the same columns, row for row."""
    for n, at in enumerate([now - MINUTE, now, now + MINUTE, now - 2 * MINUTE, now]):
        _enqueue(session, at, n)
    late = _enqueue(session, now - 3 * MINUTE, 9)
    late.status, late.next_attempt_at = "sending", now - MINUTE  # a dead sender's lease ended
    session.add(late)
    session.commit()

    def columns() -> list[tuple[object, ...]]:
        session.expire_all()
        return [
            (r.id, r.status, r.attempts, r.next_attempt_at, r.last_error)
            for r in session.exec(select(Outbox).order_by(Outbox.id)).all()  # type: ignore[arg-type]
        ]

    before = columns()
    claimed = claim_due(session.connection(), now, 3, lease=5 * MINUTE, in_flight=in_flight)
    ours = columns()
    session.rollback()
    assert columns() == before
    orm = claim_due_outbox(session, now, 3, lease=5 * MINUTE, in_flight=in_flight)
    assert [c.id for c in claimed] == [r.id for r in orm]
    assert [(c.attempts, c.recipient, c.raw) for c in claimed] == [
        (r.attempts, r.recipient, r.raw) for r in orm
    ]
    assert ours == columns()
