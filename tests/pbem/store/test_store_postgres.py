"""Concurrency on PostgreSQL: row locks, SKIP LOCKED, and races on unique keys.

Each test holds one transaction open while a second connection works on the same rows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import Engine

from pbem.store import ConcurrentUpdateError, new_session, session_scope
from pbem.store.games import table_by_token, tables_by_tokens
from pbem.store.queries import (
    append_actions,
    claim_due_outbox,
    claim_pending_inbound,
    create_game,
    enqueue_outbox,
    error_throttle_allows,
    get_or_create_player,
    store_inbound,
)

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.parametrize("db_url", ["postgres"], indirect=True),
]


class Background:
    """Run `work` on its own thread and keep its result or exception."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), daemon=True)
        self._thread.start()

    def _run(self, work: Callable[[], Any]) -> None:
        try:
            self.result = work()
        except BaseException as exc:
            self.error = exc

    def is_blocked(self, seconds: float = 0.5) -> bool:
        self._thread.join(seconds)
        return self._thread.is_alive()

    def join(self) -> None:
        self._thread.join(30)
        assert not self._thread.is_alive(), "the second connection never finished"


def test_two_workers_claim_different_inbound_rows(db_engine: Engine, now: datetime) -> None:
    with session_scope(db_engine) as session:
        for n in range(5):
            store_inbound(session, b"message %d" % n, "imap", now=now)
    with new_session(db_engine) as first, new_session(db_engine) as second:
        mine = claim_pending_inbound(first, limit=3)
        theirs = claim_pending_inbound(second, limit=3)
        assert len(mine) == 3
        assert len(theirs) == 2
        assert {row.id for row in mine}.isdisjoint({row.id for row in theirs})
        first.rollback()
        second.rollback()


def test_two_senders_claim_different_outbox_rows(db_engine: Engine, now: datetime) -> None:
    with session_scope(db_engine) as session:
        for n in range(4):
            enqueue_outbox(session, f"<m{n}@x>", "a@x.org", "p@x.org", "turn", b"raw", now=now)
    with new_session(db_engine) as first, new_session(db_engine) as second:
        mine = claim_due_outbox(first, now, limit=2)
        theirs = claim_due_outbox(second, now, limit=10)
        assert {row.id for row in mine}.isdisjoint({row.id for row in theirs})
        assert len(mine) + len(theirs) == 4
        first.commit()
        second.commit()
    with new_session(db_engine) as third:
        assert claim_due_outbox(third, now) == []


def test_a_concurrent_redelivery_waits_and_is_deduplicated(
    db_engine: Engine, now: datetime
) -> None:
    def deliver_again() -> tuple[int | None, bool]:
        with session_scope(db_engine) as session:
            row, created = store_inbound(session, b"copy 2", "imap", "<same@x>", now=now)
            return row.id, created

    with new_session(db_engine) as first:
        row, created = store_inbound(first, b"copy 1", "maildir", "<same@x>", now=now)
        assert created
        other = Background(deliver_again)
        assert other.is_blocked(), "the second insert should wait for the first transaction"
        first.commit()
        other.join()
    assert other.error is None
    assert other.result == (row.id, False)


def test_a_concurrent_move_on_the_same_game_is_refused(db_engine: Engine, now: datetime) -> None:
    with session_scope(db_engine) as session:
        ann = get_or_create_player(session, "ann@example.org", now=now)
        bob = get_or_create_player(session, "bob@example.org", now=now)
        game = create_game(session, {}, "seed", [ann, bob], ["ta", "tb"], now=now)
        game_id = game.id
    assert game_id is not None

    def move_too() -> None:
        with session_scope(db_engine) as session:
            append_actions(session, game_id, 0, [(1, {"by": "bob"}, False)], now=now)

    with new_session(db_engine) as first:
        append_actions(first, game_id, 0, [(0, {"by": "ann"}, False)], now=now)
        other = Background(move_too)
        assert other.is_blocked(), "the second move should wait for the game row"
        first.commit()
        other.join()
    assert isinstance(other.error, ConcurrentUpdateError)


def test_concurrent_error_replies_are_throttled_once(db_engine: Engine, now: datetime) -> None:
    def ask() -> bool:
        with session_scope(db_engine) as session:
            return error_throttle_allows(session, "ann@example.org", "unknown", now=now)

    with new_session(db_engine) as first:
        assert error_throttle_allows(first, "ann@example.org", "unknown", now=now)
        other = Background(ask)
        assert other.is_blocked()
        first.commit()
        other.join()
    assert other.error is None
    assert other.result is False


def test_a_table_another_transaction_holds_is_not_waited_for(
    db_engine: Engine, now: datetime
) -> None:
    """`table_by_token(wait=False)`, as a batch reads: a held game raises at once and the
    transaction goes on; an unknown token is None, not busy."""
    with session_scope(db_engine) as session:
        ann = get_or_create_player(session, "ann@example.org", now=now)
        bob = get_or_create_player(session, "bob@example.org", now=now)
        game = create_game(session, {"players": 2}, "seed", [ann, bob], ["ta", "tb"], now=now)
        other_game = create_game(session, {"players": 2}, "s2", [ann, bob], ["tc", "td"], now=now)
        held_id, free_id = game.id, other_game.id

    with new_session(db_engine) as holder:
        found = table_by_token(holder, "ta")  # locks the game and its seats
        assert found is not None and found[0].id == held_id
        with new_session(db_engine) as batch:
            with pytest.raises(ConcurrentUpdateError, match="busy"):
                table_by_token(batch, "tb", wait=False)
            assert table_by_token(batch, "nope", wait=False) is None
            free = table_by_token(batch, "tc", wait=False)  # the transaction goes on
            assert free is not None and free[0].id == free_id and free[2] == 0
            batch.commit()
        holder.commit()
    with new_session(db_engine) as batch:
        again = table_by_token(batch, "tb", wait=False)
        assert again is not None and again[2] == 1


def test_tables_by_tokens_leaves_out_a_held_game(db_engine: Engine, now: datetime) -> None:
    with session_scope(db_engine) as session:
        ann = get_or_create_player(session, "ann@example.org", now=now)
        bob = get_or_create_player(session, "bob@example.org", now=now)
        create_game(session, {"players": 2}, "seed", [ann, bob], ["ta", "tb"], now=now)
        create_game(session, {"players": 2}, "s2", [ann, bob], ["tc", "td"], now=now)

    with new_session(db_engine) as holder:
        assert table_by_token(holder, "ta") is not None  # holds the first game
        with new_session(db_engine) as batch:
            tables = tables_by_tokens(batch, ["tb", "tc", "td"])
            assert sorted(tables) == ["tc", "td"]  # not waited for, not an error
            with pytest.raises(ConcurrentUpdateError):
                table_by_token(batch, "tb", wait=False)
            batch.commit()
        holder.commit()
