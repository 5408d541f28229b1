"""Slow games on a test clock (no sleeping): reminders to the player whose move it is,
repeated; ``pbem game stalled``; the timeout's forfeit, autoplay and none; and pause/resume,
which stops the clocks and shifts the deadlines by the time paused. On Maildir transports
and both databases."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from datetime import timedelta
from email.message import EmailMessage
from functools import partial
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from sqlalchemy import Engine

import pbem.service
from engine import Resign, computer
from engine.archive import load
from pbem.demo.bots import view_of
from pbem.service import Service
from tests.e2e.helpers import ALICE, BOB, CAROL, CliResult, Harness, about, cli_env, run_cli

A, B = ALICE[0], BOB[0]
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
MINUTE = timedelta(minutes=1)

Build = Callable[..., Harness]


@pytest.fixture
def timed(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Build]:
    """Harnesses with the production clocks: a reminder after 24 h, the timeout after 7 days."""
    made: list[Harness] = []

    def build(**overrides: Any) -> Harness:
        values: dict[str, Any] = {
            "reminder_hours": 24,
            "timeout_days": 7,
            "timeout_action": "autoplay",
        }
        values.update(overrides)
        harness = Harness.build(tmp_path / f"h{len(made)}", db_url, db_engine, **values)
        made.append(harness)
        return harness

    yield build
    for harness in made:
        harness.close()


def cli(h: Harness, *args: str) -> CliResult:
    """``pbem ARGS`` on the harness's database, reading the harness's clock."""
    env = cli_env(h.settings.data_dir, h.settings.db_url)
    with mock.patch.object(pbem.service, "Service", partial(Service, clock=h.clock)):
        result = run_cli(env, *args)
    assert result.exit_code == 0, result.output
    return result


def alice_moves_first(h: Harness, **options: Any) -> int:
    """A two-player game to 61 where Alice has discarded: it waits on Bob alone."""
    game_id = h.new_game((ALICE, BOB), seed="timers", **options)
    game = h.game(game_id)
    h.move(game_id, computer.choose_action(game, 0, random.Random(1)))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert h.game(game_id).to_act() == (1,)
    return game_id


def stalled(h: Harness, *options: str) -> list[list[str]]:
    """The rows of ``pbem game stalled``, as lists of cells."""
    table = cli(h, "game", "stalled", *options).stdout
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in table.splitlines()]
    return [row for row in rows if row and row[0].isdigit()]


def plain(msg: EmailMessage) -> str:
    """The plain-text part, with its white space folded."""
    part = msg.get_body(("plain",))
    assert part is not None
    return " ".join(str(part.get_content()).split())


def kinds(h: Harness, address: str, since: int) -> list[str]:
    return [r.kind for r in h.outbox() if r.recipient == address][since:]


def sent(h: Harness, address: str) -> int:
    return sum(r.recipient == address for r in h.outbox())


def advance(h: Harness, delta: timedelta) -> None:
    h.clock.advance(delta)
    h.step()


def test_a_reminder_to_the_player_to_move_only_repeated(timed: Build) -> None:
    h = timed()
    game_id = alice_moves_first(h)
    a, b = sent(h, A), sent(h, B)

    advance(h, 24 * HOUR - MINUTE)
    assert (sent(h, A), sent(h, B)) == (a, b)
    advance(h, 2 * MINUTE)
    assert sent(h, A) == a and kinds(h, B, b) == ["reminder"]
    reminder = h.latest(B)
    assert "Reminder" in about(reminder)
    assert "waiting for your move for 24 hours" in plain(reminder)
    view = view_of(reminder)
    assert view is not None and view.my_turn
    assert str(reminder["In-Reply-To"]) == str(h.received(B)[-2]["Message-ID"])
    assert h.token(game_id, 1) in str(reminder["Reply-To"])
    assert h.game_row(game_id).reminders_sent == 1

    h.step()
    advance(h, 23 * HOUR)
    assert sent(h, B) == b + 1  # not again before another 24 hours
    advance(h, 2 * HOUR)
    assert kinds(h, B, b) == ["reminder", "reminder"] and sent(h, A) == a
    assert h.game_row(game_id).reminders_sent == 2
    assert len({str(m["Message-ID"]) for m in h.received(B)}) == len(h.received(B))

    # A move restarts the clock; the next reminder goes to whoever must move then.
    game = h.game(game_id)
    h.move(game_id, computer.choose_action(game, 1, random.Random(2)))
    assert h.game_row(game_id).reminders_sent == 0
    to_act = h.game(game_id).to_act()
    a, b = sent(h, A), sent(h, B)
    advance(h, 24 * HOUR + MINUTE)
    waiting = {A: sent(h, A) - a, B: sent(h, B) - b}
    assert waiting == {A: int(0 in to_act), B: int(1 in to_act)}


def test_stalled_lists_games_waiting_on_a_player(timed: Build) -> None:
    h = timed()
    slow = alice_moves_first(h)
    h.clock.advance(20 * HOUR)
    fresh = h.new_game((ALICE, CAROL), seed="fresh")
    h.clock.advance(6 * HOUR)
    rows = stalled(h)
    assert [row[0] for row in rows] == [str(slow)], rows
    assert rows[0][1:4] == ["Bob", "2024-03-01 12:00", "26.0 h"]
    assert [row[0] for row in stalled(h, "--hours", "1")] == [str(slow), str(fresh)]
    assert stalled(h, "--hours", "30") == []
    cli(h, "game", "pause", str(slow))
    assert [row[0] for row in stalled(h, "--hours", "1")] == [str(fresh)]


def test_timeout_forfeit(timed: Build) -> None:
    h = timed(timeout_action="forfeit", reminder_hours=0)
    game_id = alice_moves_first(h)
    a, b = sent(h, A), sent(h, B)
    advance(h, 7 * DAY - MINUTE)
    assert h.game_row(game_id).status == "active" and (sent(h, A), sent(h, B)) == (a, b)

    advance(h, 2 * MINUTE)
    row = h.game_row(game_id)
    assert row.status == "finished" and row.outcome is not None
    game = h.game(game_id)
    assert game.is_over and game.outcome is not None
    assert list(game.outcome.winner_seats) == [0]
    assert game.actions[-1] == Resign(1, "timeout")
    assert h.log(game_id)[-1][3] is True  # logged as automatic
    for address in (A, B):
        assert kinds(h, address, -1) == ["gameover"]
        assert "ran out of time" in plain(h.latest(address))
    archived = load(h.service.export(game_id))
    assert archived.state_hash() == game.state_hash()
    advance(h, 30 * DAY)
    assert (sent(h, A), sent(h, B)) == (a + 1, b + 1)  # nothing more, ever


def test_timeout_autoplay(timed: Build) -> None:
    h = timed(timeout_action="autoplay", reminder_hours=0)
    game_id = alice_moves_first(h)
    before = len(h.game(game_id).actions)
    a, b = sent(h, A), sent(h, B)
    advance(h, 7 * DAY + MINUTE)
    row = h.game_row(game_id)
    assert row.status == "active"
    game = h.game(game_id)
    assert len(game.actions) > before
    moved = h.log(game_id)[before]
    assert moved[1] == 1 and moved[2]["type"] == "discard" and moved[3] is True
    assert row.deadline_at == row.last_move_at + 7 * DAY
    for address, count in ((A, a), (B, b)):
        assert kinds(h, address, count) == ["turn"]
        assert "the computer moved for them" in plain(h.latest(address))
    # The game goes on by mail.
    seat = game.to_act()[0]
    h.move(game_id, computer.choose_action(game, seat, random.Random(3)))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert load(h.service.export(game_id)).state_hash() == h.game(game_id).state_hash()


def test_timeout_none(timed: Build) -> None:
    h = timed(timeout_action="none", reminder_hours=0)
    game_id = alice_moves_first(h)
    before = len(h.game(game_id).actions)
    a, b = sent(h, A), sent(h, B)
    for _ in range(3):
        advance(h, 7 * DAY)
    row = h.game_row(game_id)
    assert row.status == "active" and row.deadline_at is None
    assert len(h.game(game_id).actions) == before
    assert (sent(h, A), sent(h, B)) == (a, b)
    h.move(game_id, computer.choose_action(h.game(game_id), 1, random.Random(4)))
    assert h.last_inbound().status == "applied"
    assert h.game_row(game_id).deadline_at is not None  # a move starts the clock again


def test_pause_stops_the_clocks_and_resume_shifts_the_deadlines(timed: Build) -> None:
    h = timed()
    game_id = alice_moves_first(h)
    row = h.game_row(game_id)
    assert row.next_reminder_at is not None and row.deadline_at is not None
    reminder, deadline = row.next_reminder_at, row.deadline_at
    moves = len(h.game(game_id).actions)
    b = sent(h, B)

    h.clock.advance(12 * HOUR)
    cli(h, "game", "pause", str(game_id))
    paused_at = h.game_row(game_id).paused_at
    assert paused_at is not None
    for _ in range(10):
        advance(h, DAY)  # past the reminder and the deadline: the clocks stand still
    # Bob was told of the pause, and of nothing since.
    assert kinds(h, B, b) == ["paused"] and len(h.game(game_id).actions) == moves
    assert h.game_row(game_id).status == "paused"

    cli(h, "game", "resume", str(game_id))
    row = h.game_row(game_id)
    assert row.status == "active" and row.paused_at is None
    assert row.next_reminder_at is not None and row.deadline_at is not None
    gap = row.next_reminder_at - reminder
    assert 10 * DAY <= gap < 10 * DAY + MINUTE
    assert row.deadline_at - deadline == gap

    # Twelve hours were left before the reminder when the game was paused.
    advance(h, 12 * HOUR - MINUTE)
    assert kinds(h, B, b) == ["paused", "resumed"]
    advance(h, 2 * MINUTE)
    assert kinds(h, B, b) == ["paused", "resumed", "reminder"]
    # And six and a half days before the deadline.
    h.clock.now = row.deadline_at - MINUTE
    h.step()
    assert len(h.game(game_id).actions) == moves
    advance(h, 2 * MINUTE)
    assert len(h.game(game_id).actions) > moves  # autoplay moved for Bob
