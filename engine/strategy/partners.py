"""Pegging at 4 players by a lookahead over the next seats' answers, partner included.

The medium player looks one card ahead: the next player's answer (from the cards
it cannot have seen) and then *its own* best answer.  At 4 players the seat that
answers the next player is not me but my partner, whose cards I do not see
either.  ``play_values`` follows the table round instead: for each card I may
play, the next seat's answers as the medium player models them (each rank with
the chance that the seat holds it and it is the best score it has,
``players._replies_by_rank``), for each of those my partner's answers the same
way, for each of those the answers of the seat after my partner (``DEPTH``
seats in all), and then my own best answer from the cards I hold (``ME_LAST``;
without it the last seat counts by its expected points alone); a seat that
cannot play passes the count on.  Points
of my side count for me, the others' against me.  When no other seat can play
after my card, I play on alone (``players._solo``).  The medium player's small
tactical preferences (``players._tactics``) are added, and ties are broken the
same way.

Every seat's cards are drawn from the cards I have not seen (a seat that said go
in this hand holds only cards over what it could not play), each seat on its
own: the lookahead does not take away from one seat's pool the card another
seat's branch played.
"""

from __future__ import annotations

from functools import lru_cache

from engine.actions import Action, Go, Play
from engine.players import (
    _go_limits,
    _play_points_ranks,
    _rank_counts,
    _replies_by_rank,
    _same_side,
    _solo,
    _tactics,
    unseen_cards,
)
from engine.view import PlayerView

DEPTH = 3
"""Seats after me whose answers are followed: the next seat and my partner by
branching on each answer, the last of them by its expected points."""

ME_LAST = True
"""After the last of those seats, my own best answer from the cards I hold."""

_VALUE = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)

Pool = tuple[tuple[int, int], ...]


@lru_cache(maxsize=1 << 16)
def _replies(
    ranks: tuple[int, ...], pool: Pool, holds: int
) -> tuple[tuple[tuple[float, int, int], ...], float]:
    replies, stuck = _replies_by_rank(ranks, list(pool), holds)
    return tuple(replies), stuck


def _answer(ranks: tuple[int, ...], count: int, mine: tuple[int, ...]) -> int:
    """My best immediate points on the count from ``mine``."""
    return max(
        (_play_points_ranks((*ranks, r)) for r in mine if count + _VALUE[r] <= 31), default=0
    )


def _ahead(
    ranks: tuple[int, ...],
    count: int,
    seats: tuple[tuple[Pool, int, float], ...],
    mine: tuple[int, ...] | None,
) -> float:
    """The value of the answers of ``seats`` in turn (pool, cards held, +1 my side or
    -1 theirs) to the count ``ranks`` standing at ``count``; then, with ``mine``, my
    own best answer."""
    if count >= 31:
        return 0.0
    if not seats:
        return float(_answer(ranks, count, mine)) if mine else 0.0
    (pool, holds, sign), rest = seats[0], seats[1:]
    if holds <= 0:
        return _ahead(ranks, count, rest, mine)
    replies, stuck = _replies(ranks, pool, holds)
    if not rest and not mine:
        return sign * sum(q * pts for q, _, pts in replies)
    value = stuck * _ahead(ranks, count, rest, mine) if stuck > 1e-9 else 0.0
    for q, rank, pts in replies:
        if q < 1e-9:
            continue
        value += q * (sign * pts + _ahead((*ranks, rank), count + _VALUE[rank], rest, mine))
    return value


def play_values(view: PlayerView) -> list[tuple[float, Action]]:
    """Every legal play with its value (a forced go has value 0)."""
    if view.must_go:
        return [(0.0, Go(view.seat))]
    sequence = [card for _, card in view.count_cards]
    unseen = unseen_cards(view)
    gone, low = _go_limits(view)
    n = view.players
    others = [(view.seat + k) % n for k in range(1, n)]
    seats: list[tuple[Pool, int, float]] = []
    for seat in others:
        holds = 0 if seat in gone else view.cards_left[seat]
        pool = tuple(_rank_counts([c for c in unseen if c.value >= low.get(seat, 0)]))
        seats.append((pool, holds, 1.0 if _same_side(view, seat) else -1.0))
    ahead = tuple(seats[:DEPTH])
    out: list[tuple[float, Action]] = []
    for card in view.playable:
        after = [*sequence, card]
        ranks = tuple(c.rank for c in after)
        count = view.count + card.value
        rest = tuple(c for c in view.holding if c != card)
        value = float(_play_points_ranks(ranks))
        if count < 31:
            mine = tuple(c.rank for c in rest) if ME_LAST and len(ahead) == n - 1 else None
            value += _ahead(ranks, count, ahead, mine)
            p_all_stuck = 1.0
            for pool, holds, _ in seats:
                if holds > 0:
                    p_all_stuck *= _replies(ranks, pool, holds)[1]
            value += p_all_stuck * _solo(after, rest)
        value += _tactics(view, card, count, rest)
        out.append((value, Play(view.seat, card)))
    return out
