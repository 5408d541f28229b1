"""Fast show arithmetic on card indices (0..51, rank-major: ``rank = i // 4 + 1``).

The hard player and the crib-table generator evaluate thousands of hands per
decision, so they work on plain integers rather than ``Card`` objects.  Every
function here agrees with ``engine.scoring.show_points`` (a test checks it).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from engine.scoring import rank_points

JACK_RANK = 11


def rank_of(index: int) -> int:
    return index // 4 + 1


def suit_of(index: int) -> int:
    return index % 4


@cache
def _rank_sum(kept: tuple[int, ...], counts: tuple[int, ...]) -> int:
    """Σ over starter ranks r of counts[r-1] · rank_points(kept + r) (kept sorted ranks)."""
    total = 0
    for r in range(1, 14):
        n = counts[r - 1]
        if n:
            total += n * rank_points(tuple(sorted((*kept, r))))
    return total


def show_index(hand: Sequence[int], starter: int, crib: bool = False) -> int:
    """``show_points`` of four card indices and a starter index."""
    points = rank_points(tuple(sorted([rank_of(c) for c in hand] + [rank_of(starter)])))
    s = suit_of(hand[0])
    if all(suit_of(c) == s for c in hand):
        if suit_of(starter) == s:
            points += 5
        elif not crib:
            points += 4
    ss = suit_of(starter)
    for c in hand:
        if rank_of(c) == JACK_RANK and suit_of(c) == ss:
            points += 1
    return points


def mean_show(hand: Sequence[int], excluded: Sequence[int], crib: bool = False) -> float:
    """Mean show of four cards ``hand`` over every starter not in ``excluded``
    (``excluded`` must include ``hand`` itself)."""
    counts = [4] * 13
    suit_left = [13] * 4
    for c in excluded:
        counts[c // 4] -= 1
        suit_left[c % 4] -= 1
    n = 52 - len(excluded)
    total = _rank_sum(tuple(sorted(rank_of(c) for c in hand)), tuple(counts))
    s = suit_of(hand[0])
    if all(suit_of(c) == s for c in hand):
        total += 5 * suit_left[s]
        if not crib:
            total += 4 * (n - suit_left[s])
    for c in hand:
        if rank_of(c) == JACK_RANK:
            total += suit_left[suit_of(c)]
    return total / n
