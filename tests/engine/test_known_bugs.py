"""Mistakes other Cribbage engines have made, each pinned by a test."""

from __future__ import annotations

import pytest

from engine import PEGGING, Game, Settings, full_deck, new_game, score_show
from engine.rng import shuffled
from engine.scoring import THIRTY_ONE
from tests.engine.helpers import (
    cards,
    discard_all,
    find_seed,
    first_action,
    peg,
    rigged,
    set_scores,
    stack_deal,
)


def test_a_four_card_flush_in_the_crib_scores_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # 001: "There is no count for four-flush in the crib that is not of same suit as the
    # starter."  The pone lays away 2♥ 4♥, the dealer 8♥ Q♥; the starter is a spade.
    assert sum(i.points for i in score_show(cards("2H 4H 8H QH"), cards("KS")[0], crib=True)) == 0
    for starter, crib_points in (("KS", 0), ("KH", 5)):
        pack = stack_deal(2, 0, {1: "AS 3C 6D 9S 2H 4H", 0: "AC 3D 6S 9C 8H QH"}, starter)
        game = rigged(monkeypatch, Settings(2, first_dealer=0), {1: pack})
        discard_all(game, {1: "2H 4H", 0: "8H QH"})
        while game.phase == PEGGING:
            game.apply(first_action(game))
        crib = [e for e in game.events if e.kind == "show" and e.detail == "crib"]
        assert len(crib) == 1 and crib[0].cards == tuple(cards("2H 4H 8H QH"))
        assert crib[0].points == crib_points


def _last_play_position(players: int, seed: str) -> tuple[Game, dict[int, int], dict[int, int]]:
    """Play hand 1 of ``seed`` up to its last card; return the game and what each side
    would peg with the last card and score in the show (found on a copy)."""
    game = new_game(players, seed=seed, first_dealer=0)
    while not (game.phase == PEGGING and sum(len(game.holding(s)) for s in range(players)) == 1):
        game.apply(first_action(game))
    probe = game.copy()
    events = probe.apply(first_action(probe))
    pegs: dict[int, int] = {}
    shows: dict[int, int] = {}
    for event in events:
        if event.side is None:
            continue
        if event.kind in ("play", "count_end"):
            pegs[event.side] = pegs.get(event.side, 0) + event.points
        if event.kind == "show":
            shows[event.side] = shows.get(event.side, 0) + event.points
    return game, pegs, shows


@pytest.mark.parametrize("players", [2, 3])
def test_the_winner_is_who_reaches_the_target_first_not_the_lowest_seat(players: int) -> None:
    # Every side reaches 121 in the show; the first to count (on the dealer's left) wins,
    # although seat 0 (the dealer) is first in seat order.
    def every_hand_scores(seed: str) -> bool:
        _, _, shows = _last_play_position(players, seed)
        return len(shows) == players and all(points > 0 for points in shows.values())

    seed = find_seed(every_hand_scores, prefix=f"first{players}-")
    game, pegs, shows = _last_play_position(players, seed)
    set_scores(game, *(121 - pegs.get(side, 0) - shows[side] for side in range(players)))
    game.apply(first_action(game))
    assert game.outcome is not None
    assert game.outcome.winner == 1
    assert game.scores[1] == 121
    assert all(game.scores[side] < 121 for side in range(players) if side != 1)
    assert [e.seat for e in game.events if e.kind == "show"] == [1]


def test_thirty_one_with_the_last_card_scores_two_not_three(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Readings: "31 scores 2 in all (not 2 plus 1 for the go)" — also when the card that
    # makes 31 is the last card of the hand.  The pone keeps A 2 3 4, the dealer 5 6 7 3:
    # all eight cards add up to 31 in a single count.
    pack = stack_deal(2, 0, {1: "AC 2D 3H 4S KC KD", 0: "5C 6D 7H 3S QC QD"}, "9S")
    game = rigged(monkeypatch, Settings(2, first_dealer=0), {1: pack})
    discard_all(game, {1: "KC KD", 0: "QC QD"})
    for seat, what in [(1, "AC"), (0, "5C"), (1, "2D"), (0, "6D"), (1, "3H"), (0, "7H")]:
        peg(game, seat, what)
    peg(game, 1, "4S")
    events = peg(game, 0, "3S")
    play = next(e for e in events if e.kind == "play")
    assert play.count == 31
    assert [i.points for i in play.items if i.kind == THIRTY_ONE] == [2]
    end = next(e for e in events if e.kind == "count_end")
    assert end.points == 0 and end.items == ()
    assert not any(i.kind == "go" for e in events for i in e.items)


@pytest.mark.parametrize(("players", "starter_at"), [(2, 12), (3, 16), (4, 20)])
def test_his_heels_is_awarded(players: int, starter_at: int) -> None:
    # 000: "If the starter card is a Jack, dealer scores 2 points."  The starter is the
    # first card after the deal (and, with three players, the crib's card).
    seed = find_seed(
        lambda s: shuffled(full_deck(), s, "hand/1")[starter_at].rank == 11, f"heels{players}-"
    )
    game = new_game(players, seed=seed, first_dealer=players - 1)
    while game.starter is None:
        game.apply(first_action(game))
    assert game.starter.rank == 11
    heels = [e for e in game.events if e.kind == "heels"]
    assert len(heels) == 1 and heels[0].points == 2 and heels[0].seat == players - 1
    assert game.scores[game.side_of(players - 1)] == 2
