"""Game flow: the draw, the deal, the crib, partnerships, his heels, the show and the end."""

from __future__ import annotations

import random

import pytest

from engine import (
    GAME_OVER,
    PEGGING,
    Discard,
    Game,
    IllegalActionError,
    Resign,
    Settings,
    full_deck,
    game_value,
    new_game,
    score_show,
)
from engine.rng import shuffled
from tests.engine.helpers import (
    cards,
    discard_all,
    find_seed,
    first_action,
    peg,
    play_out,
    rigged,
    set_scores,
    stack_deal,
)

# -- the draw for the first deal ------------------------------------------------------


def test_lower_card_deals_first() -> None:
    # 001: "The player with the lower card deals the first hand."
    for number in range(20):
        game = new_game(2, seed=f"draw-{number}")
        drawn = game.draws[-1]
        assert drawn[game.dealer].rank < drawn[1 - game.dealer].rank
        # The cut cards are the top cards of the seeded draw pack, one per seat.
        pack = shuffled(full_deck(), f"draw-{number}", f"draw/{len(game.draws)}")
        assert [drawn[0], drawn[1]] == pack[:2]


def test_equal_ranks_draw_again() -> None:
    # 001: "If both players cut cards of the same rank, each draws again."
    seed = find_seed(lambda s: len(new_game(2, seed=s).draws) > 1, prefix="tie-")
    game = new_game(2, seed=seed)
    *ties, decisive = game.draws
    for drawn in ties:
        assert drawn[0].rank == drawn[1].rank
    assert decisive[0].rank != decisive[1].rank
    assert game.dealer == min((0, 1), key=lambda seat: decisive[seat].rank)
    assert [e.kind for e in game.events].count("draw") == len(game.draws)


def test_three_players_only_the_tied_low_cards_draw_again() -> None:
    def tied_low(seed: str) -> bool:
        draws = new_game(3, seed=seed).draws
        return len(draws) > 1 and len(draws[1]) == 2

    game = new_game(3, seed=find_seed(tied_low, prefix="tie3-"))
    first, second = game.draws[0], game.draws[1]
    low = min(c.rank for c in first.values())
    assert sorted(second) == sorted(seat for seat, c in first.items() if c.rank == low)
    assert game.dealer in second


def test_first_dealer_setting_skips_the_draw() -> None:
    game = new_game(2, seed="x", first_dealer=1)
    assert game.draws == [] and game.dealer == 1


# -- the deal -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "dealt", "lay_away", "crib_from_pack", "pack_left"),
    [
        (2, 6, 2, 0, 40),  # 000: "The dealer gives each player 6 cards" and 2 to the crib
        (3, 5, 1, 1, 36),  # 000: "Five cards to each player, and one card dealt to the crib"
        (4, 5, 1, 0, 32),  # 000: "each player receives 5 cards and tosses 1 card"
    ],
)
def test_deal_sizes(
    players: int, dealt: int, lay_away: int, crib_from_pack: int, pack_left: int
) -> None:
    game = new_game(players, seed="deal", first_dealer=0)
    assert [len(game.holding(s)) for s in range(players)] == [dealt] * players
    assert game.crib_size == crib_from_pack
    assert game.pack_size == pack_left
    assert game.to_act() == tuple(range(players))
    assert all(len(a.cards) == lay_away for a in game.legal_actions() if isinstance(a, Discard))
    # The deal goes one card at a time, starting on the dealer's left.
    pack = shuffled(full_deck(), "deal", "hand/1")
    left = 1 % players
    assert game.holding(left)[0] == pack[0]
    assert game.holding(0)[0] == pack[players - 1]
    for seat in range(players):
        game.apply(
            next(a for a in game.legal_actions(seat) if isinstance(a, Discard)),
        )
    assert game.crib_size == 4
    assert game.phase == PEGGING
    assert game.pack_size == pack_left - 1  # the starter is turned
    assert game.to_act() == (left,)  # the player on the dealer's left leads


