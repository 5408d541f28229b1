"""One Subject per game, end to end on both databases: every mail of a game — the cut
request, each turn, a hint, the moves so far, help, table talk, a refused move, the
game-over mail and the archive — has the game's one Subject ("[Cribbage 1] Alice v
Bob"), so a client that threads by subject keeps the game in one conversation; what the
mail is about is its first line and the start of its preheader."""

from __future__ import annotations

import html
import random
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import Engine

from engine.computer import choose_action
from tests.e2e.helpers import ALICE, BOB, Harness

A, B = ALICE[0], BOB[0]

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def fair(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    """Fair deals (the game starts with the cut)."""
    harness = Harness.build(tmp_path, db_url, db_engine, fair_deals=True)
    yield harness
    harness.close()


def first_line(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content()).splitlines()[0]


def preheader(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("html",))
    assert part is not None
    markup = str(part.get_content())
    start = markup.index('<div style="display:none;max-height:0;overflow:hidden">')
    return html.unescape(markup[start:].split(">", 1)[1].split("<", 1)[0])


def test_every_mail_of_a_game_has_its_one_subject(fair: Harness) -> None:
    h = fair
    game_id = h.service.new_game([ALICE, BOB], target=61)
    h.step()
    for address in (A, B):
        h.answer(address, "cut")
    h.answer(A, "say good luck")
    h.answer(B, "hints on")
    h.answer(A, "hints on")
    h.answer(A, "hint")
    h.answer(A, "history")
    h.answer(A, "help")
    h.answer(A, "play 7c 8d")  # not the time for a play: refused, with the board
    assert h.last_inbound().status == "rejected"
    rng = random.Random(5)
    people = {0: A, 1: B}
    for _ in range(400):
        game = h.game(game_id)
        if game.is_over:
            break
        seat = game.to_act()[0]
        h.move(game_id, choose_action(game, seat, rng, "random"))
        assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert h.game(game_id).is_over
    h.answer(A, "archive")

    subject = f"[Cribbage {game_id}] Alice v Bob"
    for address in people.values():
        mails = h.received(address)
        assert len(mails) > 20
        assert {str(msg["Subject"]) for msg in mails} == {subject}
        for msg in mails:
            state = first_line(msg)
            assert state and not state.startswith("Cribbage ·"), state
            assert preheader(msg).startswith(state), (state, preheader(msg))
    firsts = [first_line(msg) for msg in h.received(A)]
    assert firsts[0] == "Please cut for the deal"
    for wanted in ("Hint: your discard", "The moves so far", "How to play by mail"):
        assert wanted in firsts, (wanted, firsts)
    assert "Table talk" in [first_line(msg) for msg in h.received(B)]
    assert "Your mail could not be applied" in firsts
    assert any(line.startswith("Hand 1 — your turn: discard") for line in firsts)
    assert any(line.startswith("Game over — you") for line in firsts)
    assert firsts[-1] == "The game's archive"


def test_a_game_against_the_computer_names_it(harness: Harness) -> None:
    h = harness
    computer = (f"computer@{h.settings.domain}", "Computer")
    game_id = h.service.new_game([ALICE, computer], target=61, seed="one-subject", computer=[1])
    h.step()
    game = h.game(game_id)
    h.move(game_id, choose_action(game, 0, random.Random(1), "random"))
    subjects = {str(msg["Subject"]) for msg in h.received(A)}
    assert subjects == {f"[Cribbage {game_id}] Alice v Computer"}
