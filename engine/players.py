"""Computer opponents: the random and medium players and what the others share.

Every strategy here takes a ``PlayerView`` and a ``random.Random`` and nothing
else, so it cannot see another player's cards or the pack, and all its
randomness comes from the generator passed in.

This module is the bottom of the computer players: the other strategies
(:mod:`engine.easy`, :mod:`engine.baselines`, :mod:`engine.bsd`,
:mod:`engine.strategy`) import its helpers, the table of levels
(:mod:`engine.levels`) imports the strategies, and the entry points that build
a seat's view and ask the table (``choose_action``, ``computer_view``,
``computer_move``, ``view_rng``, ``decide``) are in :mod:`engine.computer`.  It
imports none of them.  It holds ``random`` and ``medium`` (once called
``good``, still accepted under that name) and the helpers other strategies
share.

``random``
    Uniform among the legal actions (a claim is uniform over 0..29).
``medium`` (``good``)
    Discard: for every possible discard, the average of ``show_points`` of the
    kept cards over every starter the seat has not seen, plus (own crib) or
    minus (an opponent's crib) the expected crib value of the cards laid away
    (``CRIB_PAIR_VALUE`` / ``CRIB_SINGLE_VALUE``).  Play: what the card scores
    now; then, over the next player's possible answers — their cards drawn
    from the cards the seat has not seen, narrowed by any go they said — the
    points of their best answer against ours in return; the go or last-card
    point when nobody else can play; and small tactical preferences (lead a
    four or lower or from a pair, not a five; keep low cards for the end of a
    count; do not leave the count at 5 or 21).  Muggins games: the hand or
    crib being counted lies face up (``view.showing``), so claim its exact
    count, and answer a claim by counting the shown cards: muggins when the
    claim was short, accept when it was right.

The crib tables
---------------
``CRIB_PAIR_VALUE[a][b]`` is the exact mean score of a crib holding two cards of
ranks ``a`` and ``b`` (suits averaged as dealt: 1 in 4 pairs of different ranks
is suited) when the other two crib cards and the starter are drawn uniformly
from the other 50 cards; ``CRIB_SINGLE_VALUE[r]`` is the same for one card and
three random others (the 3- and 4-player crib).  ``exact_crib_mean`` computes
them and a test checks the constants.  Real cribs are not random — a pone lays
away cards that do not help the dealer — so these slightly overstate the value
of the pone's discards; that errs on the side of caution.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import cache, lru_cache
from itertools import combinations, combinations_with_replacement
from math import comb
from typing import TYPE_CHECKING

from engine.actions import Accept, Action, Claim, Discard, Go, Muggins, Play
from engine.cards import JACK, Card, Suit, full_deck
from engine.game import DISCARD, MAX_CLAIM, PEGGING, SHOW, Event
from engine.scoring import rank_points, show_points, show_total
from engine.view import PlayerView

if TYPE_CHECKING:
    import numpy as np

_DECK: tuple[Card, ...] = tuple(full_deck())
_EPS = 1e-9

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


# -- the random and medium players -------------------------------------------------


def random_action(view: PlayerView, rng: random.Random) -> Action:
    """Uniform among the legal actions."""
    if view.may_claim:
        return Claim(view.seat, rng.randint(0, MAX_CLAIM))
    return rng.choice(view.legal)


def good_action(view: PlayerView, rng: random.Random) -> Action:
    if view.phase == DISCARD:
        return choose_discard(view, rng)
    if view.phase == PEGGING:
        return choose_play(view, rng)
    if view.phase == SHOW:
        if view.awaiting_muggins:
            return answer_claim(view)
        return choose_claim(view)
    raise ValueError(f"nothing to decide in phase {view.phase!r}")


def pick(scored: Sequence[tuple[float, Action]], rng: random.Random) -> Action:
    """The best-valued action; ties (within 1e-9) broken by ``rng``."""
    best = max(value for value, _ in scored)
    ties = [action for value, action in scored if value >= best - _EPS]
    return ties[0] if len(ties) == 1 else rng.choice(ties)


# -- discarding --------------------------------------------------------------------


def crib_value(discards: Sequence[Card], players: int) -> float:
    """The expected crib score contributed by laying away ``discards``."""
    if players == 2:
        a, b = (c.rank for c in discards)
        return CRIB_PAIR_VALUE[a][b]
    (card,) = discards
    return CRIB_SINGLE_VALUE[card.rank]


def owns_crib(view: PlayerView) -> bool:
    """True when the crib scores for this seat's side."""
    return view.dealer == view.seat or (view.partner is not None and view.dealer == view.partner)


