"""The exhaustive show oracle: every (4-card hand, starter) combination, counted by score.

There are C(52, 4) = 270,725 four-card hands and 48 starters for each, so
12,994,800 combinations.  Scoring each one through ``show_points`` would take a
minute; this module counts them all in well under a second, yet every point
still comes from the engine's own scoring code:

* The rank-only part (fifteens, pairs, runs) depends only on the five ranks, so
  ``engine.scoring.rank_points`` is called once per distinct (hand ranks,
  starter rank) pair — about 24,000 calls — to fill a table.
* The suit-dependent part (flush and his nobs) depends only on the hand's
  *suit class* — its flush suit (or none) and the suits of the jacks it holds —
  and on the starter's suit.  For each class that occurs, one representative
  hand is scored with ``engine.scoring.show_points`` against a starter of each
  suit, and ``show_points - rank_points`` is the bonus for the whole class.

Then, for each of the 52 starters, numpy adds the two tables for every hand not
holding the starter and ``np.bincount`` counts the scores.

>>> dist = show_distribution()
>>> sum(dist.values()), dist[29], round(mean(dist), 6)
(12994800, 4, 4.769152)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import combinations
from math import comb

import numpy as np
import numpy.typing as npt

from engine.cards import JACK, Card
from engine.scoring import rank_points, show_points

HANDS = 270_725
"""C(52, 4): the number of four-card hands."""

COMBINATIONS = HANDS * 48
"""12,994,800: every (four-card hand, starter) pair."""

MAX_SCORE = 29

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class _Tables:
    """Per-hand precomputation shared by both modes."""

    hands: npt.NDArray[np.uint8]  # (HANDS, 4) card indexes, ascending
    masks: npt.NDArray[np.uint64]  # (HANDS,) bit i set when card i is in the hand
    rank_by_starter: npt.NDArray[np.int8]  # (13, HANDS) rank points per starter rank
    suit_class: npt.NDArray[np.int8]  # (HANDS,) index into the bonus tables
    bonus_hand: npt.NDArray[np.int8]  # (classes, 4) flush + nobs per starter suit
    bonus_crib: npt.NDArray[np.int8]  # (classes, 4) the same for a crib


def _all_hands() -> npt.NDArray[np.uint8]:
    flat = np.fromiter(
        (i for combo in combinations(range(52), 4) for i in combo),
        dtype=np.uint8,
        count=HANDS * 4,
    )
    return flat.reshape(HANDS, 4)


def _suit_class_keys(hands: npt.NDArray[np.uint8]) -> IntArray:
    """Key = (flush suit + 1) * 16 + bitmask of the suits of the jacks held."""
    suits = (hands % 4).astype(np.int64)
    ranks = (hands // 4 + 1).astype(np.int64)
    flush = np.where((suits == suits[:, :1]).all(axis=1), suits[:, 0], -1)
    jack_bits = np.where(ranks == JACK, np.left_shift(1, suits), 0).sum(axis=1)
    return np.asarray((flush + 1) * 16 + jack_bits, dtype=np.int64)


def _bonus_tables(
    hands: npt.NDArray[np.uint8], keys: IntArray
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8], IntArray]:
    """Flush and nobs bonus per (suit class, starter suit), measured with ``show_points``."""
    unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    bonus_hand = np.zeros((len(unique), 4), dtype=np.int8)
    bonus_crib = np.zeros((len(unique), 4), dtype=np.int8)
    for cls, row in enumerate(first):
        hand = [Card.from_index(int(i)) for i in hands[row]]
        for suit in range(4):
            # Any card of this suit outside the hand will do: the bonus ignores rank.
            starter = next(
                Card.from_index(r * 4 + suit)
                for r in range(13)
                if Card.from_index(r * 4 + suit) not in hand
            )
            base = rank_points(tuple(sorted(c.rank for c in [*hand, starter])))
            bonus_hand[cls, suit] = show_points(hand, starter) - base
            bonus_crib[cls, suit] = show_points(hand, starter, crib=True) - base
    return bonus_hand, bonus_crib, inverse.reshape(-1).astype(np.int64)


def _rank_table(hands: npt.NDArray[np.uint8]) -> npt.NDArray[np.int8]:
    """``rank_points`` of (hand ranks + starter rank) for every hand and starter rank."""
    ranks = (hands // 4).astype(np.int64)  # 0..12, ascending within a hand
    keys = ((ranks[:, 0] * 13 + ranks[:, 1]) * 13 + ranks[:, 2]) * 13 + ranks[:, 3]
    unique, inverse = np.unique(keys, return_inverse=True)
    per_key = np.zeros((13, len(unique)), dtype=np.int8)
    for col, key in enumerate(unique.tolist()):
        hand_ranks = []
        for _ in range(4):
            key, r = divmod(key, 13)
            hand_ranks.append(r + 1)
        for starter in range(1, 14):
            per_key[starter - 1, col] = rank_points(tuple(sorted([*hand_ranks, starter])))
    return np.ascontiguousarray(per_key[:, inverse.reshape(-1)])


@cache
def _tables() -> _Tables:
    hands = _all_hands()
    bits = np.left_shift(np.uint64(1), hands.astype(np.uint64))
    masks = np.bitwise_or.reduce(bits, axis=1)
    bonus_hand, bonus_crib, suit_class = _bonus_tables(hands, _suit_class_keys(hands))
    return _Tables(
        hands=hands,
        masks=masks,
        rank_by_starter=_rank_table(hands),
        suit_class=suit_class.astype(np.int8),
        bonus_hand=bonus_hand,
        bonus_crib=bonus_crib,
    )


def clear_cache() -> None:
    """Forget the precomputed tables (for timing a cold run)."""
    _tables.cache_clear()


def starter_scores(starter: Card, *, crib: bool = False) -> tuple[IntArray, IntArray]:
    """(hand numbers, scores) for every hand not holding ``starter``.

    Hand number ``h`` is the ``h``-th 4-combination of card indexes in
    lexicographic order (``hand_cards(h)``).
    """
    t = _tables()
    scores, valid = _scores_for(t, starter.index, crib)
    hands = np.flatnonzero(valid)
    return hands, scores[hands].astype(np.int64)


def hand_cards(number: int) -> tuple[Card, ...]:
    """The cards of hand ``number`` (0 .. 270,724), in index order."""
    return tuple(Card.from_index(int(i)) for i in _tables().hands[number])


def hand_number(hand: Sequence[Card]) -> int:
    """Inverse of ``hand_cards``: the lexicographic rank of a 4-card combination."""
    idx = sorted(c.index for c in hand)
    if len(idx) != 4 or len(set(idx)) != 4:
        raise ValueError("a hand is four different cards")
    number, prev = 0, -1
    for pos, i in enumerate(idx):
        for skipped in range(prev + 1, i):
            number += comb(51 - skipped, 3 - pos)
        prev = i
    return number


def oracle_points(hand: Sequence[Card], starter: Card, *, crib: bool = False) -> int:
    """The score of one (hand, starter) read from the oracle's tables."""
    t = _tables()
    h = hand_number(hand)
    if starter.index in (int(i) for i in t.hands[h]):
        raise ValueError("the starter is in the hand")
    bonus = t.bonus_crib if crib else t.bonus_hand
    return int(t.rank_by_starter[starter.rank - 1, h]) + int(
        bonus[t.suit_class[h], int(starter.suit)]
    )