@pytest.mark.parametrize("players", [2, 3, 4])
def test_deal_passes_to_the_left_each_hand(players: int) -> None:
    # 000: "deal alternates"; with more players it passes round the table.
    game = new_game(players, seed="rotate", first_dealer=0)
    dealers = []
    for hand in range(1, 6):
        assert game.hand_no == hand
        dealers.append(game.dealer)
        play_out(game, stop=hand + 1)
        if game.is_over:
            break
    assert dealers == [h % players for h in range(len(dealers))]
    assert len(dealers) >= 3


def test_four_players_play_as_partners() -> None:
    # 000: "Players are partnered with the player across the table, so that only two
    # players keep score for their teams."
    game = new_game(4, seed="partners", first_dealer=0)
    assert len(game.scores) == 2
    assert [game.side_of(s) for s in range(4)] == [0, 1, 0, 1]
    assert game.seats_of(0) == (0, 2) and game.seats_of(1) == (1, 3)
    play_out(game, random.Random(4))
    for side in (0, 1):
        pegged = sum(e.points for e in game.events if e.side == side and e.kind != "reveal")
        assert game.scores[side] == pegged
    assert game.outcome is not None
    assert game.outcome.winner_seats == game.seats_of(game.outcome.winner)


# -- his heels ------------------------------------------------------------------------


def heels_seed() -> str:
    # Two players, seat 0 deals: 12 cards are dealt, the starter is the 13th of the pack.
    return find_seed(lambda s: shuffled(full_deck(), s, "hand/1")[12].rank == 11, "heels-")


def test_his_heels_pegs_two_for_the_dealer_at_once() -> None:
    # 001: "If the starter is a jack, it is called 'His Heels,' and the dealer pegs (scores)
    # 2 points at once."
    game = new_game(2, seed=heels_seed(), first_dealer=0)
    game.apply(first_action(game))
    events = game.apply(first_action(game))
    assert [e.kind for e in events][-2:] == ["starter", "heels"]
    assert events[-1].seat == 0 and events[-1].points == 2
    assert game.scores == (2, 0)
    assert game.phase == PEGGING


def test_his_heels_can_win_the_game() -> None:
    game = new_game(2, seed=heels_seed(), first_dealer=0)
    set_scores(game, 119, 118)
    game.apply(first_action(game))
    events = game.apply(first_action(game))
    assert [e.kind for e in events][-3:] == ["starter", "heels", "game_over"]
    assert game.phase == GAME_OVER
    assert game.outcome is not None and game.outcome.winner == 0
    assert game.scores == (121, 118)


def test_a_jack_in_the_hand_is_not_his_heels() -> None:
    seed = find_seed(
        lambda s: (
            shuffled(full_deck(), s, "hand/1")[12].rank != 11
            and any(c.rank == 11 for c in shuffled(full_deck(), s, "hand/1")[:12])
        ),
        "noheels-",
    )
    game = new_game(2, seed=seed, first_dealer=0)
    game.apply(first_action(game))
    events = game.apply(first_action(game))
    assert "heels" not in [e.kind for e in events]
    assert game.scores == (0, 0)


# -- the show -------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_show_order_from_the_dealers_left_dealer_last_then_the_crib(players: int) -> None:
    # Readings: "the player on the dealer's left first, round the table, the dealer last,
    # then the crib."
    for dealer in range(players):
        game = new_game(players, seed=f"order-{dealer}", first_dealer=dealer)
        play_out(game, stop=2)
        shows = [e for e in game.events if e.kind == "show" and e.hand == 1]
        expected = [(dealer + i) % players for i in range(1, players + 1)] + [dealer]
        assert [e.seat for e in shows] == expected
        assert [e.detail for e in shows] == ["hand"] * players + ["crib"]
        assert shows[-1].cards == tuple(sorted(shows[-1].cards)) and len(shows[-1].cards) == 4


def test_show_scores_hand_and_crib_with_the_starter() -> None:
    game = play_out(new_game(2, seed="show", first_dealer=0), stop=2)
    starter = next(e.cards[0] for e in game.events if e.kind == "starter")
    for event in (e for e in game.events if e.kind == "show"):
        items = score_show(event.cards, starter, crib=event.detail == "crib")
        assert event.points == sum(i.points for i in items)
        assert event.items == items


# -- the end of the game --------------------------------------------------------------


