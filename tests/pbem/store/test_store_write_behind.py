"""Writes held back for a batch (`WriteBehind`): merged per row, sent in one statement per
kind of write, visible to every read before they are sent, and checked when sent."""

from __future__ import annotations

import gc
from datetime import datetime, timedelta

import pytest
from sqlalchemy import event, text
from sqlmodel import Session

from pbem.store import Game
from pbem.store._sql import (
    WriteBehind,
    WriteConflict,
    hold_writes,
    release_writes,
    update_row,
)
from pbem.store.games import append_actions, table_by_token
from pbem.store.queries import load_actions
from tests.pbem.store.test_store_games import _game


def _stored(session: Session, game_id: int) -> tuple[int, str | None]:
    row = session.connection().execute(
        text("SELECT action_count, state_hash FROM game WHERE id = :id"), {"id": game_id}
    )
    count, state = row.one()
    return count, state


def _held_move(session: Session, now: datetime) -> tuple[int, WriteBehind]:
    """A stored game, the session holding writes back, and the game's first move logged."""
    game = _game(session, now)
    session.commit()
    assert game.id is not None
    behind = hold_writes(session)
    append_actions(session, game.id, 0, [(0, {"n": 0}, False)], now=now, state_hash="one")
    return game.id, behind


def test_held_back_writes_reach_the_database_only_when_flushed(
    session: Session, now: datetime
) -> None:
    game_id, behind = _held_move(session, now)
    game = session.get(Game, game_id)
    assert game is not None and game.id is not None
    append_actions(session, game.id, 1, [(1, {"n": 1}, False)], now=now, state_hash="two")
    found = table_by_token(session, "tok-a")
    assert found is not None
    seat = found[1][0][0]
    update_row(session, seat, last_mail_id="m1@x")
    update_row(session, seat, last_mail_id="m2@x")
    # the session's rows carry the new values; the database does not have them yet
    assert (game.action_count, game.state_hash) == (2, "two")
    assert _stored(session, game.id) == (0, None)
    assert load_actions(session, game.id) == []
    behind.flush(session)
    release_writes(session)
    assert _stored(session, game.id) == (2, "two")
    assert [a.seq for a in load_actions(session, game.id)] == [0, 1]
    last = session.connection().execute(
        text("SELECT last_mail_id FROM seat WHERE id = :id"), {"id": seat.id}
    )
    assert last.scalar_one() == "m2@x"  # two updates of one row: one write, the last value


def test_a_row_loaded_again_carries_the_held_back_values(session: Session, now: datetime) -> None:
    game = _game(session, now)
    session.commit()
    game_id = game.id
    assert game_id is not None
    hold_writes(session)
    append_actions(session, game_id, 0, [(0, {"n": 0}, False)], now=now, state_hash="one")
    del game
    session.expunge_all()  # the session forgets the row (as when nothing holds it)
    gc.collect()
    found = table_by_token(session, "tok-b")
    assert found is not None
    reloaded, seated, mine = found
    assert mine == 1 and len(seated) == 2
    assert (reloaded.action_count, reloaded.state_hash) == (1, "one")
    assert session.get(Game, game_id) is reloaded


def test_rewind_drops_the_writes_since_the_mark(session: Session, now: datetime) -> None:
    game_id, behind = _held_move(session, now)
    point = behind.mark()
    append_actions(session, game_id, 1, [(1, {"n": 1}, False)], now=now, state_hash="two")
    behind.rewind(point)
    behind.flush(session)
    assert _stored(session, game_id) == (1, "one")
    assert [a.seq for a in load_actions(session, game_id)] == [0]


def test_later_calls_run_at_the_flush_after_the_writes_and_rewind_drops_them(
    session: Session, now: datetime
) -> None:
    game_id, behind = _held_move(session, now)
    seen: list[tuple[str, tuple[int, str | None]]] = []
    behind.later(lambda held: seen.append(("first", _stored(held, game_id))))
    point = behind.mark()
    behind.later(lambda held: seen.append(("dropped", _stored(held, game_id))))
    behind.rewind(point)
    behind.later(lambda held: seen.append(("last", _stored(held, game_id))))
    assert seen == []  # nothing runs before the flush
    behind.flush(session)
    # In order, each seeing the held-back move already sent.
    assert seen == [("first", (1, "one")), ("last", (1, "one"))]
    behind.flush(session)
    assert len(seen) == 2  # run once


def test_a_counter_moved_on_before_the_flush_is_a_conflict(session: Session, now: datetime) -> None:
    game_id, behind = _held_move(session, now)
    session.connection().execute(
        text("UPDATE game SET action_count = 5 WHERE id = :id"), {"id": game_id}
    )
    with pytest.raises(WriteConflict, match="moved on"):
        behind.flush(session)
    session.rollback()
    assert _stored(session, game_id) == (0, None)


def test_updates_of_many_rows_go_in_one_statement(session: Session, now: datetime) -> None:
    games = [_game(session, now, (f"a{i}", f"b{i}")) for i in range(3)]
    session.commit()
    behind = hold_writes(session)
    later = now + timedelta(hours=1)
    for game in games:
        assert game.id is not None
        append_actions(session, game.id, 0, [(0, {"n": 0}, False)], now=later)
    statements: list[str] = []
    engine = session.get_bind()

    def record(conn: object, cursor: object, statement: str, *args: object) -> None:
        statements.append(statement.split()[0])

    event.listen(engine, "before_cursor_execute", record)
    try:
        behind.flush(session)
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert statements.count("UPDATE") == 1 and statements.count("INSERT") == 1
    for game in games:
        assert game.id is not None
        assert _stored(session, game.id)[0] == 1