def discard_values(view: PlayerView) -> list[tuple[float, Discard]]:
    """Every discard with its value: mean hand score over unseen starters ± crib value."""
    holding = view.holding
    need = 2 if view.players == 2 else 1
    unseen = [c for c in _DECK if c not in holding]
    sign = 1.0 if owns_crib(view) else -1.0
    out: list[tuple[float, Discard]] = []
    for discard in combinations(holding, need):
        kept = [c for c in holding if c not in discard]
        hand = show_total(kept, unseen) / len(unseen)
        value = hand + sign * crib_value(discard, view.players)
        out.append((value, Discard(view.seat, discard)))
    return out


def choose_discard(view: PlayerView, rng: random.Random) -> Action:
    return pick(discard_values(view), rng)


# -- pegging -----------------------------------------------------------------------


@lru_cache(maxsize=1 << 18)
def _play_points_ranks(ranks: tuple[int, ...]) -> int:
    """What the last of these cards (by rank, all in the current count) scores: the
    ``score_play`` total, computed from the ranks alone."""
    count = sum(min(r, 10) for r in ranks)
    points = 2 if count in (15, 31) else 0
    last = ranks[-1]
    same = 1
    for rank in reversed(ranks[:-1]):
        if rank != last:
            break
        same += 1
    points += same * (same - 1)  # 2, 6 or 12
    for length in range(len(ranks), 2, -1):
        tail = ranks[-length:]
        if len(set(tail)) == length and max(tail) - min(tail) == length - 1:
            points += length
            break
    return points


def play_points(sequence: Sequence[Card]) -> int:
    """``score_play`` total of the last card of ``sequence`` (only ranks matter)."""
    return _play_points_ranks(tuple(c.rank for c in sequence))


def unseen_cards(view: PlayerView) -> list[Card]:
    """Cards this seat has not seen: not held, not laid away, not turned, not played."""
    seen = set(view.holding) | set(view.laid_away) | set(view.kept)
    if view.starter is not None:
        seen.add(view.starter)
    seen.update(card for _, card, _ in view.plays)
    return [c for c in _DECK if c not in seen]


def _go_limits(view: PlayerView) -> tuple[set[int], dict[int, int]]:
    """Seats that said go in the current count, and for each seat that said go this
    hand the lowest value its remaining cards can have (each go at count n proves
    every card it still held was worth more than 31 - n)."""
    gone: set[int] = set()
    low: dict[int, int] = {}
    for event in view.events:
        if event.hand != view.hand_no:
            continue
        if event.kind == "count_end":
            gone.clear()
        elif event.kind == "go" and event.seat is not None and event.count is not None:
            gone.add(event.seat)
            low[event.seat] = max(low.get(event.seat, 0), 32 - event.count)
    return gone, low


def _same_side(view: PlayerView, seat: int) -> bool:
    return seat == view.seat or (view.partner is not None and seat == view.partner)


def _solo(sequence: list[Card], cards: tuple[Card, ...]) -> int:
    """Best points the seat can make playing alone to the end of the count, go included."""
    return _solo_ranks(tuple(c.rank for c in sequence), tuple(sorted(c.rank for c in cards)))


