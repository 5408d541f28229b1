"""The daemon loop: store → process → ack → send, its locks, and crashes between steps."""

from __future__ import annotations

import gc
from collections.abc import Sequence
from pathlib import Path

import pytest
from sqlalchemy import Engine

from pbem.run.lock import DaemonError, SingleProcessLock, lock_for
from pbem.run.runtime import freeze_startup_objects
from pbem.service import InjectedFault, Outcome
from tests.e2e.helpers import ALICE, BOB, Harness, reply

A, B = ALICE[0], BOB[0]


def discard(h: Harness, game: int, seat: int) -> str:
    return "discard " + " ".join(c.ascii for c in sorted(h.game(game).holding(seat))[:2])


def unseen(h: Harness) -> int:
    """Inbox messages not yet acknowledged."""
    return sum(
        1 for sub in ("new", "cur") for p in (h.inbox_dir / sub).iterdir() if ":2,S" not in p.name
    )


def test_a_second_daemon_on_one_sqlite_database_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'pbem.sqlite'}"
    first, second = lock_for(url), lock_for(url)
    assert isinstance(first, SingleProcessLock) and isinstance(second, SingleProcessLock)
    first.acquire()
    try:
        with pytest.raises(DaemonError, match="another pbem serve is already running"):
            second.acquire()
    finally:
        first.release()
    second.acquire()  # free again once the first one stopped
    second.release()
    assert lock_for("postgresql+psycopg://u@h/db") is None


def test_the_inbox_reader_lock_passes_to_the_next_daemon_in_the_process(
    harness: Harness, db_engine: Engine
) -> None:
    # On PostgreSQL the reader lock is an advisory lock; on SQLite the one daemon always
    # reads, and its file lock must likewise be free again after it stops.
    h = harness
    game = h.new_game(seed="reader")
    assert h.daemon.is_reader()
    h.daemon.run(once=True)  # stops, and lets go of the lock
    h.restart()
    h.deliver(reply(h.latest(A), A, "Alice", discard(h, game, 0)))
    assert h.last_inbound().status == "applied"
    assert len(h.log(game)) == 1


def test_killed_after_storing_before_processing(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="kill-1")
    h.send(reply(h.latest(A), A, "Alice", discard(h, game, 0)))
    h.send(reply(h.latest(B), B, "Bob", discard(h, game, 1)))

    def killed(inbound_ids: Sequence[int]) -> list[Outcome]:
        raise InjectedFault("killed after storing")

    h.daemon.service.process_many = killed  # type: ignore[method-assign]
    with pytest.raises(InjectedFault):
        h.step()
    assert [r.status for r in h.inbound()] == ["pending", "pending"]
    assert unseen(h) == 2  # not acknowledged: the inbox still has them

    h.restart()
    stats = h.step()
    assert stats.fetched == 2 and stats.new == 0  # fetched again, already stored
    assert [r.status for r in h.inbound()] == ["applied", "applied"]
    assert len(h.log(game)) == 2
    assert unseen(h) == 0
    h.step()
    assert len(h.inbound()) == 2 and len(h.log(game)) == 2


def test_killed_after_processing_before_the_inbox_ack(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="kill-2")
    h.send(reply(h.latest(A), A, "Alice", discard(h, game, 0)))

    def killed(key: str) -> None:
        raise InjectedFault("killed before the ack")

    h.daemon.inbox.ack = killed  # type: ignore[method-assign]
    with pytest.raises(InjectedFault):
        h.step()
    assert h.last_inbound().status == "applied"
    assert unseen(h) == 1
    outbox = len(h.outbox())

    h.restart()
    stats = h.step()
    assert stats.fetched == 1 and stats.new == 0 and stats.processed == 0
    assert unseen(h) == 0
    assert len(h.log(game)) == 1
    assert len(h.outbox()) == outbox
    # the mails queued by the first run went out once the new daemon drained the outbox
    assert all(row.status == "sent" for row in h.outbox())
    assert len({msg["Message-ID"] for msg in h.received(A)}) == len(h.received(A))


def test_run_once_stops_when_idle_and_releases_the_sqlite_lock(
    harness: Harness, db_engine: Engine
) -> None:
    h = harness
    game = h.new_game(seed="once", deliver=False)
    h.daemon.run(once=True)
    assert h.count(A) == 1 and h.count(B) == 1
    h.send(reply(h.latest(A), A, "Alice", discard(h, game, 0)))
    h.restart()
    h.daemon.run(once=True)
    assert h.last_inbound().status == "applied"
    assert h.count(B) == 1  # already asked to discard: no news for Bob
    lock = lock_for(h.settings.db_url)
    if db_engine.dialect.name == "sqlite":
        assert lock is not None
        lock.acquire()
        lock.release()


def test_a_started_daemon_keeps_its_startup_objects_out_of_full_collections() -> None:
    """`pbem serve` freezes what is alive once it has started: a full collection then
    walks only what came later (it took 60-100 ms a time with everything in view)."""
    gc.unfreeze()
    try:
        freeze_startup_objects()
        frozen = gc.get_freeze_count()
        assert frozen > 10_000
        assert len(gc.get_objects()) < frozen
    finally:
        gc.unfreeze()
