"""What the mails say and how many there are, by mail through the daemon, real Maildirs
and SQLite: an observer gets one mail a move, its table talk under its own
heading, and a first mail that tells the hand "so far"; every setting of a mail is
confirmed in that mail's answer, moves beside it or not, and the other players are told
when observers are asked for, let in or shut out; a mail outside any game offers only
what works there."""

from __future__ import annotations

import random
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import Engine

from engine import Game
from engine.computer import choose_action
from pbem.demo.bots import command_for, text_of
from tests.e2e.helpers import (
    ALICE,
    BOB,
    CAROL,
    DOMAIN,
    Harness,
    about,
    plain_mail,
    reply,
)

# What the mails say does not depend on the database: these checks of the words run on
# SQLite only. Every database path they take runs on both backends in the other e2e tests
# (commands, refusals, crashes, batches), so a second copy here would only read the same
# mails again, at a cost that mattered to the suite's time limit.
pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)

A, B, C = ALICE[0], BOB[0], CAROL[0]
SERVICE = f"cribbage@{DOMAIN}"
COMPUTER = ("computer@pbem.test", "Computer")


def flat(text: str) -> str:
    return " ".join(text.split())


def said(msg: EmailMessage) -> str:
    return flat(text_of(msg))


def html_of(msg: EmailMessage) -> str:
    part = msg.get_body(("html",))
    return str(part.get_content()) if part is not None else ""


def footer(msg: EmailMessage) -> str:
    """The text part's last lines, below the "-- " line."""
    text = text_of(msg).replace("\r\n", "\n")
    return flat(text.rsplit("\n-- \n", 1)[-1])


def write(h: Harness, sender: str, body: str) -> None:
    """``sender`` writes ``body`` to the plain address; a request the policy holds for
    the sender's confirmation (``watch``) is confirmed by replying to it."""
    before = h.count(sender)
    h.deliver(plain_mail(sender, SERVICE, body))
    new = h.new_mail(sender, before)
    if new and "Please confirm your request" in str(new[-1]["Subject"]):
        assert '"history"' not in footer(new[-1]) and '"hand"' not in footer(new[-1])
        h.deliver(reply(new[-1], sender, sender.split("@")[0].title(), "yes"))


def a_move(game: Game, seat: int, rng: random.Random) -> str:
    """A legal move of ``seat`` now, as a player writes it."""
    assert seat in game.to_act(), "not the seat's turn"
    return command_for(choose_action(game, seat, rng, "random"))


def watched_computer_game(h: Harness) -> int:
    """Alice against the computer (open to observers), watched by Carol — a known
    player of another game, who confirmed her watch."""
    h.new_game([BOB, CAROL])
    game_id = h.service.new_game([ALICE, COMPUTER], target=61, seed="words", computer=[1])
    h.step()
    write(h, C, f"watch {game_id}")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    return game_id


def test_one_observer_mail_a_move_with_its_talk_under_its_own_heading(harness: Harness) -> None:
    h = harness
    game_id = watched_computer_game(h)
    first = h.latest(C)
    text = said(first)
    assert "You are watching game" in text
    assert "since your last mail" not in text.lower()  # a first mail tells it so far
    assert "The hand so far" in text or "The game so far" in text
    assert "Alice vs Computer (medium)" in text and "Computer (medium)'s" not in text
    rng = random.Random(5)

    # A move and talk in one mail: one mail to the watcher, the talk in it.
    before = h.count(C)
    h.answer(A, f"{a_move(h.game(game_id), 0, rng)}\nsay nice one")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    (board,) = h.new_mail(C, before)
    text = text_of(board).replace("\r\n", "\n")
    assert "Since your last mail" in text and "Scores — game to 61" in text
    assert "Table talk\n----------\n  Alice says: \u201cnice one\u201d" in text
    assert "About your reply" not in text and "<h2>Table talk</h2>" in html_of(board)
    assert 'Reply "unwatch' in footer(board)

    # Two things said around a move: still one mail, both lines in it.
    before = h.count(C)
    h.answer(A, f"say one\n{a_move(h.game(game_id), 0, rng)}\nsay two")
    (board,) = h.new_mail(C, before)
    assert "Alice says: \u201cone\u201d Alice says: \u201ctwo\u201d" in said(board)

    # Talk without a move: a short mail of its own, under the same heading.
    before = h.count(C)
    h.answer(A, "say just talk")
    (talk,) = h.new_mail(C, before)
    assert "Table talk" in about(talk)
    text = text_of(talk).replace("\r\n", "\n")
    assert "Table talk\n----------\n  Alice says: \u201cjust talk\u201d" in text
    assert "About your reply" not in text and "Scores — game to" not in text
    assert 'Reply "unwatch' in footer(talk) and '"history"' not in footer(talk)


