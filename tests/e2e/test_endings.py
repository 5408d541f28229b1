"""Endings that lead on, through the daemon and Maildirs on both databases: the game-over
mail offers a rematch (or, in a match, says what comes next), its replay page and how the
page checks the deals — never a command line a player does not have; the archive mail
says what its files are for; and ``say`` to the computer is answered, once a game."""

from __future__ import annotations

from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import Engine

from pbem.demo.bots import text_of
from pbem.render.invite import SUBJECT as INVITE_SUBJECT
from pbem.service.game.talk import COMPUTER_DOES_NOT_READ
from tests.e2e.helpers import ALICE, BOB, DOMAIN, SERVICE_ADDRESS, Harness, about, plain_mail, reply

A, B = ALICE[0], BOB[0]
COMPUTER = (f"computer@{DOMAIN}", "Computer")


@pytest.fixture
def fair(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(tmp_path, db_url, db_engine, fair_deals=True)
    yield harness
    harness.close()


def flat(msg: EmailMessage) -> str:
    return " ".join(text_of(msg).split())


def html_of(msg: EmailMessage) -> str:
    part = msg.get_body(("html",))
    assert part is not None
    return str(part.get_content())


def attachment(msg: EmailMessage, name: str) -> bytes | None:
    for part in msg.iter_attachments():
        if part.get_filename() == name:
            data = part.get_payload(decode=True)
            assert isinstance(data, bytes)
            return data
    return None


def no_command_line(msg: EmailMessage) -> None:
    """A player's mail names no ``pbem`` command (they do not have the tool)."""
    for text in (text_of(msg), html_of(msg)):
        assert "pbem verify" not in text and "pbem game" not in text and "pbem " not in text


def test_the_game_over_mail_offers_a_rematch_and_the_replay(harness: Harness) -> None:
    h = harness
    game_id = h.new_game((ALICE, BOB))
    h.answer(B, "resign confirm")
    assert h.game(game_id).is_over
    for address in (A, B):
        over = h.latest(address)
        assert "Game over" in about(over)
        text = flat(over)
        assert 'Reply "rematch" for another game with the same players' in text
        assert '"rematch best of 3" makes it a match' in text
        assert f"The attached cribbage-{game_id}.html replays the whole game" in text
        assert attachment(over, f"cribbage-{game_id}.html") is not None
        assert 'Reply "archive" for the whole game as a file' in text
        assert "deals verified" not in text  # no commitment: no deals to check
        assert 'Reply "rematch"' in html_of(over).replace("&#34;", '"').replace("&quot;", '"')
        no_command_line(over)
    # What it offers works: Alice's "rematch" invites Bob.
    h.answer(A, "rematch")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert any(about(msg) == INVITE_SUBJECT for msg in h.received(B))


def test_a_fair_game_s_ending_shows_how_the_page_checks_the_deals(fair: Harness) -> None:
    h = fair
    game_id = h.service.new_game([ALICE, COMPUTER], target=61, computer=[1])
    h.step()
    h.answer(A, "cut 17 purple elephants")
    assert h.game_row(game_id).status == "active"
    h.answer(A, "resign confirm")
    assert h.game(game_id).is_over
    over = h.latest(A)
    text = flat(over)
    assert 'Reply "rematch" for another game against the computer' in text
    assert "(it starts at once)" in text
    assert 'the box at the top of the page reads "All … deals verified"' in text
    secret = h.game_row(game_id).server_seed
    assert secret is not None
    assert "checks every deal in your web browser" in text
    no_command_line(over)
    # The archive mail: what its files are for, and no "reply archive" in it.
    before = h.count(A)
    h.answer(A, "archive")
    (archive,) = h.new_mail(A, before)
    text = flat(archive)
    assert "the record of the whole game" in text and "replayed and checked" in text
    assert f"Also attached: cribbage-{game_id}.html, its replay page" in text
    assert 'the box at the top of the page reads "All … deals verified"' in text
    assert 'reply "archive"' not in text.lower()
    assert attachment(archive, f"cribbage-{game_id}.json") is not None
    page = attachment(archive, f"cribbage-{game_id}.html")
    assert page is not None and b'id="verify"' in page
    no_command_line(archive)


def test_a_match_s_game_over_says_what_comes_next(harness: Harness) -> None:
    h = harness
    h.new_game()  # Alice plays already: the lobby (invite-only) answers her
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "play computer to 61 no skunk match best of 3"))
    first = h.last_inbound().game_id
    assert first is not None
    h.answer(A, "resign confirm")
    over = next(
        msg for msg in reversed(h.received(A)) if f"[Cribbage {first}] Game over" in about(msg)
    )
    text = flat(over)
    assert "The match goes on: game 2 of the match starts now, the loser dealing first" in text
    assert 'Reply "rematch"' not in text  # the next game is the rematch
    latest = h.latest(A)
    assert "Game over" not in about(latest)  # the next game's first mail
    h.deliver(reply(latest, A, "Alice", "resign confirm"))
    text = flat(h.latest(A))
    assert "the match is over" in text
    assert 'The match is over. Reply "rematch" for another game against the computer' in text


def test_say_to_the_computer_is_answered_once_a_game(harness: Harness) -> None:
    h = harness
    game_id = h.service.new_game([ALICE, COMPUTER], target=61, computer=[1])
    h.step()
    before = h.count(A)
    h.answer(A, "say good luck!")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    (note,) = h.new_mail(A, before)
    assert COMPUTER_DOES_NOT_READ in flat(note)
    assert "The computer does not read table talk" in flat(note)
    # Once a game: the next say is kept quietly.
    before = h.count(A)
    h.answer(A, "say are you there?")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert h.count(A) == before
    # A say beside a move: the move's mail, without the note again.
    game = h.game(game_id)
    cards = sorted(game.holding(0))[:2]
    h.answer(A, "discard " + " ".join(c.ascii for c in cards) + "\nsay your deal")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert "does not read table talk" not in flat(h.latest(A))
    # Between people, a say goes to the others and its sender gets no answer.
    other = h.new_game((ALICE, BOB))
    before_a, before_b = h.count(A), h.count(B)
    h.answer(B, "say hello Alice")
    assert h.count(B) == before_b and h.count(A) == before_a + 1
    assert h.game(other) is not None
