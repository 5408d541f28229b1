"""Every mail of whole sessions, read as the players read them, through the daemon and
real Maildirs on SQLite: a fair two-player game between people to its end (both
cut first), fair three- and four-player games, a best-of-3 match against the computer
started by mail and carried on with ``next``, and a lobby session (a challenge confirmed
and accepted, ``games``, ``help``, ``standings``, a rematch played out).

Each player's mail is read in order and checked (tests/e2e/mail_reading.py): no mail asks
for what the player just did, no two mails in a row say the same thing, and every mail
that expects an answer has a one-click link for each legal answer — but where the design
says otherwise (a two-player discard without hints links no pair)."""

from __future__ import annotations

import dataclasses
import os
import random
import re
from collections.abc import Callable, Iterator
from email.utils import make_msgid
from pathlib import Path

import pytest
from sqlalchemy import Engine

from engine import computer
from pbem.demo.bots import command_for
from tests.e2e.helpers import (
    ALICE,
    BOB,
    PEOPLE,
    SERVICE_ADDRESS,
    Harness,
    parse,
    plain_mail,
    reply,
)
from tests.e2e.mail_reading import Letter, Reader, dump, findings, linked, report

A, B = ALICE[0], BOB[0]
NAMES = dict(PEOPLE)
DUMP = os.environ.get("PBEM_TEST_MAIL_DUMP", "")
"""A folder to write every session's mail to, one file a person (to read them by eye)."""

# What the mails say does not depend on the database: these checks of the words run on
# SQLite only. Every database path they take runs on both backends in the other e2e tests
# (commands, refusals, crashes, batches), so a second copy here would only read the same
# mails again, at a cost that mattered to the suite's time limit.
pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


