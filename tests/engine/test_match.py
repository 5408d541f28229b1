"""Matches: the loser of a game deals first in the next (001), game values add up."""

from __future__ import annotations

import random

import pytest

from engine import Resign, new_game
from engine.computer import choose_action
from engine.match import MatchScore, first_dealer_after, rematch_settings


def _finish(players: int, seed: str) -> object:
    game = new_game(players, seed=seed, target=61)
    rng = random.Random(seed)
    while not game.is_over:
        seat = game.to_act()[0]
        game.apply(choose_action(game, seat, rng, "random"))
    return game


@pytest.mark.parametrize("seed", ["m1", "m2", "m3", "m4"])
def test_two_players_the_loser_deals_next(seed: str) -> None:
    game = _finish(2, seed)
    loser = 1 - game.outcome.winner  # type: ignore[attr-defined]
    assert first_dealer_after(game) == loser  # type: ignore[arg-type]
    settings = rematch_settings(game)  # type: ignore[arg-type]
    assert settings.first_dealer == loser
    assert settings.target == 61
    nxt = new_game(2, seed=f"{seed}-next", target=61, first_dealer=settings.first_dealer)
    assert nxt.dealer == loser
    assert not nxt.draws  # no draw for the deal in a match's later games


def test_partners_a_losing_partner_deals() -> None:
    game = _finish(4, "m4p")
    dealer = first_dealer_after(game)  # type: ignore[arg-type]
    assert game.side_of(dealer) != game.outcome.winner  # type: ignore[attr-defined]


def test_three_players_the_biggest_loser_deals() -> None:
    game = _finish(3, "m3p")
    dealer = first_dealer_after(game)  # type: ignore[arg-type]
    scores = game.outcome.scores  # type: ignore[attr-defined]
    losers = [s for s in range(3) if s != game.outcome.winner]  # type: ignore[attr-defined]
    assert dealer in losers
    assert scores[dealer] == min(scores[s] for s in losers)


def test_unfinished_game_has_no_next_dealer() -> None:
    with pytest.raises(ValueError):
        first_dealer_after(new_game(2, seed="x"))


def test_match_score_counts_game_values() -> None:
    a = new_game(2, seed="ms1", target=121)
    a.apply(Resign(1))  # seat 1 resigns at 0: skunked twice over
    b = new_game(2, seed="ms2", target=121)
    b.apply(Resign(0))
    score = MatchScore.of(2, [a.outcome, b.outcome])  # type: ignore[list-item]
    assert score.games == [4, 4]
