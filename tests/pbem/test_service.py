"""The service's admin operations, on both databases: new games, status changes,
resending, export and import."""

from __future__ import annotations

import email
from datetime import timedelta
from typing import Any

import pytest

from engine import Game
from engine import Settings as GameSettings
from pbem.demo.bots import command_for
from pbem.mail.reading import read_message
from pbem.service import Service, ServiceError, context
from pbem.service.context import ReadAhead
from tests.e2e.helpers import ALICE, BOB, CAROL, Harness, reply

A, B = ALICE[0], BOB[0]


def test_new_game_normalizes_addresses_and_mails_every_seat(harness: Harness) -> None:
    h = harness
    game = h.service.new_game([(" Alice@Example.COM ", "Alice"), (B, None)], target=61, seed="s")
    h.step()
    assert h.count(A) == 1 and h.count(B) == 1
    assert h.address_of(game, 0) == A
    assert h.token(game, 0) != h.token(game, 1)
    assert h.game_row(game).thread_id and h.game_row(game).settings["target"] == 61


@pytest.mark.parametrize(
    ("players", "options", "phrase"),
    [
        ([(A, None), ("nobody", None)], {}, "not an email address"),
        ([(A, None), (A.upper(), None)], {}, "cannot sit twice"),
        ([(A, None), (B, None)], {"target": 100}, "61 or 121"),
        ([(A, None)] + [(f"p{n}@x.org", None) for n in range(4)], {}, "not 5"),
    ],
)
def test_new_game_refuses(
    harness: Harness, players: list[tuple[str, str | None]], options: dict[str, Any], phrase: str
) -> None:
    with pytest.raises(ServiceError, match=phrase):
        harness.service.new_game(players, **options)
    assert harness.outbox() == []


def test_pause_stops_the_clocks_and_resume_restarts_them(harness: Harness) -> None:
    h = harness
    h.restart()
    h.daemon.service.settings = h.settings.model_copy(
        update={"reminder_hours": 24.0, "timeout_days": 7.0}
    )
    game = h.new_game(seed="clocks")
    row = h.game_row(game)
    assert row.next_reminder_at is not None and row.deadline_at is not None
    h.service.set_status(game, "paused")
    h.clock.advance(timedelta(days=3))
    assert h.service.run_timers() == 0  # no reminder while paused
    h.service.set_status(game, "active")
    later = h.game_row(game)
    assert later.paused_at is None
    assert later.next_reminder_at is not None and later.deadline_at is not None
    assert later.next_reminder_at - row.next_reminder_at >= timedelta(days=3)
    assert later.deadline_at - row.deadline_at >= timedelta(days=3)
    with pytest.raises(ServiceError, match="cannot make it active"):
        h.service.set_status(game, "active")
    h.service.set_status(game, "aborted")
    with pytest.raises(ServiceError, match="is aborted"):
        h.service.set_status(game, "paused")
    with pytest.raises(ServiceError, match="no game 99"):
        h.service.set_status(99, "paused")


def test_resend_twice_gives_two_distinct_mails(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="resend")
    assert h.service.resend(game) == 2
    assert h.service.resend(game) == 2
    h.step()
    ids = [str(m["Message-ID"]) for m in h.received(A)]
    assert len(ids) == 3 and len(set(ids)) == 3


def test_export_then_import_is_the_same_game_under_a_new_id(harness: Harness) -> None:
    h = harness
    game = h.new_game((ALICE, BOB, CAROL), seed="export")
    h.play_until(game, lambda g: len(g.actions) >= 5)
    archive = h.service.export(game)
    copy = h.service.import_archive(archive)
    assert copy != game
    assert h.game(copy).state_hash() == h.game(game).state_hash()
    assert h.game_row(copy).state_hash == h.game_row(game).state_hash
    assert h.token(copy, 0) != h.token(game, 0)
    assert [a for _, _, a, _ in h.log(copy)] == [a for _, _, a, _ in h.log(game)]


