"""Exactly once: a move by mail is applied once and its mails are queued once, whatever
is delivered twice and wherever the process dies."""

from __future__ import annotations

from collections import Counter

import pytest

from pbem.service import InjectedFault
from tests.e2e.helpers import ALICE, BOB, CAROL, Harness, reply

A, B, C = ALICE[0], BOB[0], CAROL[0]
STEPS = ("read", "before-log", "before-render", "before-mark", "before-commit")


class FaultOnce:
    """A fault hook that raises ``InjectedFault`` the first time ``step`` is reached."""

    def __init__(self, step: str) -> None:
        self.step = step
        self.fired = False

    def __call__(self, step: str) -> None:
        if step == self.step and not self.fired:
            self.fired = True
            raise InjectedFault(f"crash at {step}")


def discard(h: Harness, game: int, seat: int) -> str:
    state = h.game(game)
    cards = sorted(state.holding(seat))[: state.settings.discard_count]
    return "discard " + " ".join(c.ascii for c in cards)


def assert_no_duplicates(h: Harness, *addresses: str) -> None:
    for address in addresses:
        ids = Counter(str(msg["Message-ID"]) for msg in h.received(address))
        assert all(n == 1 for n in ids.values()), f"{address} got {ids.most_common(2)}"


def test_the_same_message_delivered_twice_moves_once(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="twice")
    raw = reply(h.latest(A), A, "Alice", discard(h, game, 0))
    h.send(raw)
    h.send(raw)  # the MTA delivered it twice
    stats = h.step()
    assert stats.fetched == 2 and stats.new == 1
    h.deliver(raw)  # and once more, much later
    rows = h.inbound()
    assert len(rows) == 1 and rows[0].status == "applied"
    assert len(h.log(game)) == 1
    assert h.count(A) == 1 and h.count(B) == 1  # one discard is news to nobody
    assert_no_duplicates(h, A, B)


@pytest.mark.parametrize("step", STEPS)
def test_a_crash_at_each_step_then_a_restart_applies_the_move_once(
    harness: Harness, step: str
) -> None:
    h = harness
    game = h.new_game((ALICE, BOB, CAROL), seed="crash")
    h.deliver(reply(h.latest(A), A, "Alice", discard(h, game, 0)))
    h.deliver(reply(h.latest(B), B, "Bob", discard(h, game, 1)))
    before = h.counts((A, B, C))
    outbox_before = len(h.outbox())

    # Carol's discard completes the crib, turns the starter and starts the play.
    h.send(reply(h.latest(C), C, "Carol", discard(h, game, 2), style="outlook"))
    fault = FaultOnce(step)
    h.daemon.service.fault = fault
    with pytest.raises(InjectedFault):
        h.step()
    assert fault.fired
    row = h.last_inbound()
    assert row.status == "pending"
    assert len(h.log(game)) == 2
    assert len(h.outbox()) == outbox_before
    assert h.counts((A, B, C)) == before

    h.restart()  # a new process: fetches the unacknowledged mail again
    stats = h.step()
    assert stats.new == 0
    row = h.last_inbound()
    assert row.status == "applied", row.reason
    assert row.attempts == 1
    log = h.log(game)
    assert len(log) == 3 and [seq for seq, *_ in log] == [0, 1, 2]
    assert len(h.outbox()) == outbox_before + 3
    assert h.counts((A, B, C)) == {a: before[a] + 1 for a in (A, B, C)}
    assert_no_duplicates(h, A, B, C)
    h.step()
    assert len(h.log(game)) == 3 and len(h.outbox()) == outbox_before + 3


@pytest.mark.parametrize("step", ["before-render", "before-commit"])
def test_a_crash_then_a_retry_in_the_same_process(harness: Harness, step: str) -> None:
    h = harness
    game = h.new_game(seed="retry")
    h.deliver(reply(h.latest(A), A, "Alice", discard(h, game, 0)))
    h.send(reply(h.latest(B), B, "Bob", discard(h, game, 1)))
    h.daemon.service.fault = FaultOnce(step)
    with pytest.raises(InjectedFault):
        h.step()
    h.step()  # the same daemon, its game cache and all, goes on
    assert h.last_inbound().status == "applied"
    assert len(h.log(game)) == 2
    game_now = h.game(game)
    assert game_now.state_hash() == h.game_row(game).state_hash
    assert_no_duplicates(h, A, B)
    # The next move still replays from the right state.
    lead = sorted(game_now.holding(game_now.to_act()[0]))[0]
    mover = h.address_of(game, game_now.to_act()[0])
    h.answer(mover, f"play {lead.ascii}")
    assert h.last_inbound().status == "applied", h.last_inbound().reason


@pytest.mark.parametrize("step", ["read", "before-commit"])
def test_a_crash_while_refusing_sends_the_refusal_once(harness: Harness, step: str) -> None:
    h = harness
    game = h.new_game(seed="refuse")
    h.send(reply(h.latest(A), A, "Alice", "what a lovely day"))
    h.daemon.service.fault = FaultOnce(step)
    with pytest.raises(InjectedFault):
        h.step()
    h.restart()
    h.step()
    assert h.last_inbound().status == "rejected"
    assert h.count(A) == 2 and h.count(B) == 1
    assert h.log(game) == []
    assert_no_duplicates(h, A)