def test_game_ends_the_moment_pegging_reaches_the_target(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 001: "The play ends the moment either player reaches the agreed total, whether by
    # pegging or counting one's hand."
    pack = stack_deal(2, 0, {1: "KS 8C 4D 5H AS AD", 0: "5C 8S 6H 3D QC QD"}, "2C")
    game = rigged(monkeypatch, Settings(2, first_dealer=0), {1: pack})
    discard_all(game, {1: "AS AD", 0: "QC QD"})
    set_scores(game, 119, 100)
    peg(game, 1, "KS")
    events = peg(game, 0, "5C")  # fifteen two
    assert [e.kind for e in events] == ["play", "game_over"]
    assert game.scores == (121, 100)
    assert game.outcome is not None and game.outcome.winner == 0
    assert game.outcome.reason == "target"
    assert game.legal_actions() == [] and game.to_act() == ()
    before = game.state_hash()
    with pytest.raises(IllegalActionError, match="the game is over"):
        peg(game, 1, "8C")
    assert game.state_hash() == before


def _counting_out_hand(monkeypatch: pytest.MonkeyPatch) -> Game:
    """A stacked hand, laid away: pone (seat 1) keeps 2-3-10-4, dealer 5-5-5-J, starter K."""
    pack = stack_deal(2, 0, {1: "2C 3D 10H 4S AS AD", 0: "5H 5S 5D JC QC QD"}, "KH")
    game = rigged(monkeypatch, Settings(2, first_dealer=0), {1: pack})
    discard_all(game, {1: "AS AD", 0: "QC QD"})
    return game


def _what_each_seat_makes(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Play the hand once from 0-0: what each seat pegs and what its hand counts."""
    game = _counting_out_hand(monkeypatch)
    while game.phase == PEGGING:
        game.apply(first_action(game))
    out: dict[str, int] = {}
    for seat, name in ((0, "dealer"), (1, "pone")):
        out[f"{name} pegs"] = sum(
            e.points for e in game.events if e.kind in ("play", "count_end") and e.seat == seat
        )
        out[f"{name} hand"] = next(
            e.points for e in game.events if e.kind == "show" and e.seat == seat
        )
    return out


def test_non_dealer_counting_out_first_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    # 001: "toward the end of a game, the non-dealer may 'count out' and win before the
    # dealer has a chance to count, even though the dealer's total would have exceeded that
    # of the opponent."  "If the non-dealer 'goes out' by the count of his hand, the game
    # immediately ends and the dealer may not score either his hand or the crib."
    made = _what_each_seat_makes(monkeypatch)
    assert made["dealer hand"] > made["pone hand"] + 5
    game = _counting_out_hand(monkeypatch)
    pone_start = 121 - made["pone pegs"] - made["pone hand"]  # reaches 121 with the hand
    dealer_start = 121 - made["dealer pegs"] - made["dealer hand"] + 5  # would reach 126
    set_scores(game, dealer_start, pone_start)
    while game.phase == PEGGING:
        game.apply(first_action(game))
    assert game.phase == GAME_OVER
    assert game.outcome is not None
    assert game.outcome.winner == 1  # the pone, seat 1, not seat 0 first in seat order
    assert game.scores == (121 - made["dealer hand"] + 5, 121)
    shows = [e for e in game.events if e.kind == "show"]
    assert [e.seat for e in shows] == [1]  # the dealer's hand and crib are never counted
    assert game.events[-1].kind == "game_over"
    assert game.events[-2] is shows[0]
    assert game.hand_no == 1  # no later hand is dealt


def test_dealer_hand_counts_before_the_crib(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _what_each_seat_makes(monkeypatch)
    game = _counting_out_hand(monkeypatch)
    set_scores(game, 121 - made["dealer pegs"] - made["dealer hand"], 0)
    while game.phase == PEGGING:
        game.apply(first_action(game))
    shows = [e for e in game.events if e.kind == "show"]
    assert [(e.seat, e.detail) for e in shows] == [(1, "hand"), (0, "hand")]
    assert game.outcome is not None and game.outcome.winner == 0
    assert game.scores[0] == 121


# -- game values: lurch and skunk -----------------------------------------------------

GAME_VALUES = [
    # (loser's score, target, setting, games lost, the reading)
    (0, 121, "none", 1, "no skunk or lurch: always one game"),
    (60, 121, "none", 1, ""),
    (60, 121, "lurch", 2, "001: the loser has not passed 61 of 121: lurched"),
    (61, 121, "lurch", 1, "61 has reached the halfway mark"),
    (120, 121, "lurch", 1, ""),
    (30, 61, "lurch", 2, "001: did not reach 31 in a game of 61"),
    (31, 61, "lurch", 1, ""),
    (90, 121, "skunk", 2, "001: fails to pass the three-quarter mark, 91: a skunk"),
    (91, 121, "skunk", 1, "91 or more: a single game"),
    (61, 121, "skunk", 2, ""),
    (60, 121, "skunk", 4, "001: under 61: a double skunk (quadruple game)"),
    (0, 121, "skunk", 4, ""),
    (45, 61, "skunk", 2, "README: for 61 the same fractions, under 46"),
    (46, 61, "skunk", 1, ""),
    (31, 61, "skunk", 2, ""),
    (30, 61, "skunk", 4, "README: ... and under 31"),
]


@pytest.mark.parametrize(("loser", "target", "mode", "games", "reading"), GAME_VALUES)
def test_game_value_table(loser: int, target: int, mode: str, games: int, reading: str) -> None:
    assert game_value(loser, target, mode) == games, reading


def test_skunk_is_the_default() -> None:
    assert Settings().skunk == "skunk"
    assert Settings().muggins is False


def test_outcome_values_when_the_leader_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    pack = stack_deal(2, 0, {1: "KS 8C 4D 5H AS AD", 0: "5C 8S 6H 3D QC QD"}, "2C")
    for mode, loser, values, label in [
        ("skunk", 60, {1: 4}, "a quadruple game"),
        ("skunk", 90, {1: 2}, "a double game"),
        ("skunk", 91, {1: 1}, "a single game"),
        ("lurch", 60, {1: 2}, "a double game"),
        ("none", 0, {1: 1}, "a single game"),
    ]:
        game = rigged(monkeypatch, Settings(2, skunk=mode, first_dealer=0), {1: pack})
        discard_all(game, {1: "AS AD", 0: "QC QD"})
        set_scores(game, 119, loser)
        peg(game, 1, "KS")
        peg(game, 0, "5C")
        assert game.outcome is not None
        assert game.outcome.game_values == values
        assert game.outcome.label == label
        assert game.outcome.scores == (121, loser)


def test_three_players_each_loser_has_a_game_value(monkeypatch: pytest.MonkeyPatch) -> None:
    pack = stack_deal(
        3,
        0,
        {1: "KS 8C 4D 9H AS", 2: "5C 8S 6H 3D QC", 0: "7C 7S 7H 2D QD"},
        "2C",
        crib_card="KD",
    )
    game = rigged(monkeypatch, Settings(3, first_dealer=0), {1: pack})
    discard_all(game, {1: "AS", 2: "QC", 0: "QD"})
    set_scores(game, 50, 90, 119)
    peg(game, 1, "KS")
    peg(game, 2, "5C")  # fifteen two for seat 2
    assert game.outcome is not None
    assert game.outcome.winner == 2 and game.outcome.winner_seats == (2,)
    assert game.outcome.game_values == {0: 4, 1: 2}
    assert game.outcome.value == 4


def test_resign_ends_the_game_for_the_other_side() -> None:
    game = new_game(2, seed="resign", first_dealer=0)
    events = game.apply(Resign(1))
    assert game.phase == GAME_OVER
    assert game.outcome is not None and game.outcome.winner == 0
    assert game.outcome.reason == "resign"
    assert [e.kind for e in events] == ["resign", "game_over"]


def test_stack_deal_deals_from_the_dealers_left() -> None:
    # The test helper itself: the engine's deal hands out what the stacked pack says.
    pack = stack_deal(2, 0, {1: "KS 8C 4D 5H AS AD", 0: "5C 8S 6H 3D QC QD"}, "2C")
    assert pack[0] == cards("KS")[0] and pack[1] == cards("5C")[0] and pack[12] == cards("2C")[0]
