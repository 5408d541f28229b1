"""Games, seats and the action log."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from pbem.store import ActionLog, ConcurrentUpdateError, Game, GameStatus, Player, session_scope
from pbem.store.games import table_by_token, tables_by_tokens
from pbem.store.queries import (
    NewAction,
    append_actions,
    create_game,
    games_for_player,
    get_game,
    get_or_create_player,
    list_games,
    load_actions,
    seat_by_token,
    seat_players,
    seats_for_game,
    stalled_games,
    store_inbound,
)

SETTINGS = {"players": 2, "target": 121, "muggins": False, "skunk": True}


def _players(session: Session, now: datetime, *names: str) -> list[Player]:
    return [get_or_create_player(session, f"{name}@example.org", name, now=now) for name in names]


def _game(session: Session, now: datetime, tokens: tuple[str, str] = ("tok-a", "tok-b")) -> Game:
    ann, bob = _players(session, now, "ann", "bob")
    return create_game(session, SETTINGS, "seed-1", [ann, bob], list(tokens), now=now)


def test_create_game_seats_the_players_in_order(session: Session, now: datetime) -> None:
    game = _game(session, now)
    session.commit()
    assert game.id is not None
    assert game.status == GameStatus.ACTIVE
    assert game.game_type == "cribbage"
    assert game.settings == SETTINGS
    assert game.seed == "seed-1"
    assert (game.created_at, game.updated_at, game.last_move_at) == (now, now, now)
    assert (game.action_count, game.reminders_sent) == (0, 0)
    assert game.finished_at is None and game.outcome is None
    seats = seats_for_game(session, game.id)
    assert [(seat.seat, seat.token) for seat in seats] == [(0, "tok-a"), (1, "tok-b")]
    pairs = seat_players(session, game.id)
    assert [player.email for _, player in pairs] == ["ann@example.org", "bob@example.org"]


def test_create_game_checks_its_arguments(session: Session, now: datetime) -> None:
    ann, bob = _players(session, now, "ann", "bob")
    with pytest.raises(ValueError, match="2 players but 1 tokens"):
        create_game(session, SETTINGS, "s", [ann, bob], ["t"], now=now)
    with pytest.raises(ValueError, match="appears twice"):
        create_game(session, SETTINGS, "s", [ann, ann], ["t1", "t2"], now=now)


def test_tokens_are_unique(session: Session, now: datetime) -> None:
    _game(session, now, ("tok-a", "tok-b"))
    with pytest.raises(IntegrityError):
        _game(session, now, ("tok-c", "tok-a"))


def test_get_and_list_games(session: Session, now: datetime) -> None:
    first = _game(session, now, ("a1", "b1"))
    second = _game(session, now, ("a2", "b2"))
    second.status = GameStatus.FINISHED.value
    session.add(second)
    session.commit()
    assert first.id is not None and second.id is not None
    assert get_game(session, first.id) == first
    assert get_game(session, 10_000) is None
    assert list_games(session) == [first, second]
    assert list_games(session, GameStatus.ACTIVE) == [first]
    assert list_games(session, "finished") == [second]
    ann = seat_players(session, first.id)[0][1]
    assert ann.id is not None
    assert games_for_player(session, ann.id) == [first, second]
    assert games_for_player(session, ann.id, status="active") == [first]


def test_seat_by_token(session: Session, now: datetime) -> None:
    game = _game(session, now)
    session.commit()
    found = seat_by_token(session, "tok-b")
    assert found is not None
    seat, found_game, player = found
    assert (seat.seat, found_game.id, player.email) == (1, game.id, "bob@example.org")
    assert seat_by_token(session, "no-such-token") is None


def test_append_and_load_actions(session: Session, now: datetime) -> None:
    game = _game(session, now)
    assert game.id is not None
    later = now + timedelta(minutes=5)
    rows = append_actions(
        session,
        game.id,
        0,
        [
            NewAction(None, {"type": "deal"}, True),
            NewAction(0, {"type": "discard", "cards": ["5h", "5d"]}),
            (1, {"type": "discard", "cards": ["Jc", "2s"]}, False),
        ],
        now=later,
        state_hash="abc",
    )
    assert [row.seq for row in rows] == [0, 1, 2]
    more = append_actions(session, game.id, 3, [NewAction(None, {"type": "cut"}, True)], now=later)
    session.commit()
    session.expire_all()
    assert [row.seq for row in more] == [3]
    loaded = load_actions(session, game.id)
    assert [(a.seq, a.seat, a.action, a.auto) for a in loaded] == [
        (0, None, {"type": "deal"}, True),
        (1, 0, {"type": "discard", "cards": ["5h", "5d"]}, False),
        (2, 1, {"type": "discard", "cards": ["Jc", "2s"]}, False),
        (3, None, {"type": "cut"}, True),
    ]
    reloaded = get_game(session, game.id)
    assert reloaded is not None
    assert reloaded.action_count == 4
    assert reloaded.updated_at == later
    assert reloaded.state_hash == "abc"


def test_append_actions_links_the_inbound_message(session: Session, now: datetime) -> None:
    game = _game(session, now)
    inbound, _ = store_inbound(session, b"raw", "cli", "<m1@example.org>", now=now)
    assert game.id is not None
    (row,) = append_actions(session, game.id, 0, [(0, {"type": "go"}, False)], inbound.id, now=now)
    assert row.inbound_id == inbound.id


def test_a_seq_logged_twice_is_a_concurrent_update(db_engine: Engine, now: datetime) -> None:
    with session_scope(db_engine) as session:
        game = _game(session, now)
        assert game.id is not None
        game_id = game.id
        append_actions(session, game_id, 0, [(0, {"n": 0}, False)], now=now)
    with session_scope(db_engine) as session:
        with pytest.raises(ConcurrentUpdateError, match="tried to log action #0, but 1"):
            append_actions(session, game_id, 0, [(1, {"n": "late"}, False)], now=now)
        # The session is still usable, and nothing of the failed call was applied.
        append_actions(session, game_id, 1, [(1, {"n": 1}, False)], now=now)
    with session_scope(db_engine) as session:
        assert [a.action for a in load_actions(session, game_id)] == [{"n": 0}, {"n": 1}]


def test_a_gap_in_seq_is_refused(session: Session, now: datetime) -> None:
    game = _game(session, now)
    assert game.id is not None
    with pytest.raises(ConcurrentUpdateError):
        append_actions(session, game.id, 2, [(0, {"n": 2}, False)], now=now)
    with pytest.raises(ConcurrentUpdateError, match="does not exist"):
        append_actions(session, 10_000, 0, [(0, {"n": 0}, False)], now=now)


def test_the_unique_seq_catches_rows_logged_behind_the_counter(
    session: Session, now: datetime
) -> None:
    game = _game(session, now)
    assert game.id is not None
    session.add(ActionLog(game_id=game.id, seq=0, action={"stray": 1}, created_at=now))
    session.commit()
    with pytest.raises(ConcurrentUpdateError, match="already logged"):
        append_actions(session, game.id, 0, [(0, {"n": 0}, False)], now=now)
    session.rollback()
    reloaded = get_game(session, game.id)
    assert reloaded is not None and reloaded.action_count == 0


def test_stalled_games(session: Session, now: datetime) -> None:
    hour = timedelta(hours=1)
    quiet = _game(session, now, ("a1", "b1"))
    reminder_due = _game(session, now, ("a2", "b2"))
    deadline_due = _game(session, now, ("a3", "b3"))
    not_yet = _game(session, now, ("a4", "b4"))
    paused = _game(session, now, ("a5", "b5"))
    reminder_due.next_reminder_at = now - hour
    deadline_due.deadline_at = now
    not_yet.next_reminder_at = now + hour
    not_yet.deadline_at = now + hour
    paused.next_reminder_at = now - hour
    paused.status = GameStatus.PAUSED.value
    session.add_all([quiet, reminder_due, deadline_due, not_yet, paused])
    session.commit()
    assert stalled_games(session, now) == [reminder_due, deadline_due]
    assert stalled_games(session, now, limit=1) == [reminder_due]
    assert stalled_games(session, now + 2 * hour) == [reminder_due, deadline_due, not_yet]


def test_append_actions_writes_other_game_columns_in_the_same_update(
    session: Session, now: datetime
) -> None:
    game = _game(session, now)
    assert game.id is not None
    later = now + timedelta(hours=2)
    append_actions(
        session,
        game.id,
        0,
        [(0, {"type": "go"}, False)],
        now=later,
        also={"reminders_sent": 0, "next_reminder_at": later + timedelta(hours=24)},
    )
    assert game.next_reminder_at == later + timedelta(hours=24)  # the session's row too
    session.commit()
    session.expire_all()
    reloaded = get_game(session, game.id)
    assert reloaded is not None
    assert reloaded.action_count == 1 and reloaded.updated_at == later
    assert reloaded.next_reminder_at == later + timedelta(hours=24)


def test_tables_by_tokens_reads_several_tables_at_once(session: Session, now: datetime) -> None:
    first = _game(session, now, ("t1a", "t1b"))
    second = create_game(
        session, SETTINGS, "seed-2", _players(session, now, "cy", "di"), ["t2a", "t2b"], now=now
    )
    session.commit()
    tables = tables_by_tokens(session, ["t1b", "t2a", "t1a", "nope"])
    assert sorted(tables) == ["t1a", "t1b", "t2a"]
    game, seated, mine = tables["t1b"]
    assert game.id == first.id and mine == 1
    assert [seat.token for seat, _ in seated] == ["t1a", "t1b"]
    assert [player.email for _, player in seated] == ["ann@example.org", "bob@example.org"]
    assert tables["t1a"][0] is game and tables["t1a"][2] == 0
    assert tables["t2a"][0].id == second.id and tables["t2a"][2] == 0
    assert tables_by_tokens(session, []) == {} and tables_by_tokens(session, ["x"]) == {}
    single = table_by_token(session, "t2a")
    assert single is not None and single[0] is tables["t2a"][0]
