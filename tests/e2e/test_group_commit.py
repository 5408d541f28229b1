"""Several messages to one transaction (`Service.process_many`, as the daemon processes a
batch): each message still ends exactly as it would alone, a failing one is rolled back
alone, and a crash before the commit loses nothing and applies nothing twice."""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

import pytest
from sqlalchemy import text
from sqlmodel import Session, select

from pbem.service import InjectedFault, Outcome
from pbem.service import moves as moves_module
from pbem.store import models as m
from pbem.store._sql import WriteBehind, WriteConflict
from tests.e2e.helpers import ALICE, BOB, CAROL, DAVE, Harness, reply
from tests.e2e.test_exactly_once import FaultOnce, assert_no_duplicates, discard

A, B, C = ALICE[0], BOB[0], CAROL[0]


def _stored(h: Harness, *raws: bytes) -> list[int]:
    return [inbound_id for inbound_id, _ in h.service.receive_many([(r, False) for r in raws], "t")]


def test_a_batch_applies_refuses_and_ignores_each_message_as_alone(harness: Harness) -> None:
    h = harness
    first = h.new_game(seed="batch-1")
    second = h.new_game((CAROL, DAVE), seed="batch-2")
    ids = _stored(
        h,
        reply(h.latest(A), A, "Alice", discard(h, first, 0)),
        reply(h.latest(C), C, "Carol", "play 5h"),  # nobody plays during the discard
        reply(h.latest(A), "mallory@example.net", "Mallory", discard(h, first, 0)),
    )
    outcomes = h.service.process_many(ids)
    assert [o.status for o in outcomes] == ["applied", "rejected", "ignored"]
    assert [o.game_id for o in outcomes] == [first, second, first]
    assert len(h.log(first)) == 1 and h.log(second) == []
    assert [row.status for row in h.inbound()] == ["applied", "rejected", "ignored"]
    h.step()
    assert_no_duplicates(h, A, B, C)


def test_two_moves_of_one_game_in_one_batch_apply_in_order(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="batch-same-game")
    ids = _stored(
        h,
        reply(h.latest(A), A, "Alice", discard(h, game, 0)),
        reply(h.latest(B), B, "Bob", discard(h, game, 1)),
    )
    assert [o.status for o in h.service.process_many(ids)] == ["applied", "applied"]
    log = h.log(game)
    assert [seq for seq, *_ in log][:2] == [0, 1] and [seat for _, seat, *_ in log][:2] == [0, 1]
    assert h.game(game).state_hash() == h.game_row(game).state_hash
    h.step()
    assert h.view(A).phase == "pegging"


def _break_parser_on(monkeypatch: pytest.MonkeyPatch, command: str, error: str) -> Any:
    """Make reading a reply that holds `command` raise RuntimeError(error); returns the
    real parser."""
    real = moves_module.parse_reply

    def broken(text: str, subject: str = "") -> object:
        if command in text:
            raise RuntimeError(error)
        return real(text, subject)

    monkeypatch.setattr(moves_module, "parse_reply", broken)
    return real


