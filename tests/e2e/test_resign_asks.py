"""A resign that asks first, end to end on both databases: ``resign`` early in a game
ends nothing — the answer says what it would score (a quadruple game, double skunked)
and offers one click, a ``mailto:`` link to the seat's own reply address that writes
``resign confirm``; only that click ends the game. In the last hand of a game it loses
by a single game, ``resign`` goes ahead at once."""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import parseaddr

from engine import Game
from tests.e2e.helpers import ALICE, BOB, Harness, find_seed
from tests.e2e.mailto import click, links_in

A, B = ALICE[0], BOB[0]


def _text(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",))
    assert part is not None
    return " ".join(str(part.get_content()).split())


def test_an_early_resign_asks_for_one_click(harness: Harness) -> None:
    h = harness
    game_id = h.new_game((ALICE, BOB), seed="resign-asks")
    before = h.count(A)
    h.answer(A, "resign")
    row = h.last_inbound()
    assert row.status == "applied" and row.reason == "asked to confirm: resign", row.reason
    assert not h.game(game_id).is_over and h.log(game_id) == []
    assert h.count(A) == before + 1
    asked = h.latest(A)
    text = _text(asked)
    assert "Resigning now ends the game: Bob would win a quadruple game" in text
    assert "(you would be double skunked at 0)" in text and "counts in the standings" in text
    assert 'Reply "resign confirm" to do it.' in text
    (confirm,) = [link for link in links_in(asked) if link.body == "resign confirm"]
    assert confirm.to == (parseaddr(str(asked["Reply-To"]))[1],)
    assert f"+{h.token(game_id, 0)}@" in confirm.to[0]
    # Bob was told nothing: nothing happened.
    assert all("resign" not in _text(msg).lower() for msg in h.received(B))
    h.deliver(click(confirm, A))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    game = h.game(game_id)
    assert game.is_over and game.outcome is not None
    assert game.outcome.reason == "resign" and game.outcome.winner == 1
    assert game.outcome.value == 4
    assert "You resigned." in _text(h.latest(A))


def _late(game: Game) -> bool:
    """The last hand of a game Alice would lose by a single game: Bob within 31 of 61,
    Alice past the skunk line (46)."""
    return not game.is_over and game.scores[1] >= 30 and game.scores[0] >= 46


def test_a_resign_in_the_last_hand_goes_at_once(harness: Harness) -> None:
    h = harness
    seed = find_seed("resign-late", _late)
    game_id = h.new_game((ALICE, BOB), seed=seed)
    h.play_until(game_id, _late)
    h.answer(A, "I resign")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    game = h.game(game_id)
    assert game.is_over and game.outcome is not None
    assert game.outcome.reason == "resign" and game.outcome.value == 1


def test_a_late_resign_that_skunks_still_asks(harness: Harness) -> None:
    h = harness

    def skunking(game: Game) -> bool:
        return not game.is_over and game.scores[1] >= 40 and 31 <= game.scores[0] < 46

    seed = find_seed("resign-skunk", skunking)
    game_id = h.new_game((ALICE, BOB), seed=seed)
    h.play_until(game_id, skunking)
    h.answer(A, "resign")
    assert h.last_inbound().reason == "asked to confirm: resign"
    assert not h.game(game_id).is_over
    assert "Bob would win a double game (you would be skunked at" in _text(h.latest(A))
    h.answer(A, "resign yes")
    game = h.game(game_id)
    assert game.is_over and game.outcome is not None and game.outcome.value == 2