@pytest.mark.parametrize(
    ("players", "phrase"),
    [
        (None, "one player per seat"),
        ("ab", "one player per seat"),
        ([{"email": A}], "one player per seat"),
        ([{"name": "Alice"}, {"email": B}], "player 0 has no valid email address"),
        ([{"email": A}, "bob"], "player 1 has no valid email address"),
        ([{"email": A}, {"email": "not an address"}], "player 1 has no valid email address"),
        ([{"email": A}, {"email": 12}], "player 1 has no valid email address"),
        ([{"email": A}, {"email": " ALICE@example.com"}], "two seats"),
    ],
)
def test_import_refuses_an_archive_without_one_valid_player_per_seat(
    harness: Harness, players: object, phrase: str
) -> None:
    h = harness
    game = h.new_game(seed="bad-archive")
    archive = h.service.export(game)
    archive["players"] = players
    with pytest.raises(ServiceError, match=phrase):
        h.service.import_archive(archive)
    assert len(h.inbound()) == 0
    with pytest.raises(ServiceError, match="no game 2"):
        h.service.export(2)


def test_a_reply_is_parsed_once_from_its_arrival_to_its_answers(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stored, indexed, read by intake, answered: the reply's bytes are parsed once (when
    stored), and the mails that answer it are queued without being parsed at all."""
    h = harness
    game = h.new_game(seed="parsed-once")
    moves = len(h.log(game))
    for seat, (address, name) in enumerate((ALICE, BOB)):  # both discards: mail to both
        action = next(a for a in h.game(game).legal_actions() if a.seat == seat)
        h.send(reply(h.latest(address), address, name, command_for(action)))
    queued = len(h.outbox())
    parsed: list[bytes] = []
    real = email.message_from_bytes

    def counting(raw: bytes, *args: Any, **kwargs: Any) -> Any:
        parsed.append(raw)
        return real(raw, *args, **kwargs)

    monkeypatch.setattr(email, "message_from_bytes", counting)
    stats = h.step()
    assert stats.processed == 2 and len(h.log(game)) > moves
    # Each reply once; no answer parsed.
    assert len(parsed) == 2 and b"Alice" in parsed[0] and b"Bob" in parsed[1]
    assert len(h.outbox()) > queued  # its answers were queued (indexed: test_forget_index)


def test_the_mails_read_ahead_are_kept_up_to_a_bound() -> None:
    kept = ReadAhead(size=2)
    mails = [read_message(f"From: p{n}@example.org\r\n\r\nhand\r\n".encode()) for n in range(3)]
    for inbound_id, mail in enumerate(mails):
        kept.put(inbound_id, mail)
    assert kept.take(0) is None  # the oldest went first
    assert kept.take(2) is mails[2] and kept.take(2) is None  # taken once
    assert kept.take(1) is mails[1]


def test_a_game_another_worker_moved_takes_only_the_moves_since(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two services on one database, as two workers are: the one whose kept game is
    behind applies the actions logged since, and a kept game that does not lead where
    the game row says is replayed from the deal instead."""
    h = harness
    other = Service(h.settings, h.db, clock=h.clock)  # a second worker
    game = h.new_game(seed="behind")
    asked: list[int] = []
    real = context.load_actions

    def counting(session: Any, game_id: int, first_seq: int = 0) -> Any:
        asked.append(first_seq)
        return real(session, game_id, first_seq)

    monkeypatch.setattr(context, "load_actions", counting)

    def move(service: Service) -> None:
        action = h.game(game).legal_actions()[0]
        address, name = next(p for p in (ALICE, BOB) if p[0] == h.address_of(game, action.seat))
        raw = reply(h.latest(address), address, name, command_for(action))
        inbound_id, _ = service.receive(raw, "test")
        assert service.process(inbound_id).status == "applied"

    move(h.service)  # this worker keeps the game
    move(other)  # the other one moves it on
    asked.clear()
    move(h.service)
    assert asked and asked[0] > 0  # only the actions since
    row = h.game_row(game)
    assert h.game(game).state_hash() == row.state_hash
    assert len(h.game(game).actions) == row.action_count

    move(other)
    h.service._cache.games[game] = Game(GameSettings.from_json(row.settings), "not-it")
    asked.clear()
    move(h.service)  # a kept game off its log: replayed from the deal
    assert asked[-1] == 0
    assert h.game(game).state_hash() == h.game_row(game).state_hash
