"""The outbox: at least once with stable Message-IDs, backoff after a temporary failure,
permanent failures shown by ``pbem outbox list`` and requeued by ``pbem outbox retry``.

A real Maildir cannot fail on demand, so ``FlakySink`` wraps the real one and fails the
calls a test asks it to; a recipient folder that cannot be created is a real failure.
"""

from __future__ import annotations

import email
from collections import Counter
from datetime import timedelta

import pytest

from pbem.transport.base import DeliveryResult, OutboundSink, OutgoingMail
from tests.e2e.helpers import ALICE, BOB, Harness, cli_env, reply, run_cli

A, B = ALICE[0], BOB[0]


class Killed(BaseException):
    """The process died (not an error the sender could catch)."""


class FlakySink:
    """The real Maildir sink, failing as ``plan`` says: one entry per ``send_batch`` call,
    ``"ok"``, ``"raise"`` (the connection broke), ``"temporary"`` or ``"permanent"``
    (per-recipient results), or ``"deliver-then-die"`` (delivered, then the process died
    before the results were recorded)."""

    def __init__(self, inner: OutboundSink, plan: list[str]) -> None:
        self.inner = inner
        self.plan = plan
        self.calls: list[list[str]] = []  # the Message-IDs of each call

    async def send_batch(self, items: list[OutgoingMail]) -> list[DeliveryResult]:
        ids = [str(email.message_from_bytes(i.raw)["Message-ID"]) for i in items]
        self.calls.append(ids)
        what = self.plan.pop(0) if self.plan else "ok"
        if what == "raise":
            raise ConnectionResetError("connection reset by peer")
        if what in ("temporary", "permanent"):
            return [
                DeliveryResult(i.id, r, ok=False, temporary=what == "temporary", error=f"{what} 4x")
                for i in items
                for r in i.recipients
            ]
        results = await self.inner.send_batch(items)
        if what == "deliver-then-die":
            raise Killed()
        return results


def install(h: Harness, plan: list[str]) -> FlakySink:
    sink = FlakySink(h.daemon.sender.sink, plan)
    h.daemon.sender.sink = sink
    return sink


def ids_in_maildir(h: Harness, address: str) -> Counter[str]:
    return Counter(str(msg["Message-ID"]) for msg in h.received(address))


def test_a_failed_batch_is_sent_again_with_the_same_message_ids(harness: Harness) -> None:
    h = harness
    sink = install(h, ["raise"])
    h.new_game(seed="flaky-1")
    rows = h.outbox()
    assert [r.status for r in rows] == ["pending", "pending"]
    assert all(r.attempts == 1 and "connection reset" in (r.last_error or "") for r in rows)
    assert h.count(A) == 0

    h.clock.advance(timedelta(minutes=2))
    h.step()
    assert [r.status for r in h.outbox()] == ["sent", "sent"]
    assert sorted(sink.calls[0]) == sorted(sink.calls[1])  # the same Message-IDs again
    assert sorted(sink.calls[1]) == sorted(r.message_id for r in rows)
    assert ids_in_maildir(h, A) == Counter({rows[0].message_id: 1})


def test_a_crash_after_delivery_never_gives_a_maildir_the_same_message_twice(
    harness: Harness,
) -> None:
    h = harness
    sink = install(h, ["deliver-then-die"])
    game = h.service.new_game([ALICE, BOB], target=61, seed="flaky-2")
    with pytest.raises(Killed):
        h.step()
    assert h.count(A) == 1 and h.count(B) == 1  # delivered, but not recorded as sent
    assert {r.status for r in h.outbox()} == {"sending"}

    h.restart()
    h.step()
    h.clock.advance(timedelta(minutes=6))  # past any lease the dead sender held
    h.step()  # sent again, and the Maildir keeps one copy
    assert {r.status for r in h.outbox()} == {"sent"}
    assert all(r.attempts >= 2 for r in h.outbox())
    for address in (A, B):
        assert h.count(address) == 1
        assert list(ids_in_maildir(h, address).values()) == [1]
    assert len(sink.calls) == 1
    # and the game goes on from there
    cards = sorted(h.game(game).holding(0))[:2]
    h.deliver(reply(h.latest(A), A, "Alice", "discard " + " ".join(c.ascii for c in cards)))
    assert h.last_inbound().status == "applied"


