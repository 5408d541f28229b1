"""The outbox and the daemon around a crash, one fault at a time (both databases).

- A batch's deliveries are recorded together when its lane is done, so a crash in the
  middle of a batch sends at most that one batch again, with the same Message-IDs: its
  rows carry an "in flight" note from the claim on, and only they can come twice;
  what an earlier batch recorded never goes out again.
- Rows a crash left 'sending' are due again when the daemon starts (not after their
  lease); on PostgreSQL a worker takes over a dead worker's rows and never a live one's.
- A delivery that failed for a moment is retried when its backoff ends, even while the
  daemon waits for mail with a long poll.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from pbem.run.runtime import build_daemon
from pbem.run.sender import OutboxSender
from pbem.service import Service
from pbem.store import models as m
from pbem.store.outbox import IN_FLIGHT, INTERRUPTED, claim_due_outbox
from pbem.transport.base import DeliveryResult, OutboundSink, OutgoingMail
from tests.e2e.helpers import ALICE, BOB, CAROL, DAVE, Harness, make_settings


class Killed(BaseException):
    """The process died (not an error anything could catch)."""


class Recorder:
    """The real sink, delivering one message at a time and counting deliveries by outbox
    row; ``before_report(n)`` runs after the n-th delivery (from 1), before its result is
    reported — raise :class:`Killed` there to die between the server's acceptance and the
    record."""

    def __init__(self, inner: OutboundSink, before_report: Callable[[int], None] | None = None):
        self.inner = inner
        self.before_report = before_report
        self.delivered: Counter[str] = Counter()
        self.sequence: list[tuple[str, int]] = []  # (recipient, outbox id) as delivered

    async def send_batch(
        self,
        items: list[OutgoingMail],
        *,
        on_result: Callable[[DeliveryResult], None] | None = None,
    ) -> list[DeliveryResult]:
        results: list[DeliveryResult] = []
        for item in items:
            [result] = await self.inner.send_batch([item])
            self.delivered[item.id] += 1
            self.sequence.append((item.recipients[0], int(item.id)))
            if self.before_report is not None:
                self.before_report(sum(self.delivered.values()))
            results.append(result)
            if on_result is not None:
                on_result(result)
        return results


def outbox(db: Engine) -> dict[int, m.Outbox]:
    with Session(db) as session:
        return {r.id: r for r in session.exec(select(m.Outbox)).all() if r.id is not None}


def queue_mail(h: Harness) -> list[int]:
    """Two games: four mails waiting in the outbox, oldest first."""
    h.new_game((ALICE, BOB), seed="crash-outbox-1", deliver=False)
    h.new_game((CAROL, DAVE), seed="crash-outbox-2", deliver=False)
    return sorted(outbox(h.db))


def test_a_crash_mid_batch_sends_again_at_most_that_batch(harness: Harness) -> None:
    h = harness
    ids = queue_mail(h)

    def die_before_the_third(n: int) -> None:
        if n == 3:
            raise Killed  # the third mail is in the recipient's Maildir, not yet recorded

    first = Recorder(h.daemon.sender.sink, die_before_the_third)
    h.daemon.sender.sink = first
    h.daemon.sender.lanes = 1  # one lane: each batch is recorded when it is done
    h.daemon.sender.batch = 2  # two batches of two
    with pytest.raises(Killed):
        h.daemon.sender.drain()
    rows = outbox(h.db)
    assert [rows[i].status for i in ids] == ["sent", "sent", "sending", "sending"]
    for i in ids[2:]:  # the batch on the wire at the crash, all of it in flight
        assert (rows[i].last_error or "").startswith(IN_FLIGHT)
        assert rows[i].attempts == 1

    h.restart()
    assert sorted(h.daemon.sender.recover_interrupted()) == ids[2:]
    rows = outbox(h.db)
    for i in ids[2:]:
        assert "may have accepted it" in (rows[i].last_error or "")
        assert rows[i].attempts == 1  # it was tried
    second = Recorder(h.daemon.sender.sink)
    h.daemon.sender.sink = second
    assert h.daemon.sender.drain() == 2
    assert sorted(int(i) for i in second.delivered) == ids[2:]  # the first batch: never again
    assert {r.status for r in outbox(h.db).values()} == {"sent"}
    assert h.daemon.sender.recover_interrupted() == []
    twice = {int(i) for i, n in (first.delivered + second.delivered).items() if n > 1}
    assert twice == {ids[2]}  # the one delivered before the crash comes twice, same id


def test_a_crash_before_anything_went_out_is_known_to_have_sent_nothing(
    harness: Harness,
) -> None:
    h = harness
    ids = queue_mail(h)
    with Session(h.db) as session:  # a claim whose process died before it transmitted
        claimed = sorted(r.id or 0 for r in claim_due_outbox(session, h.clock(), 10))
        session.commit()
    assert claimed == ids
    h.restart()
    assert sorted(h.daemon.sender.recover_interrupted()) == ids
    rows = outbox(h.db)
    assert {r.last_error for r in rows.values()} == {f"{INTERRUPTED} before it was sent"}
    assert {r.attempts for r in rows.values()} == {0}  # claimed, never tried


def test_lanes_keep_each_recipients_order_and_a_crash_repeats_at_most_one_batch(
    harness: Harness,
) -> None:
    h = harness
    queue_mail(h)
    h.new_game((ALICE, CAROL), seed="crash-outbox-3", deliver=False)
    h.new_game((BOB, DAVE), seed="crash-outbox-4", deliver=False)
    ids = sorted(outbox(h.db))
    assert len(ids) == 8

    def die_at_the_fifth(n: int) -> None:
        if n == 5:
            raise Killed

    first = Recorder(h.daemon.sender.sink, die_at_the_fifth)
    h.daemon.sender.sink = first
    h.daemon.sender.batch = 4  # two batches of four, each over its lanes
    assert h.daemon.sender.lanes == 3
    with pytest.raises(Killed):
        h.daemon.sender.drain()
    rows = outbox(h.db)
    recorded = {i for i in ids if rows[i].status == "sent"}
    in_flight = {i for i in ids if (rows[i].last_error or "").startswith(IN_FLIGHT)}
    assert recorded == set(ids[:4])  # the first batch, recorded
    assert in_flight == set(ids[4:])  # the batch on the wire at the crash: all of it
    killed = first.sequence[4][1]  # delivered, then the process died
    assert killed in in_flight and killed not in recorded

    h.restart()
    h.daemon.sender.recover_interrupted()
    second = Recorder(h.daemon.sender.sink)
    h.daemon.sender.sink = second
    h.daemon.sender.drain()
    assert {r.status for r in outbox(h.db).values()} == {"sent"}
    again = {int(i) for i in second.delivered}
    assert not again & recorded  # what was recorded never goes out again
    twice = {int(i) for i, n in (first.delivered + second.delivered).items() if n > 1}
    assert twice <= in_flight  # a second copy only of a message of the batch on the wire
    for run in (first, second):  # one recipient's mail goes out in order
        for address in {a for a, _ in run.sequence}:
            mine = [i for a, i in run.sequence if a == address]
            assert mine == sorted(mine)


def test_rows_a_crash_left_sending_are_due_when_the_daemon_starts(harness: Harness) -> None:
    h = harness
    ids = queue_mail(h)
    h.daemon.sender.sink = Recorder(h.daemon.sender.sink, lambda n: _raise(Killed()))
    with pytest.raises(Killed):
        h.daemon.sender.drain()
    assert {r.status for r in outbox(h.db).values()} == {"sending"}  # leased for 5 minutes

    h.restart()
    h.daemon.run(once=True)  # the daemon recovers them first: no waiting out the lease
    rows = outbox(h.db)
    assert {r.status for r in rows.values()} == {"sent"}
    assert sorted(rows) == ids


@pytest.mark.parametrize(
    "db_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
def test_a_worker_takes_over_a_dead_workers_rows_never_a_live_ones(harness: Harness) -> None:
    h = harness
    ids = queue_mail(h)
    other = OutboxSender(h.db, h.daemon.sender.sink, lambda: datetime.now(UTC))
    seen_alive: list[list[int]] = []

    def while_sending(n: int) -> None:
        if n == 1:
            seen_alive.append(other.recover_interrupted())  # this sender is alive: hands off
        if n == 2:
            raise Killed

    h.daemon.sender.sink = Recorder(h.daemon.sender.sink, while_sending)
    h.daemon.sender.lanes = 1
    try:
        with pytest.raises(Killed):
            h.daemon.sender.drain()
        assert seen_alive == [[]]
        h.daemon.sender.close()  # its connection, and with it its row locks, is gone
        assert sorted(other.recover_interrupted()) == ids  # its batch, none recorded
        assert other.drain() == 4
        assert {r.status for r in outbox(h.db).values()} == {"sent"}
    finally:
        other.close()


def _raise(exc: BaseException) -> None:
    raise exc


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_failed_delivery_is_retried_when_its_backoff_ends_not_at_the_next_poll(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    settings = make_settings(tmp_path, db_url, poll_seconds=8, outbox_backoff_seconds=0.3)
    daemon = build_daemon(settings, db_engine)
    inner = daemon.sender.sink
    calls: list[float] = []

    class FailsOnce:
        async def send_batch(self, items: list[OutgoingMail]) -> list[DeliveryResult]:
            calls.append(time.monotonic())
            if len(calls) == 1:
                return [
                    DeliveryResult(i.id, r, ok=False, temporary=True, error="421 try later")
                    for i in items
                    for r in i.recipients
                ]
            return await inner.send_batch(items)

    daemon.sender.sink = FailsOnce()
    Service(settings, db_engine).new_game([ALICE, BOB], target=61, seed="backoff")
    thread = threading.Thread(target=daemon.run, daemon=True)
    started = time.monotonic()
    thread.start()
    try:
        deadline = started + 10
        while time.monotonic() < deadline:
            if {r.status for r in outbox(db_engine).values()} == {"sent"}:
                break
            time.sleep(0.05)
        assert {r.status for r in outbox(db_engine).values()} == {"sent"}
        assert len(calls) >= 2  # (each row has its own jitter)
        assert calls[-1] - calls[0] < 3.0  # backoff 0.3 s (+ jitter), not the 8 s poll
    finally:
        daemon.stop()
        thread.join(timeout=30)  # the wait for mail ends within the poll
    assert not thread.is_alive()
