"""The arena's baselines (greedy, bsd) and the fast scoring paths the players use."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest

from engine import Accept, Claim, Discard, Go, Play, PlayerView, full_deck, new_game, parse_cards
from engine.baselines import greedy_action
from engine.bsd import (
    BSD_ADJUST_OFFSUIT,
    BSD_ADJUST_SINGLE,
    BSD_ADJUST_SUITED,
    bsd_action,
    bsd_discard_values,
    crib_adjustment,
    quiet_card,
)
from engine.cards import Card, Suit
from engine.game import PEGGING, SHOW
from engine.players import _play_points_ranks, _solo, exact_crib_mean
from engine.scoring import score_play, show_points, show_total
from engine.view import player_view


def _discard_view(dealer: bool, holding: str) -> PlayerView:
    game = new_game(2, seed="baseline-discard", first_dealer=0)
    view = player_view(game, 0 if dealer else 1)
    return replace(view, holding=tuple(sorted(parse_cards(holding))))


def _pegging_view(holding: str, played: str = "") -> PlayerView:
    game = new_game(2, seed="baseline-pegging", first_dealer=1)
    view = player_view(game, 0)
    mine = tuple(sorted(parse_cards(holding)))
    cards = parse_cards(played) if played else []
    count = sum(c.value for c in cards)
    legal = tuple(Play(0, c) for c in mine if count + c.value <= 31) or (Go(0),)
    return replace(
        view,
        phase=PEGGING,
        holding=mine,
        kept=mine,
        laid_away=(),
        count=count,
        count_cards=tuple((1 - i % 2, c) for i, c in enumerate(cards)),
        legal=legal,
        events=(),
    )


def _card(text: str) -> Card:
    return parse_cards(text)[0]


# -- greedy ------------------------------------------------------------------------


def test_greedy_keeps_the_most_points_now_and_ignores_the_crib() -> None:
    # Keeping 5 5 10 J makes 12 now (four fifteens, a pair), whoever owns the crib.
    for dealer in (True, False):
        action = greedy_action(_discard_view(dealer, "5c 5d 10h jc 2s 9d"), random.Random(0))
        assert isinstance(action, Discard)
        assert set(action.cards) == set(parse_cards("2s 9d"))


def test_greedy_counts_a_four_card_flush_with_no_starter() -> None:
    action = greedy_action(_discard_view(False, "2h 6h 8h qh kc ks"), random.Random(0))
    assert isinstance(action, Discard)
    assert set(action.cards) == set(parse_cards("kc ks"))  # 4 for the flush beats 2 for kings


def test_greedy_plays_most_points_now_ties_to_the_lowest() -> None:
    assert greedy_action(_pegging_view("5h 9c 2d", "10s"), random.Random(0)) == Play(0, _card("5h"))
    # Nothing scores: the lowest card, even a count of 5 or 21.
    assert greedy_action(_pegging_view("9h 3c kd", ""), random.Random(0)) == Play(0, _card("3c"))
    assert greedy_action(_pegging_view("kc", "10s 9h 3d"), random.Random(0)) == Go(0)


# -- bsd ---------------------------------------------------------------------------


def test_bsd_adjustment_tables_are_the_rounded_exact_crib_means() -> None:
    """The tables are recomputed, not copied: each entry is the mean crib with those
    two cards (suited or not) rounded to a whole point, as the program divides."""
    for a in range(1, 14):
        for b in range(a, 14):
            off = exact_crib_mean([Card(a, Suit.CLUBS), Card(b, Suit.DIAMONDS)])
            assert BSD_ADJUST_OFFSUIT[a, b] == math.floor(off + 0.5), (a, b)
            if a != b:
                suited = exact_crib_mean([Card(a, Suit.CLUBS), Card(b, Suit.CLUBS)])
                assert BSD_ADJUST_SUITED[a, b] == math.floor(suited + 0.5), (a, b)
        assert BSD_ADJUST_SINGLE[a] == math.floor(exact_crib_mean([Card(a, Suit.CLUBS)]) + 0.5)


def test_bsd_crib_adjustment_by_suit() -> None:
    assert crib_adjustment(tuple(parse_cards("5c 5d"))) == 9
    assert crib_adjustment(tuple(parse_cards("5c jc"))) == BSD_ADJUST_SUITED[5, 11]
    assert crib_adjustment(tuple(parse_cards("jc 5d"))) == BSD_ADJUST_OFFSUIT[5, 11]
    assert crib_adjustment(tuple(parse_cards("kd"))) == BSD_ADJUST_SINGLE[13]


def test_bsd_discard_values_hand_as_crib_plus_or_minus_adjustment() -> None:
    holding = "2h 6h 8h qh 5c 5s"
    kept = parse_cards("2h 6h 8h qh")
    unseen = [c for c in full_deck() if c not in parse_cards(holding)]
    # Scored as a crib: the four hearts count only with a heart turned.
    hand = sum(show_points(kept, s, crib=True) for s in unseen)
    assert hand < sum(show_points(kept, s) for s in unseen)
    for dealer, sign in ((True, 1), (False, -1)):
        values = {a.cards: v for v, a in bsd_discard_values(_discard_view(dealer, holding))}
        assert values[tuple(parse_cards("5c 5s"))] == hand + sign * 46 * 9


def test_bsd_discards_fives_to_its_own_crib_only() -> None:
    mine = bsd_action(_discard_view(True, "5c 5d 2h 3s 4c 9d"), random.Random(0))
    theirs = bsd_action(_discard_view(False, "5c 5d 2h 3s 4c 9d"), random.Random(0))
    assert isinstance(mine, Discard) and isinstance(theirs, Discard)
    assert set(mine.cards) == set(parse_cards("5c 5d"))
    assert set(theirs.cards) == set(parse_cards("2h 9d"))


def test_bsd_discard_ties_go_to_the_first_in_hand_order() -> None:
    view = _discard_view(False, "5s kc qd 9h 8c 2d")
    values = {a.cards: v for v, a in bsd_discard_values(view)}
    assert values[tuple(parse_cards("2d 8c"))] == values[tuple(parse_cards("9h qd"))]
    for seed in range(5):
        action = bsd_action(view, random.Random(seed))
        assert isinstance(action, Discard) and action.cards == tuple(parse_cards("2d 8c"))


@pytest.mark.parametrize(
    ("holding", "played", "expected"),
    [
        ("5h 9c 2d", "10s", "5h"),  # fifteen
        ("7h 7c 9d", "7s", "7c"),  # a pair royal; of two sevens the lower (clubs) card
        ("3h 9c kd", "", "3h"),  # nothing scores: the lead of a three (rule 1)
        ("2h 4c", "10s 10d 5h", "4c"),  # at 25 nothing scores: the higher card (rule 4)
    ],
)
def test_bsd_scoring_play_first(holding: str, played: str, expected: str) -> None:
    action = bsd_action(_pegging_view(holding, played), random.Random(0))
    assert action == Play(0, _card(expected))


def test_bsd_quiet_card_rules() -> None:
    def quiet(holding: str, count: int) -> Card:
        return quiet_card(sorted(parse_cards(holding)), count)

    # 1. Under 4: bring the count to exactly 4; at the lead, else a three.
    assert quiet("4h 9c kd", 0) == _card("4h")
    assert quiet("3h 9c kd", 1) == _card("3h")
    assert quiet("3h 9c kd", 0) == _card("3h")
    # 2. A card to 21 - i while holding another card worth i, smallest i first: the
    # king to 12 holding a nine (a ten on it makes 22, the nine 31).
    assert quiet("9h kc", 2) == _card("kc")
    # 3. Under 15: to 8 holding a 7 (an answer to a fifteen).
    assert quiet("6h 7c", 2) == _card("6h")
    # 4. The highest card that does not leave 5, 10 or 21.
    assert quiet("ah 2c 8d", 16) == _card("8d")  # 24; 2 -> 18, a -> 17 are lower
    assert quiet("5h 4c", 16) == _card("4c")  # 5 would leave 21
    assert quiet("5h", 16) == _card("5h")  # the last card
    assert quiet("kh 6c", 11) == _card("6c")  # the king would leave 21
    assert quiet("kh", 11) == _card("kh")  # unless nothing else can be played


def test_bsd_accepts_every_claim_and_claims_exactly() -> None:
    game = new_game(2, seed="bsd-muggins", muggins=True, first_dealer=0)
    rng = random.Random(0)
    claims = accepts = 0
    while not game.is_over and game.hand_no < 6:
        seat = game.to_act()[0]
        view = player_view(game, seat)
        action = bsd_action(view, rng)
        if game.phase == SHOW and not game.awaiting_muggins:
            assert isinstance(action, Claim)
            cards, what = game.showing(), game.show_entry()
            assert what is not None and game.starter is not None
            assert action.points == show_points(cards, game.starter, crib=what[1] == "crib")
            claims += 1
        if game.awaiting_muggins:
            assert isinstance(action, Accept)
            accepts += 1
        game.apply(action)
    assert claims >= 10 and accepts >= 10


# -- the fast paths ------------------------------------------------------------------


def test_show_total_is_the_sum_of_show_points() -> None:
    rng = random.Random(11)
    deck = full_deck()
    for i in range(400):
        if i % 4 == 0:  # flushes and his nobs need help from chance
            suit = Suit(rng.randrange(4))
            same = [c for c in deck if c.suit == suit]
            hand = rng.sample(same, 4)
        else:
            hand = rng.sample(deck, 4)
        rest = [c for c in deck if c not in hand]
        starters = rng.sample(rest, rng.randint(0, len(rest)))
        for crib in (False, True):
            expected = sum(show_points(hand, s, crib=crib) for s in starters)
            assert show_total(hand, starters, crib=crib) == expected, (hand, crib)


def test_rank_pegging_points_match_score_play() -> None:
    rng = random.Random(12)
    deck = full_deck()
    for _ in range(20000):
        sequence: list[Card] = []
        for card in rng.sample(deck, 10):
            if sum(c.value for c in sequence) + card.value > 31:
                break
            sequence.append(card)
            expected = sum(i.points for i in score_play(sequence))
            assert _play_points_ranks(tuple(c.rank for c in sequence)) == expected, sequence


def test_play_alone_search() -> None:
    # Count 20 with 5 and 6 alone: 5 -> 25, 6 -> 31 (two) = 2; 6 -> 26, 5 -> 31 = 2.
    assert _solo(parse_cards("10h 10c"), tuple(parse_cards("5d 6s"))) == 2
    # Count 25 with 3, 3: 3 -> 28, 3 -> 31 and a pair = 4.
    assert _solo(parse_cards("10h 10c 5d"), tuple(parse_cards("3d 3s"))) == 4
    # Nothing playable: the go.
    assert _solo(parse_cards("10h 10c 10d"), tuple(parse_cards("2d"))) == 1
