"""The show: every worked example in the rules texts, with the text's own reasoning."""

from __future__ import annotations

from collections import Counter

import pytest

from engine import Card, count_words, parse_cards, score_show, show_points
from engine.scoring import (
    DOUBLE_PAIR_ROYAL,
    FIFTEEN,
    FLUSH,
    NOBS,
    PAIR,
    PAIR_ROYAL,
    RUN,
    ScoreItem,
)


def split(text: str) -> tuple[list[Card], Card]:
    """``"3C 4D 5H 6S 6C"``: the first four cards are the hand, the last the starter."""
    cards = parse_cards(text)
    assert len(cards) == 5
    return cards[:4], cards[4]


def kinds(items: tuple[ScoreItem, ...]) -> Counter[str]:
    return Counter(item.kind for item in items)


def run_lengths(items: tuple[ScoreItem, ...]) -> list[int]:
    return sorted(len(item.cards) for item in items if item.kind == RUN)


def total(items: tuple[ScoreItem, ...]) -> int:
    return sum(item.points for item in items)


# 000's "ten tricky hands to practice scoring ... None is a flush."  Suits are chosen
# so that there is no flush and no jack (so no nobs either).
# (label, cards, total, fifteens, run lengths, same-rank kinds, the answer's reasoning)
PRACTICE_HANDS = [
    (
        "a", "3C 4D 5H 6S 6C", 16, 3, [4, 4], [PAIR],
        "three 15-2's (4-5-6, 4-5-6, 6-6-3); two four-card runs; and a pair",
    ),
    (
        "b", "AC 2D 2H 3S KC", 14, 3, [3, 3], [PAIR],
        "three 15-2's (2-3-K, 2-3-K, A-2-2-K); two three-card runs; and a pair",
    ),
    (
        "c", "3C 4D 4H 4S 7C", 14, 4, [], [PAIR_ROYAL],
        "four 15-2's (4-4-7, 4-4-7, 4-4-7, 4-4-4-3); and three of a kind",
    ),
    (
        "d", "AC 3D 4H 7S 7C", 8, 3, [], [PAIR],
        "three 15-2's (A-3-4-7, A-3-4-7, A-7-7); and a pair",
    ),
    (
        "e", "AC 7D 7H 7S 7C", 24, 6, [], [DOUBLE_PAIR_ROYAL],
        "six 15-2's (all A-7-7); and four of a kind",
    ),
    (
        "f", "5C 5D 5H 10S 10C", 22, 7, [], [PAIR, PAIR_ROYAL],
        "seven 15-2's (six 5-10's and one 5-5-5); a pair; and three of a kind",
    ),
    (
        "g", "5C 5D 5H 5S KC", 28, 8, [], [DOUBLE_PAIR_ROYAL],
        "eight 15-2's (four 5-K's and four 5-5-5's); and four of a kind",
    ),
    (
        "h", "2C 5D 6H 7S 8C", 10, 3, [4], [],
        "three 15-2's (8-7, 2-6-7, 2-5-8); and a four-card run",
    ),
    (
        "i", "3C 3D 3H 6S 6C", 18, 5, [], [PAIR, PAIR_ROYAL],
        "five 15-2's (three 6-6-3's and two 3-3-3-6's); a pair; and three of a kind",
    ),
    (
        "j", "AC AD 6H 7S 8C", 13, 4, [3], [PAIR],
        "four 15-2's (8-7, 8-6-A, 8-6-A, and 7-6-A-A); a three-card run; and a pair",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("label", "text", "points", "fifteens", "runs", "same_rank", "reasoning"),
    PRACTICE_HANDS,
    ids=[row[0] for row in PRACTICE_HANDS],
)
def test_practice_hands_of_000(
    label: str,
    text: str,
    points: int,
    fifteens: int,
    runs: list[int],
    same_rank: list[str],
    reasoning: str,
) -> None:
    hand, starter = split(text)
    items = score_show(hand, starter)
    assert total(items) == points, reasoning
    assert show_points(hand, starter) == points
    assert kinds(items)[FIFTEEN] == fifteens, reasoning
    assert run_lengths(items) == runs, reasoning
    assert sorted(i.kind for i in items if i.kind in (PAIR, PAIR_ROYAL, DOUBLE_PAIR_ROYAL)) == (
        sorted(same_rank)
    )
    assert FLUSH not in kinds(items) and NOBS not in kinds(items)
    # Which card is the starter does not matter when there is no flush and no nobs.
    for i in range(4):
        rotated = [*hand]
        rotated[i], other = starter, rotated[i]
        assert show_points(rotated, other) == points


def test_four_five_five_five_six_is_23() -> None:
    # 000: "4-5-5-5-6 contains four 15-2's (8 points), three 3-card runs (9 points) and
    # three of a kind (6 points) for a total of 23 points."  The combinations of 15 are
    # "4-5-6, 4-5-6, 4-5-6, and 5-5-5".
    hand, starter = split("4C 5D 5H 5S 6C")
    items = score_show(hand, starter)
    assert total(items) == 23
    assert kinds(items)[FIFTEEN] == 4
    assert run_lengths(items) == [3, 3, 3]
    assert kinds(items)[PAIR_ROYAL] == 1
    fifteen_ranks = sorted(tuple(c.rank for c in i.cards) for i in items if i.kind == FIFTEEN)
    assert fifteen_ranks == [(4, 5, 6)] * 3 + [(5, 5, 5)]


def test_the_perfect_29() -> None:
    # 001: "a player must have a five as the starter and the other three fives plus the
    # jack of the same suit as the starter - His Nobs: 1 point - in their hand.  The
    # double pair royal (four 5s) peg another 12 points; the various fives used to hit 15
    # can be done four ways for 8 points; and the jack plus a 5 to hit 15 can also be done
    # four ways for 8 points.  Total = 29 points."
    hand = parse_cards("5C 5D 5H JS")
    starter = parse_cards("5S")[0]
    items = score_show(hand, starter)
    assert total(items) == 29
    assert show_points(hand, starter) == 29
    assert kinds(items) == Counter({FIFTEEN: 8, DOUBLE_PAIR_ROYAL: 1, NOBS: 1})
    # The same cards without nobs (the jack of another suit) make 28.
    assert show_points(parse_cards("5C 5D 5S JH"), parse_cards("5H")[0]) == 29
    assert show_points(parse_cards("5C 5D 5H JD"), parse_cards("5S")[0]) == 28


def test_eight_seven_seven_six_two_is_16() -> None:
    # 001: "8, 7, 7, 6, 2 scores 8 points for four combinations that total 15: the 8 with
    # one 7, and the 8 with the other 7; the 6, 2 with each of the two 7s.  The same hand
    # also scores 2 for a pair, and 6 for two runs of three (8, 7, 6 using each of the two
    # 7s).  The total score is 16."
    hand, starter = split("8C 7D 7H 6S 2C")
    items = score_show(hand, starter)
    assert total(items) == 16
    assert kinds(items)[FIFTEEN] == 4
    assert kinds(items)[PAIR] == 1
    assert run_lengths(items) == [3, 3]
    assert count_words(items).endswith("16 in all")


def test_jack_jack_queen_queen_king_is_four_runs() -> None:
    # 000: "J-J-Q-Q-K contains four three-card runs: the first Jack forms a three-card run
    # with each Queen, and the second Jack also forms a three-card run with each Queen."
    hand, starter = split("JC JD QH QS KH")
    items = score_show(hand, starter)
    assert run_lengths(items) == [3, 3, 3, 3]
    assert kinds(items)[PAIR] == 2
    assert total(items) == 16


def test_nine_ten_ten_ten_jack_is_three_runs() -> None:
    # 000: "9-10-10-10-J contains three different 3-card runs, worth 3 points each."
    hand, starter = split("9C 10D 10H 10S JD")
    items = score_show(hand, starter)
    assert run_lengths(items) == [3, 3, 3]
    assert sum(i.points for i in items if i.kind == RUN) == 9
    assert total(items) == 9 + 6  # and the three tens are a pair royal


def test_nine_to_king_is_one_five_card_run() -> None:
    # 000: "9-10-J-Q-K contains one 5-card run, worth 5 points."
    hand, starter = split("9C 10D JH QS KC")
    items = score_show(hand, starter)
    assert run_lengths(items) == [5]
    assert total(items) == 5


# 001's "basic formulations ... for pairs and runs alone" and 002/003's names for them.
@pytest.mark.parametrize(
    ("text", "points", "reasoning"),
    [
        ("KC QD JH JS", 8, "a run of three, with one card duplicated (double run) counts 8"),
        ("KC QD JH JS 10C", 10, "a run of four, with one card duplicated, counts 10"),
        ("KC QD QH QS JC", 15, "a run of three, with one card triplicated (triple run), 15"),
        ("KC QD QH JS JC", 16, "a run of three, with two different cards duplicated, 16"),
        ("7C 7D 7H", 6, "a triplet counts 6"),
        ("7C 7D 7H 7S", 12, "four of a kind counts 12"),
    ],
)
def test_pairs_and_runs_alone(text: str, points: int, reasoning: str) -> None:
    cards = parse_cards(text)
    items = score_show(cards, None)
    assert sum(i.points for i in items if i.kind != FIFTEEN) == points, reasoning
    if len(cards) == 5:
        assert sum(i.points for i in score_show(cards[:4], cards[4]) if i.kind != FIFTEEN) == (
            points
        )


def test_double_run_of_three_with_fifteens_is_12() -> None:
    # 003: "a hand of 8, 7, 7, 6, K would be called 'a double run of 3'.  This combination
    # always adds up to 8 points, not including 15s or Nibs ... With 15s included, the total
    # score for this hand would be: '15, 2. 15, 4, and a double run of 3 for 12'."
    hand, starter = split("8C 7D 7H 6S KC")
    items = score_show(hand, starter)
    assert sum(i.points for i in items if i.kind in (RUN, PAIR)) == 8
    assert total(items) == 12


def test_jack_and_three_fives_make_four_fifteens() -> None:
    # 003: "a Jack and three 5s would be counted as '15, 2. 15, 4, 15, 6, 15, 8', with 8
    # being the total number of points in the hand from the four different combinations."
    items = score_show(parse_cards("JC 5D 5H 5S"), None)
    assert kinds(items)[FIFTEEN] == 4


# Flushes: "4 points if all four cards in a hand other than the crib are the same suit,
# but not the same suit as the starter card.  5 points if all four cards and the starter
# card are the same suit (hand or crib).  No points for a crib flush unless all 5 cards
# are the same suit."  Hands are chosen to score nothing else.
@pytest.mark.parametrize(
    ("hand", "starter", "crib", "points"),
    [
        ("2H 4H 8H QH", "KS", False, 4),  # four in the hand
        ("2H 4H 8H QH", "KH", False, 5),  # and the starter
        ("2H 4H 8H QH", "KS", True, 0),  # four in the crib: nothing
        ("2H 4H 8H QH", "KH", True, 5),  # five in the crib
        ("2H 4H 8H QS", "KH", False, 0),  # three in the hand and the starter: nothing
        ("2H 4H 8H QS", "KH", True, 0),
    ],
)
def test_flush_rules(hand: str, starter: str, crib: bool, points: int) -> None:
    cards = parse_cards(hand)
    up = parse_cards(starter)[0]
    items = score_show(cards, up, crib=crib)
    assert total(items) == points
    assert show_points(cards, up, crib=crib) == points
    assert kinds(items)[FLUSH] == (1 if points else 0)


# His nobs: "1 point for having the Jack of the same suit as the starter card", in hand
# or crib.  A jack turned as the starter is his heels, not nobs.
@pytest.mark.parametrize(
    ("hand", "starter", "crib", "points"),
    [
        ("JH 2C 4D 8S", "KH", False, 1),
        ("JH 2C 4D 8S", "KH", True, 1),
        ("JH 2C 4D 8S", "KS", False, 0),
        ("QH 2C 4D 8S", "JH", False, 0),
        ("JH JS 2C 8D", "KS", False, 1 + 2),  # nobs with the spade jack, and the pair
    ],
)
def test_his_nobs(hand: str, starter: str, crib: bool, points: int) -> None:
    cards = parse_cards(hand)
    up = parse_cards(starter)[0]
    items = score_show(cards, up, crib=crib)
    assert total(items) == points
    assert show_points(cards, up, crib=crib) == points


def test_ace_is_low_only_in_the_show() -> None:
    # 001: "the ace is always low and cannot form a sequence with a king."
    hand, starter = split("QC KD AH 2S 9C")
    assert run_lengths(score_show(hand, starter)) == []
    hand, starter = split("AC 2D 3H 8S 9C")
    assert run_lengths(score_show(hand, starter)) == [3]


def test_a_nineteen_hand_scores_nothing() -> None:
    hand, starter = split("2C 4D 6H 8S QC")
    items = score_show(hand, starter)
    assert items == ()
    assert show_points(hand, starter) == 0
    assert "nineteen" in count_words(items)


def test_a_card_twice_is_rejected() -> None:
    with pytest.raises(ValueError):
        score_show(parse_cards("5C 5C 6H 7S"), parse_cards("8C")[0])
