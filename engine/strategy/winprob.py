"""Probability of winning from a position on the board (2 players).

``win_table(target)[a, b]`` is the probability that a player with ``a`` points
who deals the next hand beats an opponent with ``b`` points (both below the
target).  A player who is pone for the next hand wins with ``1 - table[b, a]``.

Method: dynamic programming over hands.  A hand is modelled as independent
draws from five per-hand score distributions measured by simulation (``python
-m engine.strategy.winmeasure --games N --write`` plays N games between medium
players and writes ``engine/strategy/winprobdata.py``): the pone's pegging and
the dealer's pegging, the pone's hand, the dealer's hand and the crib.  Within
a hand the order of counting is the rules': pegging first (if both players
would reach the target while pegging, each is taken to get there first half
the time), then the pone's hand, then the dealer's hand and crib.  Value
iteration from 0.5 everywhere converges (a hand scores 0 for both only with
tiny probability) to within 1e-8 in a few dozen sweeps of numpy slice
arithmetic, about a second; the table is made once per target and kept.

``discard_vector`` and ``end_of_pegging`` answer the questions the discard and
pegging searches ask near the end of a game: "I am the dealer with d points
after pegging, my hand shows h, the crib is unknown; what is my chance?"

The numbers (per-hand means from 2000 medium games: pone pegging 2.40,
dealer pegging 3.46, pone hand 8.10, dealer hand 7.96, crib 4.69): the first
dealer wins 55.2 %; at 90–90 the dealer 50.1 %, at 100–100 76.6 %; at 120–120
the pone 41 % (both peg out in the same hand half the time in this model); the
dealer at 60–100 wins 0.11 %; the pone at 111–100 wins 78 %.  The tests in
``tests/engine/test_hard.py`` check the properties (monotone in both scores,
the boundaries, the dealer/pone symmetry).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

from engine.strategy import winprobdata

_PAD = 64


def _dist(values: Sequence[float]) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    return arr / arr.sum()


PONE_PEG = _dist(winprobdata.PONE_PEG)
DEALER_PEG = _dist(winprobdata.DEALER_PEG)
PONE_HAND = _dist(winprobdata.PONE_HAND)
DEALER_HAND = _dist(winprobdata.DEALER_HAND)
CRIB = _dist(winprobdata.CRIB)
DEALER_SHOW = np.convolve(DEALER_HAND, CRIB)
"""The dealer's hand and crib together (counted one after the other, no one between)."""


def _shifted_sum(grid: np.ndarray, da: np.ndarray, db: np.ndarray, n: int) -> np.ndarray:
    """out[a, b] = Σ_i Σ_j da[i] db[j] grid[a + i, b + j] for a, b < n."""
    out = np.zeros((n, n))
    for i, p in enumerate(da):
        if p < 1e-7:
            continue
        row = grid[i : i + n]
        for j, q in enumerate(db):
            if q < 1e-7:
                continue
            out += (p * q) * row[:, j : j + n]
    return out


@cache
def win_table(target: int = 121) -> np.ndarray:
    """P(win) for the player about to deal, indexed [own score, other's score]."""
    t = target
    size = t + _PAD
    x = np.full((t, t), 0.5)
    for _ in range(400):
        # after the next hand the other player deals: my chance is 1 - x[b, a]
        y = np.zeros((size, size))
        y[:t, :t] = 1.0 - x.T
        y[t:, :] = 1.0  # I (the dealer) reached the target in my show
        y[:, t:] = 0.0  # the pone reached it first, in their show
        show = _shifted_sum(y, DEALER_SHOW, PONE_HAND, t)  # [my score, pone's] after pegging
        s = np.zeros((size, size))
        s[:t, :t] = show
        s[t:, :] = 1.0
        s[:, t:] = 0.0
        s[t:, t:] = 0.5  # both pegged out in the same hand
        new = _shifted_sum(s, DEALER_PEG, PONE_PEG, t)
        change = float(np.abs(new - x).max())
        x = new
        if change < 1e-8:
            break
    return np.clip(x, 0.0, 1.0)


def win_prob(mine: int, theirs: int, i_deal: bool, target: int = 121) -> float:
    """P(win) at the start of a hand (scores at or past the target are decided)."""
    if mine >= target:
        return 1.0
    if theirs >= target:
        return 0.0
    table = win_table(target)
    return float(table[mine, theirs] if i_deal else 1.0 - table[theirs, mine])


def after_hand(mine: int, theirs: int, i_dealt: bool, target: int = 121) -> float:
    """P(win) when a hand is over: the deal passes."""
    return win_prob(mine, theirs, not i_dealt, target)


# -- questions the searches ask near the end of a game --------------------------------

SHOW_SPAN = 30  # a hand shows 0..29