def test_temporary_failures_back_off_then_deliver(harness: Harness) -> None:
    h = harness
    sink = install(h, ["temporary", "temporary"])
    h.new_game(seed="flaky-3")
    first = h.outbox()
    assert all(r.status == "pending" and r.attempts == 1 for r in first)
    delay = first[0].next_attempt_at - h.clock.now
    assert timedelta(seconds=29) <= delay <= timedelta(seconds=38)

    h.step()  # not due yet: the sink is not even called
    assert len(sink.calls) == 1
    h.clock.advance(timedelta(seconds=40))
    h.step()
    second = h.outbox()
    assert all(r.status == "pending" and r.attempts == 2 for r in second)
    delay = second[0].next_attempt_at - h.clock.now
    assert timedelta(seconds=59) <= delay <= timedelta(seconds=76)  # doubled

    h.clock.advance(timedelta(seconds=40))
    h.step()
    assert len(sink.calls) == 2
    h.clock.advance(timedelta(seconds=40))
    h.step()
    assert [r.status for r in h.outbox()] == ["sent", "sent"]
    assert h.count(A) == 1 and h.count(B) == 1


def test_out_of_attempts_is_a_failure(harness: Harness) -> None:
    h = harness
    h.daemon.sender.max_attempts = 2
    install(h, ["temporary", "temporary"])
    h.new_game(seed="flaky-4")
    h.clock.advance(timedelta(minutes=5))
    h.step()
    assert {r.status for r in h.outbox()} == {"failed"}
    assert h.count(A) == 0


def test_a_permanent_failure_is_listed_and_can_be_retried(harness: Harness, db_url: str) -> None:
    h = harness
    install(h, ["permanent"])
    h.new_game(seed="flaky-5")
    assert {r.status for r in h.outbox()} == {"failed"}
    env = cli_env(h.tmp_path, db_url)

    listed = run_cli(env, "outbox", "list")
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.count("failed") >= 2 and "permanent 4x" in listed.stdout
    only = run_cli(env, "outbox", "list", "--status", "sent")
    assert "failed" not in only.stdout

    retried = run_cli(env, "outbox", "retry")
    assert retried.exit_code == 0 and "2 messages queued again" in retried.stdout
    assert {r.status for r in h.outbox()} == {"pending"}
    h.clock.catch_up()
    h.step()
    assert {r.status for r in h.outbox()} == {"sent"}
    assert h.count(A) == 1 and h.count(B) == 1
    again = run_cli(env, "outbox", "retry")
    assert "0 messages queued again" in again.stdout


def test_retry_by_id_requeues_only_that_message(harness: Harness, db_url: str) -> None:
    h = harness
    install(h, ["permanent"])
    h.new_game(seed="flaky-6")
    rows = h.outbox()
    env = cli_env(h.tmp_path, db_url)
    result = run_cli(env, "outbox", "retry", str(rows[1].id))
    assert result.exit_code == 0 and "1 messages queued again" in result.stdout
    h.clock.catch_up()
    h.step()
    assert [r.status for r in h.outbox()] == ["failed", "sent"]


def test_an_unwritable_recipient_folder_is_retried_later(harness: Harness) -> None:
    h = harness
    h.outbox_dir.mkdir(parents=True, exist_ok=True)
    blocker = h.outbox_dir / B  # a file where Bob's Maildir should be
    blocker.write_text("in the way")
    h.new_game(seed="flaky-7")
    status = {r.recipient: r for r in h.outbox()}
    assert status[A].status == "sent"
    assert status[B].status == "pending" and "cannot write" in (status[B].last_error or "")

    blocker.unlink()
    h.clock.advance(timedelta(minutes=1))
    h.step()
    assert {r.status for r in h.outbox()} == {"sent"}
    assert h.count(B) == 1
