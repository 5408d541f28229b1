"""The hard player's pegging at 2 players (the overview is `engine.strategy.hard`'s).

The opponent's unplayed cards are dealt ``SAMPLES`` ways from the cards the seat has not
seen, consistent with their gos, each deal weighted by how likely the opponent was to
keep it; each deal's play to the end of the hand is solved exactly against an opponent
who cannot see our cards (``pegsearch.solve_model``); the card best on average is
played (`values`, shared by `play` and the review's `engine.strategy.hard.peg_values`).
Within ``ENDGAME_PLAY`` points of the target the same deals are solved for the chance of
winning (`win_values`), points breaking ties.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from engine.actions import Action, Play
from engine.cards import Card
from engine.scoring import rank_points, show_points
from engine.strategy import pegsearch, winprob
from engine.strategy.hard.common import (
    board,
    count_ranks,
    endgame,
    go_floor,
    held_ranks,
    pick,
    played_by,
    unseen,
)
from engine.view import PlayerView

SAMPLES = {8: 64, 7: 128, 6: 192}
"""Deals of the opponent's hidden cards per pegging decision, by the number of
cards still to play (mine and theirs): fewer where each deal's search is large.
The noise of the sampling, not the search, limits the play: in pegging duels
against medium (``benchmarks/peg_duel.py``, 3,000 deals) 20–32 deals a decision
made +0.03 points a hand, 40–64 +0.11, 64–128 +0.19."""
FEW_SAMPLES = 256
"""Deals when five cards or fewer are left (each deal's search is tiny)."""
ENDGAME_SHARE = 4
"""Near the end each deal is solved for the chance of winning, a bigger search:
a quarter as many deals."""
LEAD_POLICY = "medium"
"""The pone's first card of the hand: "medium" leads by medium's rules (a card
under five, from a pair, not a five), "search" by the sampled search.  With all
eight cards unseen the search's leads differ by less than its noise; medium's
rules peg better there (+0.06 points a hand in the duels) and cost nothing."""
ENDGAME_PLAY = 40
"""Peg by the chance of winning when a side is this close to the target."""
PEG_MODEL = True
"""Solve each deal against a modelled opponent who cannot see our cards
(``pegsearch.solve_model``) rather than one who can (``pegsearch.solve``)."""

Deals = list[tuple[pegsearch.Ranks, float]]


def late(view: PlayerView) -> bool:
    """Whether this decision is made by the chance of winning (near the end, once the
    starter is turned)."""
    return endgame(view, ENDGAME_PLAY) and view.starter is not None


def sample_deals(view: PlayerView, rng: random.Random) -> Deals:
    """The sampled deals of the opponent's unplayed cards the search runs over."""
    opp = 1 - view.seat
    samples = SAMPLES.get(len(view.holding) + view.cards_left[opp], FEW_SAMPLES)
    if late(view):
        samples //= ENDGAME_SHARE
    return pegsearch.sample_holdings(
        unseen(view), view.cards_left[opp], go_floor(view, opp), played_by(view, opp), samples, rng
    )


def values(view: PlayerView, rng: random.Random) -> tuple[dict[int, float], Deals]:
    """Each rank the seat may play, with its weighted mean points to the end of the
    hand's play over deals sampled from ``rng``; and those deals."""
    sampled = sample_deals(view, rng)
    solver = pegsearch.card_values_model if PEG_MODEL else pegsearch.card_values
    return solver(held_ranks(view), sampled, count_ranks(view), view.count), sampled


def play(view: PlayerView, rng: random.Random) -> Action:
    """The card best on average over sampled deals of the opponent's hidden cards."""
    by_rank, sampled = values(view, rng)
    if late(view):
        theirs = [Card.from_index(i).rank for i in played_by(view, 1 - view.seat)]
        chances = win_values(view, held_ranks(view), sampled, count_ranks(view), theirs)
        by_rank = {r: chances[r] + 1e-4 * v for r, v in by_rank.items()}
    scored = [(by_rank[card.rank], Play(view.seat, card)) for card in view.playable]
    return pick(scored, rng)


def win_values(
    view: PlayerView,
    mine: pegsearch.Ranks,
    deals: Sequence[tuple[pegsearch.Ranks, float]],
    seq: pegsearch.Ranks,
    their_played: Sequence[int],
) -> dict[int, float]:
    """For each rank I may play: the weighted mean chance of winning over the deals."""
    assert view.starter is not None
    a, b = board(view)
    t = view.target
    i_deal = view.dealer == view.seat
    my_show = show_points(view.kept, view.starter)
    start = view.starter.rank
    total = sum(w for _, w in deals)
    out: dict[int, float] = {}
    searches = []
    for theirs, w in deals:
        their_show = rank_points(tuple(sorted((*their_played, *theirs, start))))

        def terminal(got_me: int, got_them: int, their_show: int = their_show) -> float:
            return winprob.end_of_pegging(a + got_me, b + got_them, i_deal, my_show, their_show, t)

        searches.append((pegsearch.WinSearch(t - a, t - b, terminal, PEG_MODEL), theirs, w))
    for r in sorted(set(mine)):
        if view.count + min(r, 10) > 31:
            continue
        pts, new_seq = pegsearch.step(seq, r, view.count)
        rest = list(mine)
        rest.remove(r)
        acc = 0.0
        for search, theirs, w in searches:
            acc += w * search.value(
                tuple(rest), theirs, new_seq, view.count + min(r, 10), 1, 0, pts, 0
            )
        out[r] = acc / total
    return out