@lru_cache(maxsize=1 << 16)
def _solo_ranks(sequence: tuple[int, ...], ranks: tuple[int, ...]) -> int:
    """``_solo`` by ranks (only ranks matter); ``ranks`` sorted."""
    count = sum(min(r, 10) for r in sequence)
    best = -1
    for i, rank in enumerate(ranks):
        if (i and rank == ranks[i - 1]) or count + min(rank, 10) > 31:
            continue
        after = (*sequence, rank)
        rest = ranks[:i] + ranks[i + 1 :]
        best = max(best, _play_points_ranks(after) + _solo_ranks(after, rest))
    if best >= 0:
        return best
    return 1 if count < 31 else 0


def _replies(
    sequence: list[Card], pool: list[Card], holds: int
) -> tuple[list[tuple[float, int, int]], float]:
    """How a player holding ``holds`` cards drawn uniformly from ``pool`` answers
    ``sequence``: ([(probability, rank, points)], probability of no legal card).

    The player is assumed to take the best score available; without one, to play
    any legal card, each rank in proportion to how many of it are in the pool.
    Holding cards of different ranks is treated as independent.
    """
    return _replies_by_rank(tuple(c.rank for c in sequence), _rank_counts(pool), holds)


def _rank_counts(pool: Sequence[Card]) -> list[tuple[int, int]]:
    """(rank, how many) for the ranks in ``pool``, in order of first appearance."""
    counts: dict[int, int] = {}
    for card in pool:
        counts[card.rank] = counts.get(card.rank, 0) + 1
    return list(counts.items())


def _replies_by_rank(
    ranks: tuple[int, ...], pool: list[tuple[int, int]], holds: int
) -> tuple[list[tuple[float, int, int]], float]:
    """``_replies`` with the sequence as ranks and the pool as ``_rank_counts``."""
    count = sum(min(r, 10) for r in ranks)
    size = sum(n for _, n in pool)
    holds = min(holds, size)
    if holds <= 0:
        return [], 1.0
    total = comb(size, holds)
    by_rank = [(rank, n) for rank, n in pool if count + min(rank, 10) <= 31]
    p_stuck = comb(size - sum(n for _, n in by_rank), holds) / total
    scoring: list[tuple[int, int, float]] = []
    quiet: list[tuple[int, int]] = []
    for rank, n in by_rank:
        points = _play_points_ranks((*ranks, rank))
        if points:
            scoring.append((points, rank, 1.0 - comb(size - n, holds) / total))
        else:
            quiet.append((rank, n))
    scoring.sort(reverse=True)
    out: list[tuple[float, int, int]] = []
    miss = 1.0
    for points, rank, p in scoring:
        out.append((p * miss, rank, points))
        miss *= 1.0 - p
    quiet_cards = sum(n for _, n in quiet)
    if quiet_cards:
        rest = max(0.0, miss - p_stuck)
        out.extend((rest * n / quiet_cards, rank, 0) for rank, n in quiet)
    return out, p_stuck


def play_values(view: PlayerView) -> list[tuple[float, Action]]:
    """Every legal play with its value for this seat (a forced go has value 0).

    The value of a card: what it scores now; then, over the next player's
    possible answers (``_replies``), their points (against us unless they are
    our partner) and our best immediate answer to an opponent's card; and, if
    nobody else can play, what we make alone to the end of the count.
    """
    if view.must_go:
        return [(0.0, Go(view.seat))]
    sequence = [card for _, card in view.count_cards]
    unseen = unseen_cards(view)
    gone, low = _go_limits(view)
    n = view.players
    others = [
        seat
        for seat in ((view.seat + step) % n for step in range(1, n))
        if view.cards_left[seat] and seat not in gone
    ]
    pools = {
        seat: _rank_counts([c for c in unseen if c.value >= low.get(seat, 0)]) for seat in others
    }
    out: list[tuple[float, Action]] = []
    for card in view.playable:
        after = [*sequence, card]
        ranks = tuple(c.rank for c in after)
        count = view.count + card.value
        rest = tuple(c for c in view.holding if c != card)
        value = float(play_points(after))
        if count < 31:
            p_all_stuck = 1.0
            for pos, seat in enumerate(others):
                replies, p_stuck = _replies_by_rank(ranks, pools[seat], view.cards_left[seat])
                p_all_stuck *= p_stuck
                if pos:
                    continue
                if _same_side(view, seat):
                    value += sum(q * points for q, _, points in replies)
                    continue
                for q, rank, points in replies:
                    reply_count = count + min(rank, 10)
                    answer = max(
                        (
                            _play_points_ranks((*ranks, rank, mine.rank))
                            for mine in rest
                            if reply_count + mine.value <= 31
                        ),
                        default=0,
                    )
                    value += q * (answer - points)
            value += p_all_stuck * _solo(after, rest)
        value += _tactics(view, card, count, rest)
        out.append((value, Play(view.seat, card)))
    return out