def test_an_unexpected_error_fails_only_its_own_message(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    first = h.new_game(seed="batch-err-1")
    second = h.new_game((CAROL, DAVE), seed="batch-err-2")
    broken = discard(h, second, 0)
    ids = _stored(
        h,
        reply(h.latest(A), A, "Alice", discard(h, first, 0)),
        reply(h.latest(C), C, "Carol", broken),
        reply(h.latest(B), B, "Bob", discard(h, first, 1)),
    )
    _break_parser_on(monkeypatch, broken, "the parser broke on this one")
    outcomes = h.service.process_many(ids)
    assert [o.status for o in outcomes] == ["applied", "failed", "applied"]
    assert "the parser broke" in outcomes[1].reason
    failed = next(row for row in h.inbound() if row.id == ids[1])
    assert failed.status == "failed" and "RuntimeError" in (failed.reason or "")
    assert len(h.log(first)) == 2 and h.log(second) == []


def test_a_failure_after_a_move_of_its_game_keeps_that_move(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failing message costs the batch its commit, not its moves: processed again one
    by one, the moves of the same game before and after it are applied, logged, threaded
    and counted, and it alone is recorded as failed."""
    h = harness
    game = h.new_game((ALICE, BOB, CAROL), seed="batch-err-same")
    broken = discard(h, game, 1)
    ids = _stored(
        h,
        reply(h.latest(A), A, "Alice", discard(h, game, 0)),
        reply(h.latest(B), B, "Bob", broken),
        reply(h.latest(C), C, "Carol", discard(h, game, 2)),
    )
    real = _break_parser_on(monkeypatch, broken, "the parser broke on Bob's")
    outcomes = h.service.process_many(ids)
    assert [o.status for o in outcomes] == ["applied", "failed", "applied"]
    assert [(seq, seat) for seq, seat, _, auto in h.log(game) if not auto] == [(0, 0), (1, 2)]
    row = h.game_row(game)
    assert row.action_count == len(h.log(game))
    assert h.game(game).state_hash() == row.state_hash
    h.step()
    for address, seat in ((A, 0), (B, 1), (C, 2)):
        mails = h.received(address)
        # every player's mails form one chain: each answers the one before
        for before, after in itertools.pairwise(mails):
            assert str(after["In-Reply-To"]) == str(before["Message-ID"])
        with Session(h.db) as session:
            stored = session.exec(
                select(m.Seat).where(m.Seat.game_id == game, m.Seat.seat == seat)
            ).one()
        assert f"<{stored.last_mail_id}>" == str(mails[-1]["Message-ID"])
    monkeypatch.setattr(moves_module, "parse_reply", real)
    h.deliver(reply(h.latest(B), B, "Bob", discard(h, game, 1)))
    assert h.view(A).phase == "pegging"


def test_held_back_writes_meeting_a_moved_game_fall_back_to_one_by_one(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should a game have moved on under the batch (no writer that locks its games can do
    that), nothing of the batch is committed and each message is processed alone."""
    h = harness
    first = h.new_game(seed="batch-conflict-1")
    second = h.new_game((CAROL, DAVE), seed="batch-conflict-2")
    outbox_before = len(h.outbox())
    ids = _stored(
        h,
        reply(h.latest(A), A, "Alice", discard(h, first, 0)),
        reply(h.latest(C), C, "Carol", discard(h, second, 0)),
        reply(h.latest(B), B, "Bob", discard(h, first, 1)),
    )
    real = WriteBehind.flush
    calls = {"n": 0}

    def conflicting(self: WriteBehind, session: object) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise WriteConflict("game: 1 of 2 rows had moved on (action_count)")
        real(self, session)  # type: ignore[arg-type]

    monkeypatch.setattr(WriteBehind, "flush", conflicting)
    outcomes = h.service.process_many(ids)
    assert [o.status for o in outcomes] == ["applied"] * 3
    assert [seat for _, seat, _, auto in h.log(first) if not auto] == [0, 1]
    assert [seat for _, seat, _, auto in h.log(second) if not auto] == [0]
    assert h.game(first).state_hash() == h.game_row(first).state_hash
    # The first game's starter is news to both its players (one discard alone is news to
    # nobody): two mails, once each.
    assert len(h.outbox()) == outbox_before + 2
    h.step()
    assert_no_duplicates(h, A, B, C)


@pytest.mark.parametrize("step", ["before-log", "before-mark", "before-commit"])
def test_a_crash_in_a_batch_keeps_every_message_pending(harness: Harness, step: str) -> None:
    h = harness
    game = h.new_game((ALICE, BOB, CAROL), seed="batch-crash")
    outbox_before = len(h.outbox())
    ids = _stored(
        h,
        reply(h.latest(A), A, "Alice", discard(h, game, 0)),
        reply(h.latest(B), B, "Bob", discard(h, game, 1)),
        reply(h.latest(C), C, "Carol", discard(h, game, 2)),
    )
    fault = FaultOnce(step)
    h.service.fault = fault
    with pytest.raises(InjectedFault):
        h.service.process_many(ids)
    assert fault.fired
    assert [row.status for row in h.inbound()] == ["pending"] * 3
    assert h.log(game) == [] and len(h.outbox()) == outbox_before

    outcomes = h.service.process_many(ids)  # the same process goes on
    assert [o.status for o in outcomes] == ["applied"] * 3
    assert len([a for a in h.log(game) if a[1] is not None and not a[3]]) == 3
    assert h.game(game).state_hash() == h.game_row(game).state_hash
    assert (
        h.service.process_many(ids)
        == [
            Outcome("ignored", "already processed"),
        ]
        * 3
    )
    h.step()
    assert_no_duplicates(h, A, B, C)


def test_receive_many_stores_each_message_once(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="receive-many")
    raw = reply(h.latest(A), A, "Alice", discard(h, game, 0))
    stored = h.service.receive_many(
        [(raw, False), (raw, False), (b"Subject: x\r\n\r\nhi", True)], "t"
    )
    assert [created for _, created in stored] == [True, False, True]
    assert stored[0][0] == stored[1][0]
    rows = h.inbound()
    assert [row.source for row in rows] == ["t", "t:oversize"]
    other = reply(h.latest(B), B, "Bob", discard(h, game, 1))
    again = h.service.receive_many([(other, False), (raw, False), (other, False)], "t")
    assert [created for _, created in again] == [True, False, False]
    assert again[1][0] == stored[0][0] and again[0][0] == again[2][0] != stored[0][0]
    assert [row.sender for row in h.inbound()] == [A, None, B]
    assert [o.status for o in h.service.process_many([again[1][0], again[0][0]])] == [
        "applied",
        "applied",
    ]


@pytest.mark.parametrize(
    "db_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
def test_a_batch_does_not_wait_for_a_game_another_worker_holds(harness: Harness) -> None:
    """PostgreSQL: a batch skips a game another transaction has locked (no waiting, no
    deadlock between two workers' batches); its message is applied alone afterwards."""
    h = harness
    busy = h.new_game(seed="held")
    free = h.new_game((CAROL, DAVE), seed="free")
    ids = _stored(
        h,
        reply(h.latest(A), A, "Alice", discard(h, busy, 0)),
        reply(h.latest(C), C, "Carol", discard(h, free, 0)),
    )
    holder = h.db.connect()
    holder.execute(text("SELECT id FROM game WHERE id = :id FOR UPDATE"), {"id": busy})
    result: list[list[Outcome]] = []
    worker = threading.Thread(target=lambda: result.append(h.service.process_many(ids)))
    worker.start()
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(h.log(free)) == 0:
            time.sleep(0.05)
        # The free game's move committed while the other game was still held.
        assert len(h.log(free)) == 1
        assert [row.status for row in h.inbound()] == ["pending", "applied"]
    finally:
        holder.rollback()
        holder.close()
        worker.join(10)
    assert not worker.is_alive()
    assert [o.status for o in result[0]] == ["applied", "applied"]
    assert len(h.log(busy)) == 1