@cache
def _padded(target: int) -> tuple[np.ndarray, np.ndarray]:
    """Padded win tables for lookups past the target.

    ``D[x, y]``: a player with x who deals next, against y; x at or past the
    target wins (they counted last, after y could not reach it).  ``P[x, y]``: a
    player with x who is pone next; y at or past the target wins first (the
    pone's show came before), else x at or past the target wins."""
    t = target
    size = t + 2 * _PAD
    w = win_table(t)
    deal = np.zeros((size, size))
    deal[:t, :t] = w
    deal[t:, :] = 1.0
    pone = np.zeros((size, size))
    pone[:t, :t] = 1.0 - w.T
    pone[t:, :] = 1.0
    pone[:, t:] = 0.0
    return deal, pone


def _shift(dist: np.ndarray, k: int) -> np.ndarray:
    """A score distribution moved k points (clamped at 0)."""
    if k == 0:
        return dist
    out = np.zeros(len(dist) + max(k, 0))
    for i, p in enumerate(dist):
        out[max(i + k, 0)] += p
    return out


@cache
def _crib_moved(k: int) -> np.ndarray:
    """``CRIB`` moved k points (made once per k)."""
    return _shift(CRIB, k)


@cache
def _dealer_show_moved(k: int) -> np.ndarray:
    """``DEALER_SHOW`` moved k points (made once per k)."""
    return _shift(DEALER_SHOW, k)


@cache
def pone_after_pegging(mine: int, theirs: int, target: int, crib_shift: int = 0) -> np.ndarray:
    """F[h]: P(win) of the pone with ``mine`` after pegging, the dealer ``theirs``,
    when the pone's hand shows h (the dealer's hand and crib unknown; the crib's
    mean moved ``crib_shift`` points)."""
    deal, _ = _padded(target)
    ds = _dealer_show_moved(crib_shift)
    block = deal[mine : mine + SHOW_SPAN, theirs : theirs + len(ds)]
    out = block @ ds
    out[mine + np.arange(SHOW_SPAN) >= target] = 1.0
    return out


@cache
def dealer_after_pegging(mine: int, theirs: int, target: int) -> np.ndarray:
    """F[h]: P(win) of the dealer with ``mine`` after pegging against a pone with
    ``theirs`` when the dealer's hand and crib together show h (pone's hand unknown)."""
    _, pone = _padded(target)
    block = pone[mine : mine + 2 * SHOW_SPAN + len(CRIB), theirs : theirs + len(PONE_HAND)]
    return block @ PONE_HAND


def dealer_hand_vector(mine: int, theirs: int, target: int, crib_shift: int = 0) -> np.ndarray:
    """F[h]: the dealer's P(win) after pegging when the hand alone shows h (crib unknown)."""
    full = dealer_after_pegging(mine, theirs, target)
    crib = _crib_moved(crib_shift)
    return np.correlate(full[: SHOW_SPAN + len(crib) - 1], crib, "valid")


def discard_vector(
    mine: int, theirs: int, i_deal: bool, target: int, crib_shift: int
) -> np.ndarray:
    """F[h]: P(win) at the discard when the kept hand will show h (pegging and
    everything else from the per-hand distributions)."""
    return _discard_vector(mine, theirs, i_deal, target, crib_shift)


@cache
def _discard_vector(
    mine: int, theirs: int, i_deal: bool, target: int, crib_shift: int
) -> np.ndarray:
    t = target
    out = np.zeros(SHOW_SPAN)
    my_peg, their_peg = (DEALER_PEG, PONE_PEG) if i_deal else (PONE_PEG, DEALER_PEG)
    for i, p in enumerate(my_peg):
        for j, q in enumerate(their_peg):
            pq = p * q
            if pq < 1e-7:
                continue
            a, b = mine + i, theirs + j
            if a >= t and b >= t:
                out += 0.5 * pq
            elif a >= t:
                out += pq
            elif b >= t:
                continue
            elif i_deal:
                out += pq * dealer_hand_vector(a, b, t, crib_shift)
            else:
                out += pq * pone_after_pegging(a, b, t, crib_shift)
    return out


@cache
def end_of_pegging(
    mine: int, theirs: int, i_deal: bool, my_show: int, their_show: int, target: int
) -> float:
    """P(win) when the pegging is over, both hands' shows are known and the crib is not."""
    t = target
    if mine >= t:
        return 1.0
    if theirs >= t:
        return 0.0
    if i_deal:
        if theirs + their_show >= t:
            return 0.0
        total = 0.0
        for c, p in enumerate(CRIB):
            total += p * win_prob(mine + my_show + c, theirs + their_show, False, t)
        return total
    if mine + my_show >= t:
        return 1.0
    total = 0.0
    for c, p in enumerate(CRIB):
        total += p * win_prob(mine + my_show, theirs + their_show + c, True, t)
    return total