def _scores_for(
    t: _Tables, starter_index: int, crib: bool
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.bool_]]:
    rank, suit = divmod(starter_index, 4)
    bonus = (t.bonus_crib if crib else t.bonus_hand)[:, suit][t.suit_class]
    scores = t.rank_by_starter[rank] + bonus
    valid = (t.masks & np.uint64(1 << starter_index)) == 0
    return scores, valid


def show_distribution(crib: bool = False) -> dict[int, int]:
    """How many of the 12,994,800 (hand, starter) combinations score each total.

    Only totals that occur are keys, in ascending order.  ``crib=True`` scores
    every hand as a crib (a flush needs the starter too).
    """
    t = _tables()
    counts = np.zeros(MAX_SCORE + 1, dtype=np.int64)
    bonus_table = t.bonus_crib if crib else t.bonus_hand
    bonus_by_suit = [bonus_table[:, suit][t.suit_class] for suit in range(4)]
    for starter_index in range(52):
        rank, suit = divmod(starter_index, 4)
        scores = t.rank_by_starter[rank] + bonus_by_suit[suit]
        valid = (t.masks & np.uint64(1 << starter_index)) == 0
        counts += np.bincount(scores[valid], minlength=MAX_SCORE + 1)
    return {score: int(n) for score, n in enumerate(counts.tolist()) if n}


def mean(distribution: Mapping[int, int]) -> float:
    """The average score of a distribution ``{score: count}``."""
    total = sum(distribution.values())
    if not total:
        raise ValueError("an empty distribution has no mean")
    return sum(score * n for score, n in distribution.items()) / total