@pytest.fixture
def fair(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    """Fair deals (every game starts with the cut) and an open lobby."""
    harness = Harness.build(tmp_path, db_url, db_engine, fair_deals=True, lobby="open")
    yield harness
    harness.close()


def answer(r: Reader, address: str, game_id: int, body: str) -> int | None:
    """``address`` replies ``body`` to its latest mail of game ``game_id``; it is applied.
    The game the service says the mail went to."""
    latest = r.latest(address, game_id)
    sent = r.send(address, reply(latest.msg, address, NAMES[address], body))
    assert sent.status == "applied", (body, sent.reason)
    return sent.game_id


def answer_mail(r: Reader, address: str, subject: str, body: str) -> int | None:
    """``address`` replies ``body`` to its latest mail whose subject holds ``subject``."""
    (*_, latest) = [x for x in r.mails(address) if subject in x.subject]
    sent = r.send(address, reply(latest.msg, address, NAMES[address], body))
    assert sent.status == "applied", (body, sent.reason)
    return sent.game_id


def write(r: Reader, address: str, body: str) -> None:
    """``address`` writes ``body`` to the plain service address."""
    sent = r.send(address, plain_mail(address, SERVICE_ADDRESS, body))
    assert sent.status == "applied", (body, sent.reason)


def cut(r: Reader, game_id: int, people: list[str]) -> None:
    for address in people:
        if "cut" in r.latest(address, game_id).answers:
            answer(r, address, game_id, f"cut {NAMES[address]} 17")
    assert r.h.game_row(game_id).status == "active"


def play_out(r: Reader, game_id: int, rng: random.Random) -> None:
    """Every move of the game by mail, each an answer to the mover's latest mail of it."""
    while not (game := r.h.game(game_id)).is_over:
        seat = game.to_act()[0]
        address = r.h.address_of(game_id, seat)
        answer(r, address, game_id, command_for(computer.choose_action(game, seat, rng, "random")))


def read_everything(r: Reader, name: str) -> None:
    if DUMP:
        dump(r, Path(DUMP) / f"{name}-{r.h.settings.database_url.split(':')[0]}")
    found = findings(r)
    assert not found, report(found)


def test_a_fair_two_player_game(fair: Harness) -> None:
    r = Reader(fair, [A, B])
    game_id = fair.service.new_game([ALICE, BOB], target=61)
    r.step()
    cut(r, game_id, [A, B])
    play_out(r, game_id, random.Random(2))
    read_everything(r, "two")


@pytest.mark.parametrize("players", [3, 4])
def test_three_and_four_players(fair: Harness, players: int) -> None:
    people = [address for address, _ in PEOPLE[:players]]
    r = Reader(fair, people)
    game_id = fair.service.new_game(list(PEOPLE[:players]), target=61)
    r.step()
    cut(r, game_id, people)
    play_out(r, game_id, random.Random(players))
    read_everything(r, f"players{players}")


def test_a_match_against_the_computer(fair: Harness) -> None:
    r = Reader(fair, [A])
    write(r, A, "play computer to 61 no skunk match best of 3")
    game_id = r.sent[-1].game_id
    assert game_id is not None
    cut(r, game_id, [A])
    rng = random.Random(3)
    games = [game_id]
    while True:
        play_out(r, game_id, rng)
        if "next" not in r.latest(A, game_id).answers:
            break
        following = answer(r, A, game_id, "next")  # the cut for the match's next game
        assert following is not None and following not in games
        assert fair.game_row(following).status == "active"
        games.append(game_id := following)
    assert len(games) >= 2 and "rematch" in r.latest(A, game_id).answers
    read_everything(r, "match")


def test_a_lobby_session(fair: Harness) -> None:
    r = Reader(fair, [A, B])
    write(r, A, "challenge bob@example.org to 61")
    answer_mail(r, A, "Please confirm", "yes, that was me")
    game_id = answer_mail(r, B, "invitation", "accept")
    assert game_id is not None
    cut(r, game_id, [A, B])  # Bob's accept was his cut: Alice's is left
    write(r, A, "games")
    write(r, B, "help")
    write(r, A, "standings")
    answer(r, B, game_id, "resign confirm")
    answer(r, A, game_id, "rematch")
    second = answer_mail(r, B, "invitation", "accept")
    assert second is not None and second != game_id
    assert fair.game_row(second).status == "active"  # the rematch and the accept cut
    write(r, B, "standings")
    write(r, A, "games")
    write(r, A, "help")
    play_out(r, second, random.Random(4))
    answer(r, B, second, "rematch")
    read_everything(r, "lobby")


# -- the checks see what they look for ---------------------------------------------------


def altered(
    letter: Letter,
    after: Letter,
    html: Callable[[str], str] | None = None,
    text: Callable[[str], str] | None = None,
) -> Letter:
    """A copy of ``letter`` (a new Message-ID; its HTML part changed by ``html``, its
    text part by ``text``) that arrives right after ``after``."""
    msg = parse(letter.msg.as_bytes())
    if html is not None:
        part = msg.get_body(preferencelist=("html",))
        assert part is not None
        part.set_content(html(str(part.get_content())), subtype="html")
    if text is not None:
        part = msg.get_body(preferencelist=("plain",))
        assert part is not None
        part.set_content(text(str(part.get_content())))
    del msg["Message-ID"]
    msg["Message-ID"] = make_msgid(domain="copy.test")
    return dataclasses.replace(letter, msg=msg, seq=after.seq, order=after.order + 0.5)


def with_letter(r: Reader, letter: Letter) -> list[str]:
    """The findings of ``r``'s session with ``letter`` among its mails."""
    return [str(f) for f in findings(dataclasses.replace(r, letters={**r.letters, "+": letter}))]


def test_the_checks_see_what_they_look_for(fair: Harness) -> None:
    r = Reader(fair, [A, B])
    game_id = fair.service.new_game([ALICE, BOB], target=61)
    r.step()
    cut(r, game_id, [A, B])
    rng = random.Random(5)

    def is_discard(x: Letter) -> bool:
        return any(a.startswith("discard ") for a in x.answers)

    while not any(len(x.answers) > 1 and not is_discard(x) for x in r.mails(A)):
        game = fair.game(game_id)
        seat = game.to_act()[0]
        action = computer.choose_action(game, seat, rng, "random")
        answer(r, r.h.address_of(game_id, seat), game_id, command_for(action))
    assert not findings(r), report(findings(r))
    mails = r.mails(A)
    request = next(x for x in mails if "cut" in x.answers)
    discard = next(x for x in mails if is_discard(x))
    play = next(x for x in mails if len(x.answers) > 1 and not is_discard(x))
    last = mails[-1]
    # The same mail twice in a row; the cut asked for after the cut.
    found = with_letter(r, altered(play, play))
    assert any("said twice" in f and "the same text" in f for f in found), found
    found = with_letter(r, altered(request, last))
    assert any("after 'cut alice 17', asks for 'cut" in f for f in found), found
    # A card's link missing; a pair linked where no pair should be.
    first = linked(play)[0]
    anchor = rf'<a href="[^"]*body={first.replace(" ", "%20")}">.*?</a>'
    drop = altered(play, last, lambda s: re.sub(anchor, "", s))
    assert any(f"no one-click link for {first!r}" in f for f in with_letter(r, drop))
    # A pair of the grid missing (without hints every pair is a link, in card order).
    pair = linked(discard)[3].replace(" ", "%20")
    cell = rf'<a href="[^"]*body={pair}">.*?</a>'
    found = with_letter(r, altered(discard, last, lambda s: re.sub(cell, "", s)))
    assert any("not the 15 pairs in card order" in f for f in found), found
    # An offer left as text: a note that asks for "back" with no link for it.
    note = "Notes\n-----\n  [note]     You are away. Send 'back' when you return.\n\n"
    found = with_letter(r, altered(play, last, lambda s: s, text=lambda t: note + t))
    assert any("[offer is text]" in f and "'back' not a link" in f for f in found), found
