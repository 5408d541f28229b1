"""The hard player's discard: the whole hand's expectation, or near the end the chance
of winning (the overview is `engine.strategy.hard`'s).

For every discard: the mean show of the kept cards over every starter the seat has not
seen (exact, ``handvalue.mean_show``), plus (own crib) or minus (an opponent's crib) the
crib value of the cards laid away by the realistic tables (``cribtables``), plus, at 2
players, ``PEG_WEIGHT`` × the pegging value of the kept ranks (``pegtable``). Within
``ENDGAME_DISCARD`` points of the target (2 players) the chance of winning decides
(``winprob.discard_vector``), points breaking ties.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from itertools import combinations

import numpy as np

from engine.actions import Discard
from engine.cards import Card
from engine.strategy import cribdata, multi, pegdata, winprob
from engine.strategy.cribtables import pair_key
from engine.strategy.handvalue import mean_show, show_index
from engine.strategy.hard.common import board, endgame, owns_crib
from engine.strategy.pegtable import PAIR_INDEX
from engine.view import PlayerView

ENDGAME_DISCARD = 35
"""Discard by the chance of winning when a side is this close to the target."""
ENDGAME_INTERP = True
"""Near the end, move the pegging and the crib by the discard's estimates, fractions
included (else only the crib, rounded to whole points)."""
PEG_WEIGHT = 0.5
"""Weight of the pegging value of the kept cards in the discard (``peg_estimate``)."""
PEG_SOURCE = "table"
"""Which pegging value: ``"table"`` the table of ``pegtable`` (against the modelled
opponent, opponents that keep by a rule), ``"fit"`` its rank-and-pair fit,
``"open"`` the per-rank fit of the earlier open-card table (``OPEN_FIT``)."""
OPEN_FIT = {
    True: (
        0.611,
        0.516,
        0.478,
        0.465,
        0.733,
        0.51,
        0.425,
        0.324,
        0.238,
        0.008,
        -0.003,
        0.001,
        0.007,
    ),
    False: (
        -0.047,
        -0.152,
        -0.172,
        -0.188,
        -0.384,
        -0.306,
        -0.286,
        -0.298,
        -0.256,
        -0.368,
        -0.367,
        -0.378,
        -0.378,
    ),
}
"""The earlier estimate: per card kept, ace..king (dealer: True), open-card minimax
against random hands, 40 deals an entry; a pair costs ``OPEN_PAIR``."""
OPEN_PAIR = {True: -0.381, False: -0.296}
MULTI_DISCARD_PEG = 0.0
"""3 and 4 players: weight of the kept cards' pegging value (``multi.keep_peg_values``)
in the discard (0: not used)."""
MULTI_DISCARD_SAMPLES = 24
"""Deals of the other hands for that pegging value."""
CRIB_MEAN = float(sum(i * p for i, p in enumerate(winprob.CRIB)))


def crib_value(discard: Sequence[int], players: int, own: bool) -> float:
    """Mean crib from laying away these card indices, by the realistic tables."""
    if players == 2:
        table = cribdata.OWN_PAIR if own else cribdata.OPP_PAIR
        return table[pair_key(discard[0], discard[1])]
    single = (
        (cribdata.OWN_SINGLE_3 if own else cribdata.OPP_SINGLE_3)
        if players == 3
        else (cribdata.OWN_SINGLE_4 if own else cribdata.OPP_SINGLE_4)
    )
    return single[discard[0] // 4 + 1]


def peg_estimate(kept: Sequence[int], dealer: bool) -> float:
    """``PEG_WEIGHT`` × the pegging value of keeping these cards (2 players), by
    ``PEG_SOURCE``: my points minus the opponent's in the play of the hand."""
    if len(kept) != 4 or not PEG_WEIGHT:
        return 0.0
    ranks = tuple(sorted(c // 4 + 1 for c in kept))
    if PEG_SOURCE == "table":
        return PEG_WEIGHT * (pegdata.DEALER if dealer else pegdata.PONE)[ranks]
    if PEG_SOURCE == "open":
        pairs = sum(ranks[i] == ranks[j] for i in range(4) for j in range(i + 1, 4))
        weights = OPEN_FIT[dealer]
        return PEG_WEIGHT * (sum(weights[r - 1] for r in ranks) + OPEN_PAIR[dealer] * pairs)
    fitted = pegdata.DEALER_FIT if dealer else pegdata.PONE_FIT
    return PEG_WEIGHT * sum(fitted[i] for i in _peg_features(ranks))


def _peg_features(ranks: tuple[int, ...]) -> list[int]:
    """Indices of ``pegtable.features`` with multiplicity: each card's rank, each pair
    of cards' ranks (``ranks`` sorted)."""
    out = [r - 1 for r in ranks]
    for i in range(4):
        for j in range(i + 1, 4):
            out.append(PAIR_INDEX[ranks[i], ranks[j]])
    return out


def discard_values(
    view: PlayerView, rng: random.Random | None = None
) -> list[tuple[float, Discard]]:
    """Every discard with its value: mean kept hand ± realistic crib + pegging estimate;
    near the end of a 2-player game, the chance of winning (points break ties)."""
    hand = [c.index for c in view.holding]
    need = 2 if view.players == 2 else 1
    own = owns_crib(view)
    sign = 1.0 if own else -1.0
    late = endgame(view, ENDGAME_DISCARD)
    if late:
        mine, theirs = board(view)
        starters = [c for c in range(52) if c not in hand]
    pegs = None
    if view.players > 2 and MULTI_DISCARD_PEG and rng is not None:
        n = view.players
        pegs = multi.keep_peg_values(
            hand,
            (view.dealer + 1 - view.seat) % n,
            [c for c in range(52) if c not in hand],
            MULTI_DISCARD_SAMPLES,
            rng,
            multi.weights_for(n),
        )
    options = []
    for d in combinations(hand, need):
        kept = [c for c in hand if c not in d]
        crib = crib_value(d, view.players, own)
        if view.players == 2:
            peg = peg_estimate(kept, view.dealer == view.seat)
        elif pegs is not None:
            peg = MULTI_DISCARD_PEG * pegs[d[0]]
        else:
            peg = 0.0
        options.append((d, kept, crib, peg))
    peg_centre = sum(o[3] for o in options) / len(options)
    out: list[tuple[float, Discard]] = []
    for d, kept, crib, peg in options:
        value = mean_show(kept, hand) + sign * crib + peg
        if late:
            if ENDGAME_INTERP:
                vector = _late_vector(mine, theirs, own, view.target, peg - peg_centre, crib)
            else:
                shift = round(crib - CRIB_MEAN)
                vector = winprob.discard_vector(mine, theirs, own, view.target, shift)
            shows = [show_index(kept, s) for s in starters]
            value = float(sum(vector[h] for h in shows)) / len(shows) + 1e-4 * value
        out.append((value, Discard(view.seat, tuple(Card.from_index(c) for c in d))))
    return out


def _late_vector(
    mine: int, theirs: int, own: bool, target: int, peg: float, crib: float
) -> np.ndarray:
    """``winprob.discard_vector`` with my pegging moved ``peg`` points and the crib's
    mean moved to ``crib``: fractional moves as the mix of the two whole moves
    around them (a pegging move is a move of my score before the hand)."""
    crib_move = crib - CRIB_MEAN
    p0, c0 = math.floor(peg), math.floor(crib_move)
    fp, fc = peg - p0, crib_move - c0
    out = np.zeros(winprob.SHOW_SPAN)
    for dp, wp in ((0, 1.0 - fp), (1, fp)):
        for dc, wc in ((0, 1.0 - fc), (1, fc)):
            if wp * wc > 1e-9:
                start = min(max(mine + p0 + dp, 0), target - 1)
                out += (wp * wc) * winprob.discard_vector(start, theirs, own, target, c0 + dc)
    return out
