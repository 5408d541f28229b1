"""The hard player's pegging at 3 and 4 players (the overview is
`engine.strategy.hard`'s).

At the table sizes of ``MULTI_PEG`` every other seat's unplayed cards are dealt
``MULTI_SAMPLES`` ways from the cards the seat has not seen, and each deal's play to the
end of the hand is searched with the others playing a model that cannot see the other
hands (``multi``; `values`, shared by `play` and the review's
`engine.strategy.hard.peg_values`); within ``MULTI_ENDGAME`` points of the target the
same deals are searched for the chance of winning (`win_values`), points breaking ties.
At 4 players, by default, the lookahead round the table (``partners``,
``FOUR_LOOKAHEAD``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from engine.actions import Action, Play
from engine.scoring import rank_points, show_points
from engine.strategy import multi, pegsearch
from engine.strategy.hard.common import (
    count_ranks,
    go_floor,
    held_ranks,
    near_end,
    pick,
    unseen,
)
from engine.view import PlayerView

MULTI_SAMPLES = 24
"""Deals of the other seats' hidden cards per pegging decision, 3 players (4 players:
``FOUR_SAMPLES``)."""
MULTI_LEAD_SAMPLES = 16
"""Fewer deals for the first two plays of a hand, when each deal's search is largest."""
FOUR_LOOKAHEAD = True
"""4 players: peg by ``partners.play_values`` (the next seats' answers, my partner's
among them) instead of the medium player's one-card lookahead."""
FOUR_SAMPLES = {16: 48, 15: 64, 14: 64, 13: 64, 12: 96, 11: 96, 10: 128, 9: 128}
"""4 players, when 4 is in ``MULTI_PEG`` (not by default): deals per pegging decision
by the cards still to play at the table."""
FOUR_FEW_SAMPLES = 192
"""4 players: deals when eight cards or fewer are left."""
MULTI_SAMPLE_KEEP = 0.0
"""Softness of the keep model weighting each sampled deal, per other seat
(``multi.sample_hands``; 0: every deal equally likely)."""
MULTI_DEPTH = 99
"""My own later turns searched (beyond it I play the model as the others do)."""
MULTI_ENDGAME = 30
"""3 and 4 players: peg by the chance of winning when a side is this close to the target."""
MULTI_END_SAMPLES = 16
"""Deals per pegging decision when each is searched for the chance of winning."""
MULTI_PEG: tuple[int, ...] = (3,)
"""Table sizes pegged by the ``multi`` search (4 players otherwise by ``FOUR_LOOKAHEAD``).
At 4 players the search did not beat medium's pegging in whole games: 47–48 % for
hard+hard against medium+medium with 16–24 deals a decision, 50.3 % with
``FOUR_SAMPLES`` (p99 259 ms a decision); the lookahead 51.9–52.5 %."""

Deals = list[tuple[multi.Hands, float]]


def samples(view: PlayerView) -> int:
    """Deals of the other seats' hidden cards for a pegging decision at 3 or 4 players."""
    if view.players == 4:
        return FOUR_SAMPLES.get(sum(view.cards_left), FOUR_FEW_SAMPLES)
    return MULTI_LEAD_SAMPLES if len(view.plays) < 2 else MULTI_SAMPLES


def sample_deals(view: PlayerView, rng: random.Random) -> Deals:
    """The sampled deals of every other seat's unplayed cards the search runs over."""
    n = view.players
    others = [(view.seat + k) % n for k in range(1, n)]
    return multi.sample_hands(
        unseen(view),
        [view.cards_left[s] for s in others],
        [go_floor(view, s) for s in others],
        [[c.index for p, c, _ in view.plays if p == s] for s in others],
        samples(view),
        rng,
        MULTI_SAMPLE_KEEP,
    )


def values(view: PlayerView, rng: random.Random) -> tuple[dict[int, float], Deals]:
    """Each rank the seat may play, with its weighted mean value to the end of the
    hand's play (my side's points less the others', ``multi.weights_for``) over deals
    sampled from ``rng``; and those deals."""
    sampled = sample_deals(view, rng)
    weights = multi.weights_for(view.players)
    by_rank = multi.card_values(
        held_ranks(view), sampled, count_ranks(view), view.count, weights, MULTI_DEPTH
    )
    return by_rank, sampled


def play(view: PlayerView, rng: random.Random) -> Action:
    """The card best on average over sampled deals of every other seat's hidden cards,
    each deal's play searched with the others modelled (``multi``)."""
    by_rank, sampled = values(view, rng)
    if view.starter is not None and near_end(view, MULTI_ENDGAME):
        chances = win_values(view, held_ranks(view), sampled[:MULTI_END_SAMPLES], count_ranks(view))
        by_rank = {r: chances[r] + 1e-4 * v for r, v in by_rank.items()}
    scored = [(by_rank[card.rank], Play(view.seat, card)) for card in view.playable]
    return pick(scored, rng)


def win_values(
    view: PlayerView,
    mine: pegsearch.Ranks,
    deals: Sequence[tuple[multi.Hands, float]],
    seq: pegsearch.Ranks,
) -> dict[int, float]:
    """3 and 4 players: for each rank I may play, the weighted mean over the deals of
    my side's chance to win (``multi.WinSearch``)."""
    assert view.starter is not None
    n = view.players
    seats = [(view.seat + k) % n for k in range(n)]
    order = [view.my_side] + [sc.side for sc in view.scores if sc.side != view.my_side]
    side_index = {side: i for i, side in enumerate(order)}
    seat_side = {seat: sc.side for sc in view.scores for seat in sc.seats}
    side_of = [side_index[seat_side[s]] for s in seats]
    front = {sc.side: sc.front for sc in view.scores}
    needs = [view.target - front[side] for side in order]
    dealer = (view.dealer - view.seat) % n
    start = view.starter.rank
    my_show = show_points(view.kept, view.starter)
    played = [[c.rank for p, c, _ in view.plays if p == s] for s in seats]
    total = sum(w for _, w in deals)
    out: dict[int, float] = {}
    searches = []
    for others, w in deals:
        shows = [my_show] + [
            rank_points(tuple(sorted((*played[k], *others[k - 1], start)))) for k in range(1, n)
        ]

        def terminal(gains: tuple[int, ...], shows: list[int] = shows) -> float:
            left = [need - g for need, g in zip(needs, gains, strict=True)]
            return multi.after_pegging(left, shows, side_of, dealer, 0, n)

        searches.append((multi.WinSearch(needs, side_of, terminal), others, w))
    zero = tuple(0 for _ in order)
    for r in sorted(set(mine)):
        if view.count + min(r, 10) > 31:
            continue
        acc = 0.0
        for search, others, w in searches:
            acc += w * search.after((mine, *others), seq, view.count, 0, r, zero)
        out[r] = acc / total
    return out
