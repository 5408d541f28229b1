"""Muggins games: claims, muggins calls, accepting, over-claims, and who may respond."""

from __future__ import annotations

import pytest

from engine import (
    SHOW,
    Accept,
    Claim,
    Game,
    IllegalActionError,
    Muggins,
    new_game,
)
from tests.engine.helpers import find_seed, first_action, set_scores, true_count


def to_show(game: Game) -> Game:
    while game.phase != SHOW:
        game.apply(first_action(game))
    return game


def muggins_game(players: int, seed: str) -> Game:
    return to_show(new_game(players, seed=seed, muggins=True, first_dealer=0))


def seed_with_first_count_at_least(players: int, points: int) -> str:
    def good(seed: str) -> bool:
        game = muggins_game(players, seed)
        return game.phase == SHOW and true_count(game) >= points

    return find_seed(good, prefix=f"muggins{players}-")


@pytest.fixture(scope="module")
def seed2() -> str:
    return seed_with_first_count_at_least(2, 4)


def test_the_show_waits_for_the_pone_to_claim(seed2: str) -> None:
    game = muggins_game(2, seed2)
    assert game.show_entry() == (1, "hand")
    assert game.to_act() == (1,)
    assert not game.awaiting_muggins
    assert {type(a) for a in game.legal_actions()} == {Claim}
    assert [a.points for a in game.legal_actions() if isinstance(a, Claim)] == list(range(30))


def test_exact_claim_then_accept(seed2: str) -> None:
    game = muggins_game(2, seed2)
    actual = true_count(game)
    before = game.scores
    events = game.apply(Claim(1, actual))
    assert [e.kind for e in events] == ["claim"]
    assert events[0].points == actual
    assert game.scores[1] == before[1] + actual
    # The opponent may call muggins or accept.
    assert game.awaiting_muggins and game.to_act() == (0,)
    assert set(game.legal_actions()) == {Muggins(0), Accept(0)}
    events = game.apply(Accept(0))
    assert [e.kind for e in events] == ["reveal"]
    assert events[0].points == 0 and sum(i.points for i in events[0].items) == actual
    assert game.show_entry() == (0, "hand")


def test_muggins_on_an_exact_claim_takes_nothing(seed2: str) -> None:
    game = muggins_game(2, seed2)
    actual = true_count(game)
    game.apply(Claim(1, actual))
    before = game.scores
    events = game.apply(Muggins(0))
    assert game.scores == before
    assert sum(e.points for e in events if e.kind == "muggins") == 0


def test_short_claim_and_muggins_takes_the_missed_points(seed2: str) -> None:
    # 000: "An optional rule allows a player to call 'Muggins!' if his opponent failed to
    # score some of the points in his hand ... and to take those points for himself."
    game = muggins_game(2, seed2)
    actual = true_count(game)
    before = game.scores
    game.apply(Claim(1, actual - 3))
    assert game.scores == (before[0], before[1] + actual - 3)
    events = game.apply(Muggins(0))
    assert [e.kind for e in events][:2] == ["reveal", "muggins"]
    assert events[1].points == 3 and events[1].seat == 0
    assert game.scores == (before[0] + 3, before[1] + actual - 3)
    assert game.show_entry() == (0, "hand")


def test_short_claim_accepted_loses_the_missed_points(seed2: str) -> None:
    game = muggins_game(2, seed2)
    actual = true_count(game)
    before = game.scores
    game.apply(Claim(1, actual - 3))
    game.apply(Accept(0))
    assert game.scores == (before[0], before[1] + actual - 3)


def test_over_claim_is_corrected_and_the_excess_goes_to_the_opponent(seed2: str) -> None:
    # 000: "if your opponent takes more points than he's entitled to, he must go back where
    # he belongs, while you get the extra points he took."
    game = muggins_game(2, seed2)
    actual = true_count(game)
    before = game.scores
    events = game.apply(Claim(1, actual + 5))
    assert [e.kind for e in events] == ["claim", "reveal", "correction"]
    assert events[0].points == actual
    assert events[2].seat == 0 and events[2].points == 5
    assert game.scores == (before[0] + 5, before[1] + actual)
    assert not game.awaiting_muggins  # nothing left to call muggins on
    assert game.show_entry() == (0, "hand")


def test_the_crib_is_claimed_by_the_dealer_last(seed2: str) -> None:
    game = muggins_game(2, seed2)
    order = []
    while game.phase == SHOW:
        entry = game.show_entry()
        assert entry is not None
        order.append(entry)
        game.apply(Claim(entry[0], true_count(game)))
        game.apply(Accept(game.to_act()[0]))
    assert order == [(1, "hand"), (0, "hand"), (0, "crib")]
    assert game.hand_no == 2 or game.is_over


