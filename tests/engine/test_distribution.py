"""The exhaustive show distribution, and the engine's scorers against it."""

from __future__ import annotations

import random

import pytest

from engine import Card, full_deck, parse_cards, score_show, show_points
from engine.distribution import (
    COMBINATIONS,
    HANDS,
    hand_cards,
    hand_number,
    mean,
    oracle_points,
    show_distribution,
    starter_scores,
)

HAND_DISTRIBUTION = {
    0: 1_009_008,
    1: 99_792,
    2: 2_813_796,
    3: 505_008,
    4: 2_855_676,
    5: 697_508,
    6: 1_800_268,
    7: 751_324,
    8: 1_137_236,
    9: 361_224,
    10: 388_740,
    11: 51_680,
    12: 317_340,
    13: 19_656,
    14: 90_100,
    15: 9_168,
    16: 58_248,
    17: 11_196,
    18: 2_708,
    20: 8_068,
    21: 2_496,
    22: 444,
    23: 356,
    24: 3_680,
    28: 76,
    29: 4,
}


def test_hand_distribution_is_exact() -> None:
    dist = show_distribution()
    assert dist == HAND_DISTRIBUTION
    assert sum(dist.values()) == COMBINATIONS == 12_994_800
    assert list(dist) == sorted(dist)
    for impossible in (19, 25, 26, 27):
        assert impossible not in dist
    assert round(mean(dist), 6) == 4.769152


def test_crib_distribution() -> None:
    crib = show_distribution(crib=True)
    assert sum(crib.values()) == COMBINATIONS
    assert crib[0] == 1_022_208
    assert round(mean(crib), 6) == 4.734819
    hand = show_distribution()
    # Only four-card flushes differ: each of them scores 4 less in a crib.
    four_flushes = 4 * 715 * 39  # a suit's 4-card hands times the starters of other suits
    assert sum(s * n for s, n in hand.items()) - sum(s * n for s, n in crib.items()) == (
        4 * four_flushes
    )
    for score in (28, 29):
        assert crib[score] == hand[score]


def test_mean_rejects_empty() -> None:
    with pytest.raises(ValueError):
        mean({})


def test_hand_numbering_round_trips() -> None:
    rng = random.Random(4)
    deck = full_deck()
    assert hand_number(hand_cards(0)) == 0
    assert hand_number(hand_cards(HANDS - 1)) == HANDS - 1
    assert [c.index for c in hand_cards(HANDS - 1)] == [48, 49, 50, 51]
    for _ in range(500):
        hand = rng.sample(deck, 4)
        number = hand_number(hand)
        assert hand_cards(number) == tuple(sorted(hand))
    with pytest.raises(ValueError):
        hand_number(hand_cards(0)[:3])


def _check(hand: list[Card], starter: Card) -> None:
    for crib in (False, True):
        expected = oracle_points(hand, starter, crib=crib)
        assert show_points(hand, starter, crib=crib) == expected, (hand, starter, crib)
        items = score_show(hand, starter, crib=crib)
        assert sum(i.points for i in items) == expected, (hand, starter, crib)


def test_scorers_agree_with_the_oracle_on_random_samples() -> None:
    rng = random.Random(20240611)
    deck = full_deck()
    for _ in range(4000):
        cards = rng.sample(deck, 5)
        _check(cards[:4], cards[4])


def test_scorers_agree_on_flushes_and_nobs() -> None:
    rng = random.Random(7)
    deck = full_deck()
    for _ in range(1500):
        suit = rng.randrange(4)
        suited = [c for c in deck if int(c.suit) == suit]
        hand = rng.sample(suited, 4)
        starter = rng.choice([c for c in deck if c not in hand])
        _check(hand, starter)
        jack = rng.choice([c for c in deck if c.rank == 11 and c not in (*hand, starter)])
        _check([*hand[:3], jack], starter)
    _check(parse_cards("5c 5d 5h jS"), parse_cards("5s")[0])  # the 29 hand
    assert oracle_points(parse_cards("5c 5d 5h jS"), parse_cards("5s")[0]) == 29


def test_starter_scores_match_the_oracle() -> None:
    starter = parse_cards("jh")[0]
    hands, scores = starter_scores(starter)
    assert len(hands) == len(scores) == HANDS - 51 * 50 * 49 // 6  # hands without the J♥
    rng = random.Random(11)
    for pos in rng.sample(range(len(hands)), 300):
        hand = list(hand_cards(int(hands[pos])))
        assert starter not in hand
        assert show_points(hand, starter) == scores[pos]
    with pytest.raises(ValueError):
        oracle_points(parse_cards("jh 2c 3c 4c"), starter)