def test_settings_beside_a_move_are_confirmed_and_the_other_player_told(
    harness: Harness,
) -> None:
    h = harness
    game_id = h.new_game()
    rng = random.Random(2)

    # Alice asks: she is answered, Bob is told he may agree.
    before = {A: h.count(A), B: h.count(B)}
    h.answer(A, "observers on")
    (answer,) = h.new_mail(A, before[A])
    assert f"You agree to observers; game {game_id} opens to them when Bob agrees too" in said(
        answer
    )
    (told,) = h.new_mail(B, before[B])
    text = text_of(told).replace("\r\n", "\n")
    assert f"Alice would like game {game_id} open to observers" in flat(text)
    assert "Note\n----" in text and "About your reply" not in text

    # Bob lays away first (normally no mail: he waits for Alice) and agrees, and names
    # himself, in one mail: both settings are confirmed in its answer, and Alice is
    # told the game opened — in one mail, her turn's.
    game = h.game(game_id)
    assert game.to_act() == [0, 1] or set(game.to_act()) == {0, 1}
    before = {A: h.count(A), B: h.count(B)}
    h.answer(B, f"{a_move(game, 1, rng)}\nobservers on\nname Bobby")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert h.game_row(game_id).observers is True
    (confirmed,) = h.new_mail(B, before[B])
    text = said(confirmed)
    assert f"observers on — Game {game_id} is open to observers" in text
    assert "name Bobby — Your name is now Bobby." in text
    (opened,) = h.new_mail(A, before[A])
    assert f"Bob agreed too: game {game_id} is open to observers now" in said(opened)

    # Alice shuts it with a move beside: confirmed, and Bobby told.
    game = h.game(game_id)
    before = {A: h.count(A), B: h.count(B)}
    h.answer(A, f"{a_move(game, 0, rng)}\nobservers off")
    assert h.game_row(game_id).observers is False
    assert f"observers off — Game {game_id} is closed to observers." in said(h.latest(A))
    assert len(h.new_mail(A, before[A])) == 1
    (shut,) = h.new_mail(B, before[B])
    assert f"Alice closed game {game_id} to observers." in said(shut)


def test_agreement_waits_on_one_player_or_on_several(harness: Harness) -> None:
    h = harness
    game_id = h.new_game([ALICE, BOB, CAROL])
    h.answer(A, "observers on")
    assert (
        f"game {game_id} opens to them when Bob and Carol agree too (each replies "
        "'observers on')" in said(h.latest(A))
    )
    assert f"Alice would like game {game_id} open to observers" in said(h.latest(C))
    h.answer(B, "observers on")
    assert (
        f"game {game_id} opens to them when Carol agrees too (by replying 'observers on')"
        in said(h.latest(B))
    )
    assert "Bob agreed to observers too" in said(h.latest(C))
    assert "waiting for Carol: reply 'observers on'" in said(h.latest(A))
    before = h.count(C)
    h.answer(A, "observers on")  # asked already: Carol is not told twice
    assert h.count(C) == before
    h.answer(C, "observers on")
    assert h.game_row(game_id).observers is True
    for address in (A, B):
        assert f"Carol agreed too: game {game_id} is open to observers now" in said(
            h.latest(address)
        )


def test_a_mail_outside_any_game_offers_only_what_works_there(harness: Harness) -> None:
    h = harness
    h.new_game()
    h.deliver(plain_mail(A, SERVICE, "new level grandmaster"))
    assert h.last_inbound().status == "rejected"
    end = footer(h.latest(A))
    assert '"games"' in end and '"new"' in end and '"help"' in end
    assert '"history"' not in end and '"hand"' not in end
    write(h, A, "watch 999")
    refused = h.latest(A)
    assert "cannot be watched" in said(refused)
    assert '"history"' not in footer(refused) and '"games"' in footer(refused)
    # In a game, the footer still offers the game's questions.
    assert '"history"' in footer(h.received(A)[0])


@pytest.fixture
def closed(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(tmp_path, db_url, db_engine, lobby="closed")
    yield harness
    harness.close()


def test_a_closed_lobby_offers_no_new_game(closed: Harness) -> None:
    h = closed
    h.new_game()
    h.deliver(plain_mail(A, SERVICE, "new"))
    answer = h.latest(A)
    assert "started by the admin" in said(answer)
    end = footer(answer)
    assert '"games"' in end and '"help"' in end and '"new"' not in end
