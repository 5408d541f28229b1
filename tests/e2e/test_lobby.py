"""Games started by mail to the plain service address (the lobby): ``new`` against the
computer, ``games``, and who may do what (the ``lobby`` setting, blocked addresses, the
daily limit), through the daemon and real Maildirs on both databases."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from pbem.bots import text_of
from pbem.service import InjectedFault
from pbem.store import models as m
from tests.e2e.helpers import (
    ALICE,
    BOB,
    SERVICE_ADDRESS,
    STRANGER,
    Harness,
    cli_env,
    plain_mail,
    reply,
    run_cli,
)

A, B = ALICE[0], BOB[0]


@pytest.fixture
def open_lobby(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    """The service with ``lobby = open``: anyone may start a game."""
    harness = Harness.build(tmp_path, db_url, db_engine, lobby="open")
    yield harness
    harness.close()


@pytest.fixture
def closed_lobby(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(tmp_path, db_url, db_engine, lobby="closed")
    yield harness
    harness.close()


def ask(h: Harness, sender: str, body: str, **options: str) -> bytes:
    raw = plain_mail(sender, SERVICE_ADDRESS, body, **options)  # type: ignore[arg-type]
    h.deliver(raw)
    return raw


def games_of(h: Harness, address: str) -> list[m.Game]:
    with Session(h.db) as session:
        rows = session.exec(
            select(m.Game)
            .join(m.Seat, m.Seat.game_id == m.Game.id)  # type: ignore[arg-type]
            .join(m.Player, m.Player.id == m.Seat.player_id)  # type: ignore[arg-type]
            .where(m.Player.email == address)
        ).all()
        for row in rows:
            session.expunge(row)
        return list(rows)


def test_a_known_player_starts_a_game_against_the_computer_and_moves(harness: Harness) -> None:
    h = harness
    h.new_game()  # Alice is a player already (the default lobby is invite-only)
    before = h.count(A)
    raw = ask(h, A, "play computer to 61 muggins")
    row = h.last_inbound()
    assert row.status == "applied" and row.reason is not None
    assert row.reason.startswith("lobby: started game")
    game_id = row.game_id
    assert game_id is not None
    settings = h.game_row(game_id).settings
    assert settings["target"] == 61 and settings["muggins"] is True
    assert settings["computer"] == [1]
    first = h.received(A)[before:]
    assert len(first) == 1  # the new game's first mail is the answer
    request_id = str(parse_id(raw))
    assert str(first[0]["In-Reply-To"]) == request_id
    assert h.count(f"computer@{h.settings.domain}") == 0
    # Alice discards by replying to that mail: the move is applied.
    game = h.game(game_id)
    cards = sorted(game.holding(0))[:2]
    h.deliver(reply(first[0], A, "Alice", "discard " + " ".join(c.ascii for c in cards)))
    assert h.last_inbound().status == "applied"
    assert h.last_inbound().game_id == game_id
    assert any(seat == 0 for _, seat, _, _ in h.log(game_id))


def parse_id(raw: bytes) -> str:
    from tests.e2e.helpers import parse

    return str(parse(raw)["Message-ID"])


def test_new_with_three_players_fills_two_computer_seats(harness: Harness) -> None:
    h = harness
    h.new_game()
    ask(h, A, "new\n3 players\nno skunk")  # options on the line of the command only
    row = h.last_inbound()
    assert row.game_id is not None
    assert h.game_row(row.game_id).settings["players"] == 2
    ask(h, A, "new 3 players no skunk")
    row = h.last_inbound()
    assert row.game_id is not None
    settings = h.game_row(row.game_id).settings
    assert settings["players"] == 3 and settings["skunk"] == "none"
    assert settings["computer"] == [1, 2]


def test_a_bad_option_is_answered_and_starts_nothing(harness: Harness) -> None:
    h = harness
    h.new_game()
    games = len(games_of(h, A))
    before = h.count(A)
    raw = ask(h, A, "new to 100")
    assert h.last_inbound().status == "rejected"
    assert len(games_of(h, A)) == games
    answer = h.received(A)[before:]
    assert len(answer) == 1
    assert "61 or 121, not 100" in text_of(answer[0])
    assert str(answer[0]["In-Reply-To"]) == parse_id(raw)


def test_invite_only_ignores_a_stranger(harness: Harness) -> None:
    h = harness
    ask(h, STRANGER, "new")
    row = h.last_inbound()
    assert row.status == "ignored" and "invite-only" in (row.reason or "")
    assert h.count(STRANGER) == 0
    assert h.player(STRANGER) is None


def test_open_lobby_lets_a_stranger_play_the_computer(open_lobby: Harness) -> None:
    h = open_lobby
    ask(h, STRANGER, "play against the computer")
    row = h.last_inbound()
    assert row.status == "applied" and row.game_id is not None
    assert h.count(STRANGER) == 1
    assert h.player(STRANGER) is not None


def test_closed_lobby_tells_players_and_nobody_else(closed_lobby: Harness) -> None:
    h = closed_lobby
    h.new_game()
    before = h.count(A)
    ask(h, A, "new")
    assert h.last_inbound().status == "rejected"
    assert len(games_of(h, A)) == 1
    told = h.received(A)[before:]
    assert len(told) == 1 and "the admin starts games" in text_of(told[0])
    ask(h, STRANGER, "new")
    assert h.last_inbound().status == "ignored"
    assert h.count(STRANGER) == 0


def test_the_daily_limit_of_new_games(tmp_path: Path, db_url: str, db_engine: Engine) -> None:
    h = Harness.build(tmp_path, db_url, db_engine, max_new_games_per_day=2)
    try:
        h.new_game()
        ask(h, A, "new")
        ask(h, A, "new")
        assert len(games_of(h, A)) == 3
        before = h.count(A)
        ask(h, A, "new")
        row = h.last_inbound()
        assert row.status == "rejected" and "daily limit" in (row.reason or "")
        assert len(games_of(h, A)) == 3
        assert "No more games today" in str(h.received(A)[before]["Subject"])
        h.clock.advance(__import__("datetime").timedelta(days=1, minutes=1))
        ask(h, A, "new")
        assert h.last_inbound().status == "applied"
        assert len(games_of(h, A)) == 4
    finally:
        h.close()


def test_games_lists_my_games_with_my_reply_addresses(harness: Harness) -> None:
    h = harness
    game_id = h.new_game()
    before = h.count(A)
    raw = ask(h, A, "games")
    assert h.last_inbound().status == "applied"
    answer = h.received(A)[before:]
    assert len(answer) == 1
    text = text_of(answer[0])
    assert f"Game {game_id}" in text and h.token(game_id, 0) in text
    assert h.token(game_id, 1) not in text  # never another seat's address
    assert str(answer[0]["In-Reply-To"]) == parse_id(raw)


def test_a_blocked_address_is_ignored(harness: Harness, tmp_path: Path, db_url: str) -> None:
    h = harness
    h.new_game()
    env = cli_env(tmp_path, db_url)
    result = run_cli(env, "player", "block", A)
    assert result.exit_code == 0, result.output
    assert "blocked" in result.stdout
    h.clock.catch_up()
    before = h.count(A)
    ask(h, A, "new")
    row = h.last_inbound()
    assert row.status == "ignored" and "blocked" in (row.reason or "")
    ask(h, A, "games")
    assert h.last_inbound().status == "ignored"
    assert h.count(A) == before
    assert run_cli(env, "player", "unblock", A).exit_code == 0
    ask(h, A, "new")
    assert h.last_inbound().status == "applied"


def test_block_an_unknown_address_blocks_it_before_it_writes(
    open_lobby: Harness, tmp_path: Path, db_url: str
) -> None:
    h = open_lobby
    env = cli_env(tmp_path, db_url)
    assert run_cli(env, "player", "block", STRANGER).exit_code == 0
    h.clock.catch_up()
    ask(h, STRANGER, "new")
    assert h.last_inbound().status == "ignored"
    assert h.count(STRANGER) == 0
    bad = run_cli(env, "player", "block", "not an address")
    assert bad.exit_code == 1 and "not an email address" in bad.output


@pytest.mark.parametrize("step", ["before-mark", "before-commit"])
def test_a_crash_while_starting_a_game_starts_it_once(harness: Harness, step: str) -> None:
    h = harness
    h.new_game()
    games = len(games_of(h, A))
    before = h.count(A)
    outbox = len(h.outbox())
    h.send(plain_mail(A, SERVICE_ADDRESS, "new"))
    fired: list[str] = []

    def fault(at: str) -> None:
        if at == step and not fired:
            fired.append(at)
            raise InjectedFault(at)

    h.daemon.service.fault = fault
    with pytest.raises(InjectedFault):
        h.step()
    assert h.last_inbound().status == "pending"
    assert len(games_of(h, A)) == games and len(h.outbox()) == outbox
    h.restart()
    h.step()
    assert h.last_inbound().status == "applied"
    assert len(games_of(h, A)) == games + 1
    assert h.count(A) == before + 1
