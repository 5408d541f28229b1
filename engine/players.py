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
``crib_value`` reads ``CRIB_PAIR_VALUE`` (two cards laid away) and
``CRIB_SINGLE_VALUE`` (one): the exact mean crib around a discard. They, how
they are computed (``exact_crib_mean``) and why they slightly overstate a pone's
discards are in :mod:`engine.cribmeans`; this module re-exports them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache
from itertools import combinations
from math import comb

from engine.actions import Accept, Action, Claim, Discard, Go, Muggins, Play
from engine.cards import Card, full_deck
from engine.cribmeans import (
    CRIB_PAIR_VALUE,
    CRIB_SINGLE_VALUE,
    exact_crib_mean,
    exact_pair_value,
)
from engine.game import DISCARD, MAX_CLAIM, PEGGING, SHOW, Event
from engine.scoring import show_points, show_total
from engine.view import PlayerView

_DECK: tuple[Card, ...] = tuple(full_deck())
_EPS = 1e-9


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