def test_claim_out_of_range_is_rejected_unchanged(seed2: str) -> None:
    game = muggins_game(2, seed2)
    before = game.state_hash()
    for points in (-1, 30):
        with pytest.raises(IllegalActionError, match=f"cannot count {points}"):
            game.apply(Claim(1, points))
    with pytest.raises(IllegalActionError, match="not your turn"):
        game.apply(Claim(0, 3))
    with pytest.raises(IllegalActionError, match="waiting for claim"):
        game.apply(Muggins(0))
    assert game.state_hash() == before


def test_claimant_cannot_answer_their_own_claim(seed2: str) -> None:
    game = muggins_game(2, seed2)
    game.apply(Claim(1, 0))
    before = game.state_hash()
    for action in (Muggins(1), Accept(1), Claim(1, 3)):
        with pytest.raises(IllegalActionError):
            game.apply(action)
    assert game.state_hash() == before


def test_three_players_each_opponent_may_respond() -> None:
    game = muggins_game(3, seed_with_first_count_at_least(3, 2))
    claimant = game.show_entry()
    assert claimant == (1, "hand")
    actual = true_count(game)
    game.apply(Claim(1, actual - 2))
    assert game.to_act() == (2, 0)  # the nearest on the claimant's left first
    game.apply(Accept(2))
    assert game.awaiting_muggins and game.to_act() == (0,)
    before = game.scores
    game.apply(Muggins(0))
    assert game.scores[0] == before[0] + 2
    assert game.show_entry() == (2, "hand")


def test_three_players_first_muggins_call_closes_the_window() -> None:
    game = muggins_game(3, seed_with_first_count_at_least(3, 2))
    actual = true_count(game)
    game.apply(Claim(1, actual - 2))
    before = game.scores
    game.apply(Muggins(0))
    assert game.scores == (before[0] + 2, before[1], before[2])
    assert not game.awaiting_muggins
    with pytest.raises(IllegalActionError):
        game.apply(Muggins(2))


def test_three_players_over_claim_excess_goes_to_the_claimants_left() -> None:
    game = muggins_game(3, seed_with_first_count_at_least(3, 2))
    actual = true_count(game)
    before = game.scores
    game.apply(Claim(1, actual + 4))
    assert game.scores == (before[0], before[1] + actual, before[2] + 4)


def test_four_players_partners_answer_as_one_side() -> None:
    game = muggins_game(4, seed_with_first_count_at_least(4, 2))
    assert game.show_entry() == (1, "hand")
    actual = true_count(game)
    game.apply(Claim(1, actual - 2))
    # Seats 0 and 2 are the opponents; seat 3, the claimant's partner, may not respond.
    assert game.to_act() == (2, 0)
    before = game.state_hash()
    with pytest.raises(IllegalActionError, match="not your turn"):
        game.apply(Muggins(3))
    assert game.state_hash() == before
    game.apply(Accept(2))  # one partner accepts for the side
    assert not game.awaiting_muggins
    assert game.show_entry() == (2, "hand")


def test_four_players_muggins_scores_for_the_side() -> None:
    game = muggins_game(4, seed_with_first_count_at_least(4, 2))
    actual = true_count(game)
    before = game.scores
    game.apply(Claim(1, actual - 2))
    game.apply(Muggins(2))
    assert game.scores == (before[0] + 2, before[1] + actual - 2)


def test_a_claim_that_reaches_the_target_ends_the_game(seed2: str) -> None:
    game = muggins_game(2, seed2)
    actual = true_count(game)
    set_scores(game, 100, 121 - actual)
    events = game.apply(Claim(1, actual))
    assert [e.kind for e in events] == ["claim", "game_over"]
    assert game.outcome is not None and game.outcome.winner == 1
    assert not game.awaiting_muggins and game.to_act() == ()


def test_the_excess_of_an_over_claim_can_win_for_the_opponent(seed2: str) -> None:
    game = muggins_game(2, seed2)
    actual = true_count(game)
    set_scores(game, 118, 10)
    game.apply(Claim(1, actual + 3))
    assert game.outcome is not None and game.outcome.winner == 0
    assert game.scores == (121, 10 + actual)


def test_a_muggins_call_can_win_the_game(seed2: str) -> None:
    game = muggins_game(2, seed2)
    actual = true_count(game)
    set_scores(game, 119, 0)
    game.apply(Claim(1, actual - 2))
    events = game.apply(Muggins(0))
    assert [e.kind for e in events] == ["reveal", "muggins", "game_over"]
    assert game.outcome is not None and game.outcome.winner == 0
    assert game.scores == (121, actual - 2)