def _tactics(view: PlayerView, card: Card, count: int, rest: tuple[Card, ...]) -> float:
    """Small preferences the one-ply lookahead does not see."""
    bonus = 0.0
    if view.count == 0:
        if any(c.rank == card.rank for c in rest):
            bonus += 0.2  # a lead from a pair: a pair back makes a pair royal
        if card.value <= 4:
            bonus += 0.2  # nothing makes fifteen on it
        if card.value == 5:
            bonus -= 0.3
    elif card.value <= 4 and count < 21 and any(c.value > 4 for c in rest):
        bonus -= 0.1 * (5 - card.value) / 4  # keep low cards for a go or 31 later
    if count in (5, 21):
        bonus -= 0.2
    return bonus


def choose_play(view: PlayerView, rng: random.Random) -> Action:
    return pick(play_values(view), rng)


# -- muggins: claims and answers ---------------------------------------------------


def shown_value(view: PlayerView) -> int | None:
    """The true count of the hand or crib being counted now, from the face-up cards
    (``view.showing``); None outside a muggins show or when nothing is shown."""
    entry = view.show_entry
    if entry is None or view.starter is None:
        return None
    seat, what = entry
    cards = view.showing
    if not cards and what == "hand" and seat == view.seat:
        cards = view.kept  # a view without ``showing``: one's own hand is known anyway
    if not cards:
        return None
    return show_points(cards, view.starter, crib=what == "crib")


def choose_claim(view: PlayerView) -> Action:
    """The exact count of the hand or crib this seat is counting."""
    return Claim(view.seat, min(shown_value(view) or 0, MAX_CLAIM))


def claim_answered(view: PlayerView) -> Event | None:
    """The claim the muggins window is open for, if ``view.events`` reaches back to it."""
    entry = view.show_entry
    if entry is None:
        return None
    seat, what = entry
    latest = next(
        (e for e in reversed(view.events) if e.kind == "claim" and e.hand == view.hand_no), None
    )
    if latest is None or latest.seat != seat or not latest.detail.startswith(f"{what}:"):
        return None  # the events start after the claim: an earlier claim is not this one
    return latest


def answer_claim(view: PlayerView) -> Action:
    """Muggins when the claim being answered is short of the shown cards' true count.

    While the window is open the claim was not over the true count, so what it
    pegged is exactly what was claimed.  When the view's events start after the
    claim (a status or reminder mail), the claim is unknown: a muggins call costs
    nothing when the count was right, so it calls muggins on any scoring hand.
    """
    actual = shown_value(view)
    if not actual:
        return Accept(view.seat)
    claim = claim_answered(view)
    if claim is None or actual > claim.points:
        return Muggins(view.seat)
    return Accept(view.seat)


# -- the crib tables ---------------------------------------------------------------


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


__all__ = [
    "CRIB_PAIR_VALUE",
    "CRIB_SINGLE_VALUE",
    "answer_claim",
    "choose_claim",
    "choose_discard",
    "choose_play",
    "claim_answered",
    "crib_value",
    "discard_values",
    "exact_crib_mean",
    "exact_pair_value",
    "good_action",
    "owns_crib",
    "pick",
    "play_points",
    "play_values",
    "random_action",
    "shown_value",
    "unseen_cards",
]
