"""The hard player's pegging at 4 players: the lookahead over the next seats' answers,
my partner's among them (``engine.strategy.partners``)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from engine import Action, Go, Play, new_game, player_view
from engine.computer import choose_action
from engine.game import PEGGING, Game
from engine.players import play_values
from engine.strategy import hard, partners
from engine.view import PlayerView

from .test_hard import _scrambled

FIVES = ((5, 4),)
TENS = ((10, 4),)


def test_an_opponent_fifteen_costs_and_a_partner_fifteen_pays() -> None:
    # count 10: the next seat holds only fives, one card: it makes fifteen for sure
    assert partners._ahead((10,), 10, ((FIVES, 1, -1.0),), None) == pytest.approx(-2.0)
    assert partners._ahead((10,), 10, ((FIVES, 1, 1.0),), None) == pytest.approx(2.0)
    # a seat that holds nothing passes the count to the next
    assert partners._ahead((10,), 10, ((FIVES, 0, -1.0), (FIVES, 1, 1.0)), None) == 2.0


def test_the_answers_follow_each_other_round_the_table() -> None:
    # count 5 on a five: the next seat (tens only) makes fifteen (-2); my partner
    # (fives only) takes it to 20 and the last seat (tens) to 30, scoring nothing;
    # then my own answer: an ace makes 31 for two
    seats = ((TENS, 1, -1.0), (FIVES, 1, 1.0), (TENS, 1, -1.0))
    assert partners._ahead((5,), 5, seats, None) == pytest.approx(-2.0)
    assert partners._ahead((5,), 5, seats, (1,)) == pytest.approx(-2.0 + 2.0)


def test_thirty_one_ends_the_lookahead() -> None:
    assert partners._ahead((10, 10, 10, 1), 31, ((FIVES, 4, -1.0),), (5,)) == 0.0


def _pegging_turns(seed: str, rng: random.Random, level: str) -> Iterator[tuple[Game, PlayerView]]:
    """Every turn of the first hand's pegging of a 4-player game (discards by medium),
    the seat to act and its view; after each, the seat plays as ``level``."""
    game = new_game(4, seed=seed)
    while game.phase != PEGGING:
        seat = game.to_act()[0]
        game.apply(choose_action(game, seat, rng, "medium"))
    while game.phase == PEGGING:
        seat = game.to_act()[0]
        yield game, player_view(game, seat)
        game.apply(choose_action(game, seat, rng, level))


def _best(values: list[tuple[float, Action]]) -> set[Action]:
    top = max(v for v, _ in values)
    return {a for v, a in values if v >= top - 1e-9}


def test_values_every_playable_card_and_the_forced_go() -> None:
    checked = 0
    for _, view in _pegging_turns("partners-legal", random.Random(3), "hard"):
        values = partners.play_values(view)
        if view.must_go:
            assert values == [(0.0, Go(view.seat))]
        else:
            assert sorted(a.card for _, a in values) == sorted(view.playable)  # type: ignore[union-attr]
            assert all(isinstance(a, Play) for _, a in values)
            checked += 1
    assert checked >= 8


def test_differs_from_medium_where_the_partner_answers() -> None:
    """Over the plays of many hands the lookahead and medium's one card ahead
    disagree somewhere, and hard at 4 players plays the lookahead's choice."""
    differ = 0
    for i in range(20):
        for _, view in _pegging_turns(f"partners-differ-{i}", random.Random(i), "medium"):
            if len(view.playable) > 1:
                best = _best(partners.play_values(view))
                differ += not best & _best(play_values(view))
                assert hard.hard_action(view, random.Random(1)) in best
    assert differ > 0


def test_blind_to_the_hidden_cards() -> None:
    """The values are the same when every card the seat cannot see is dealt again."""
    for i in range(6):
        for game, view in _pegging_turns(f"partners-blind-{i}", random.Random(i), "medium"):
            if not view.must_go:
                other = _scrambled(game, view.seat, random.Random(i))
                again = player_view(other, view.seat)
                assert partners.play_values(view) == partners.play_values(again)
