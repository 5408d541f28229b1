"""The crib tables: the mean crib a discard leaves, for the medium player.

``CRIB_PAIR_VALUE[a][b]`` is the exact mean score of a crib holding two cards of
ranks ``a`` and ``b`` (suits averaged as dealt: 1 in 4 pairs of different ranks
is suited) when the other two crib cards and the starter are drawn uniformly
from the other 50 cards; ``CRIB_SINGLE_VALUE[r]`` is the same for one card and
three random others (the 3- and 4-player crib).  ``exact_crib_mean`` computes
them and a test checks the constants.  Real cribs are not random — a pone lays
away cards that do not help the dealer — so these slightly overstate the value
of the pone's discards; that errs on the side of caution.

:mod:`engine.players` re-exports these names.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import combinations, combinations_with_replacement
from typing import TYPE_CHECKING

from engine.cards import JACK, Card, Suit
from engine.scoring import rank_points

if TYPE_CHECKING:
    import numpy as np

# Upper triangle, row a = 1..13, columns b = a..13.
_CRIB_PAIR_ROWS: tuple[tuple[float, ...], ...] = (
    (5.532, 4.445, 4.565, 5.474, 5.737, 4.263, 4.085, 4.129, 4.045, 3.963, 4.195, 3.861, 3.752),
    (5.825, 6.843, 4.852, 5.766, 4.372, 4.287, 4.239, 4.143, 4.075, 4.308, 3.973, 3.864),
    (6.161, 5.503, 6.432, 4.279, 4.360, 4.295, 4.121, 4.150, 4.383, 4.048, 3.940),
    (6.136, 7.001, 4.972, 4.184, 4.308, 4.208, 4.147, 4.380, 4.045, 3.936),
    (8.993, 7.096, 6.418, 5.761, 5.741, 7.031, 7.264, 6.929, 6.820),
    (6.290, 5.543, 4.905, 5.582, 3.844, 4.077, 3.742, 3.634),
    (6.108, 6.770, 4.358, 3.731, 4.024, 3.689, 3.581),
    (5.635, 4.936, 4.309, 3.947, 3.673, 3.564),
    (5.530, 4.850, 4.489, 3.560, 3.512),
    (5.463, 5.050, 4.121, 3.418),
    (5.929, 5.012, 4.309),
    (5.249, 3.974),
    (5.032,),
)

CRIB_PAIR_VALUE: dict[int, dict[int, float]] = {
    a: {b: _CRIB_PAIR_ROWS[min(a, b) - 1][abs(a - b)] for b in range(1, 14)} for a in range(1, 14)
}
"""Mean crib score given two laid-away cards of these ranks (2 players)."""

CRIB_SINGLE_VALUE: dict[int, float] = dict(
    zip(
        range(1, 14),
        (4.444, 4.670, 4.827, 4.832, 6.646, 4.787, 4.675, 4.632, 4.525, 4.454, 4.697, 4.280, 4.085),
        strict=True,
    )
)
"""Mean crib score given one laid-away card of this rank (3 and 4 players)."""


@cache
def _five_rank_points() -> np.ndarray:
    import numpy as np  # the exact crib tables only: not needed to play

    table = np.zeros(13**5, dtype=np.int16)
    for combo in combinations_with_replacement(range(13), 5):
        key = 0
        for r in combo:
            key = key * 13 + r
        table[key] = rank_points(tuple(r + 1 for r in combo))
    return table


def exact_crib_mean(discards: Sequence[Card]) -> float:
    """Mean crib score when the crib holds ``discards`` and its other cards and the
    starter are drawn uniformly from the rest of the pack (exhaustive)."""
    import numpy as np

    table = _five_rank_points()
    known = {c.index for c in discards}
    rest = np.array([i for i in range(52) if i not in known], dtype=np.int64)
    fills = np.array(list(combinations(rest.tolist(), 4 - len(known))), dtype=np.int64)
    crib = np.concatenate(
        [np.broadcast_to(np.array(sorted(known), dtype=np.int64), (len(fills), len(known))), fills],
        axis=1,
    )
    valid = (fills[:, :, None] != rest[None, None, :]).all(axis=1)
    ranks = np.empty((len(fills), len(rest), 5), dtype=np.int64)
    ranks[:, :, :4] = (crib // 4)[:, None, :]
    ranks[:, :, 4] = (rest // 4)[None, :]
    ranks.sort(axis=2)
    key = ranks[:, :, 0]
    for j in range(1, 5):
        key = key * 13 + ranks[:, :, j]
    points = table[key].astype(np.int64)
    suits = crib % 4
    flush = np.where((suits == suits[:, :1]).all(axis=1), suits[:, 0], -1)
    starter_suits = rest % 4
    points += 5 * (flush[:, None] == starter_suits[None, :])
    jacks = np.where(crib // 4 == JACK - 1, np.left_shift(1, suits), 0).sum(axis=1)
    points += (jacks[:, None] >> starter_suits[None, :]) & 1
    return float(points[valid].sum() / valid.sum())


def exact_pair_value(a: int, b: int) -> float:
    """``CRIB_PAIR_VALUE[a][b]`` from scratch, suits weighted as they are dealt."""
    off = exact_crib_mean([Card(a, Suit.CLUBS), Card(b, Suit.DIAMONDS)])
    if a == b:
        return off
    suited = exact_crib_mean([Card(a, Suit.CLUBS), Card(b, Suit.CLUBS)])
    return 0.25 * suited + 0.75 * off
