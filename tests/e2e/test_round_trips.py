"""No wasted round trips, the verifiable deal intact: a rematch and the next game of a
match are dealt from the seed whose commitment the game-over mail showed, and each
player's answer to that mail (``rematch``, ``accept``, ``next``) is their cut — so the
new game's first mail already holds the cards and says what the game is. Through the
daemon and real Maildirs, on both databases."""

from __future__ import annotations

import re
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import Engine

from engine.dealkey import key_v3
from engine.fairness import commitment, entropy_text, text_hash
from pbem.demo.bots import text_of
from tests.e2e.helpers import ALICE, BOB, SERVICE_ADDRESS, Harness, about, plain_mail, reply

A, B = ALICE[0], BOB[0]
NEXT_COMMITMENT = re.compile(r"next game's deal commitment: ([0-9a-f]{64})")


@pytest.fixture
def fair(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(tmp_path, db_url, db_engine, fair_deals=True)
    yield harness
    harness.close()


def flat(msg: EmailMessage) -> str:
    return " ".join(text_of(msg).split())


def next_commitment(msg: EmailMessage) -> str:
    """The next game's commitment a game-over mail shows (its hex may be wrapped)."""
    found = NEXT_COMMITMENT.search(flat(msg).replace("- ", "-"))
    if found is None:  # wrapped inside the hex: join the pieces
        text = re.sub(r"\s+", "", text_of(msg))
        found = re.search(r"nextgame'sdealcommitment:([0-9a-f]{64})", text)
    assert found is not None, text_of(msg)
    return found.group(1)


def game_of(h: Harness) -> int:
    game_id = h.last_inbound().game_id
    assert game_id is not None, h.last_inbound().reason
    return game_id


def start_against_computer(h: Harness, options: str) -> int:
    """Alice (a known player) starts a game against the computer by mail and cuts."""
    h.new_game((ALICE, BOB))  # she plays already: the lobby is invite-only
    h.deliver(plain_mail(A, SERVICE_ADDRESS, f"play computer {options}"))
    game_id = game_of(h)
    cut_mail = h.latest(A)
    assert "Please cut" in about(cut_mail)
    h.deliver(reply(cut_mail, A, "Alice", "cut 12 owls"))
    assert h.game_row(game_id).status == "active"
    return game_id


def test_the_first_mail_says_what_was_asked_for(fair: Harness) -> None:
    h = fair
    h.new_game((ALICE, BOB))
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "play computer to 61 level hard match best of 3"))
    first = flat(h.latest(A))
    assert "Please cut" in about(h.latest(A))
    for asked in ("Computer (hard)", "to 61", "a match, best of 3: game 1"):
        assert asked in first, first


def test_a_rematch_against_the_computer_is_dealt_by_the_request(fair: Harness) -> None:
    h = fair
    first = start_against_computer(h, "to 61")
    h.deliver(reply(h.latest(A), A, "Alice", "resign confirm"))
    over = h.latest(A)
    assert h.game_row(first).status == "finished"
    shown = next_commitment(over)
    # The commitment names the answer this mail asks for, and no other.
    assert "your answer to this mail (“rematch”) is your cut for it" in flat(over)
    assert "“next”" not in flat(over)
    # The rematch request answers that mail: it is Alice's cut, and the game is dealt.
    h.deliver(reply(over, A, "Alice", "rematch", message_id="<again@example.com>"))
    second = game_of(h)
    row = h.game_row(second)
    assert second != first and row.status == "active", h.last_inbound().reason
    assert row.commitment == shown == commitment(str(row.server_seed))
    texts = [entropy_text("<again@example.com>", "")]
    assert row.entropy == [{"seat": 0, "text": texts[0]}]
    # pbem-deal/3: the key binds the game, its two players (seat 1 the computer's) and the seat.
    assert row.seed == key_v3(str(row.server_seed), second, 2, [(0, text_hash(texts[0]))])
    dealt = h.latest(A)
    assert "Please cut" not in about(dealt)
    assert h.view(A).holding  # the first mail holds the cards
    assert f"a rematch of game {first}" in flat(dealt)


def test_the_next_game_of_a_match_is_dealt_by_next(fair: Harness) -> None:
    h = fair
    first = start_against_computer(h, "to 61 no skunk match best of 3")
    h.deliver(reply(h.latest(A), A, "Alice", "resign confirm"))
    over = h.latest(A)
    text = flat(over)
    assert 'reply "next" to deal game 2' in text, text
    assert "your answer to this mail (“next”) is your cut for it" in text
    assert "rematch" not in text  # the next game of the match is the rematch
    shown = next_commitment(over)
    # Game 2 waits for Alice's cut, and no cut request of its own went out.
    assert not [g for g in h.outbox() if g.game_id not in (None, first) and g.kind == "cut"]
    h.deliver(reply(over, A, "Alice", "next 3 herons", message_id="<next@example.com>"))
    second = game_of(h)
    assert second != first
    row = h.game_row(second)
    assert row.status == "active" and row.commitment == shown
    assert row.entropy == [{"seat": 0, "text": entropy_text("<next@example.com>", "3 herons")}]
    dealt = h.latest(A)
    assert h.view(A).holding
    assert "a match, best of 3: game 2" in flat(dealt)
    cut = entropy_text("<next@example.com>", "3 herons")
    # What she wrote, and the receipt of the cut it stood for.
    assert f"[done] next 3 herons — Your cut is in, recorded as “{cut}”" in flat(dealt)
    assert f"(SHA-256 {text_hash(cut)})" in flat(dealt)
    # "next" again, or in a game not over, is answered without harm.
    h.deliver(reply(over, A, "Alice", "next"))
    assert "already" in flat(h.latest(A)) or h.last_inbound().status == "rejected"


def test_a_rematch_between_people_is_dealt_when_the_last_accepts(fair: Harness) -> None:
    h = fair
    game_id = h.service.new_game([ALICE, BOB], target=61)  # fair: no admin seed
    h.step()
    for who in (ALICE, BOB):
        h.deliver(reply(h.latest(who[0]), who[0], who[1], f"cut {who[1]}"))
    assert h.game_row(game_id).status == "active"
    h.deliver(reply(h.latest(A), A, "Alice", "resign confirm"))
    over = h.latest(A)
    shown = next_commitment(over)
    h.deliver(reply(over, A, "Alice", "rematch", message_id="<rematch@example.com>"))
    (invite,) = [m for m in h.received(B) if "invitation" in about(m).lower()]
    assert shown in re.sub(r"\s+", "", text_of(invite))
    h.deliver(reply(invite, B, "Bob", "accept", message_id="<yes@example.org>"))
    second = game_of(h)
    row = h.game_row(second)
    assert row.status == "active", h.last_inbound().reason
    assert row.commitment == shown
    texts = [entropy_text("<rematch@example.com>", ""), entropy_text("<yes@example.org>", "")]
    assert [e["text"] for e in row.entropy or ()] == texts
    pairs = [(seat, text_hash(t)) for seat, t in enumerate(texts)]
    assert row.seed == key_v3(str(row.server_seed), second, 2, pairs)
    assert h.view(A).holding and h.view(B).holding
