"""Pegging by search over the hidden cards (2 players).

The pegging of one hand, once every card is known, is a small two-player game
with perfect information: each side holds at most four cards, and only ranks
matter.  ``solve`` plays it out exactly (minimax of the point difference,
memoised on ranks, the go and last-card points included).

The hidden cards are not known, so ``sample_holdings`` deals the opponent's
unplayed cards from the cards this seat has not seen, consistent with what the
seat saw: the number of cards they still hold, and every go they said this
hand (a go at count n proves every card they still hold is worth more than
31 - n).  Each deal is weighted by how likely the opponent was to keep it: a
player keeps a good hand, so a deal is weighted by ``exp(KEEP_WEIGHT * v)``
where ``v`` is the mean show of the four cards the opponent kept (the cards
they played this hand and the dealt ones) over the starters they could not
see.  A card's value is its weighted mean over the deals of the exact
solution after it ("perfect-information Monte Carlo"); the seat plays the card
with the best value.

Minimax with the cards face up assumes the opponent sees our hand, and so plays
too defensively (it fears answers no real opponent can aim for).  The hard
player solves each deal with ``solve_model`` instead: the opponent plays like a
sensible player who cannot see our cards (``model_choice``: the most points now
less ``RISK_WEIGHT`` × ``reply_risk``, what a hidden hand of our size could
answer; equally good choices averaged), and we play the best answer.  It pegs
as well as minimax in duplicate pegging duels (``benchmarks/peg_duel.py``) and
its search is a third of the size (the opponent's nodes have one branch), so
the same time buys more deals.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from functools import cache, lru_cache

from engine.strategy.handvalue import mean_show

SOLVE_CACHE = 1 << 20
"""Positions ``solve`` remembers (about 330 bytes each)."""

RISK_WEIGHT = 1.0
"""How much the modelled opponent fears the answer a hidden hand can make
(``model_choice``)."""

KEEP_WEIGHT = 0.3
"""Softness of the opponent's keep model (0: every deal equally likely)."""

Ranks = tuple[int, ...]


def _value(rank: int) -> int:
    return rank if rank < 10 else 10


def peg_points(seq: Ranks) -> int:
    """What the last card of ``seq`` (ranks of the *whole* current count, in order)
    scores: fifteen, thirty-one, pairs and runs (not the go)."""
    count = sum(_value(r) for r in seq)
    return (2 if count in (15, 31) else 0) + shape_points(seq)


@cache
def shape_points(seq: Ranks) -> int:
    """The pairs and runs the last card of ``seq`` makes (``trim`` of the count is
    enough: the fifteen and thirty-one need the count itself)."""
    points = 0
    last = seq[-1]
    same = 1
    for r in reversed(seq[:-1]):
        if r != last:
            break
        same += 1
    points += (0, 0, 2, 6, 12)[same]
    for length in range(len(seq), 2, -1):
        tail = sorted(seq[-length:])
        if tail[-1] - tail[0] == length - 1 and len(set(tail)) == length:
            points += length
            break
    return points


def trim(seq: Ranks) -> Ranks:
    """The part of a count's ranks that can still score: the longest suffix of
    distinct ranks (a future run) or of equal ranks (a future pair), whichever is
    longer.  Earlier cards can never join a pair or run with a later card."""
    if len(seq) < 2:
        return seq
    if seq[-1] == seq[-2]:
        n = 2
        while n < len(seq) and seq[-n - 1] == seq[-1]:
            n += 1
        return seq[-n:]
    seen = {seq[-1]}
    n = 1
    while n < len(seq) and seq[-n - 1] not in seen:
        seen.add(seq[-n - 1])
        n += 1
    return seq[-n:]


_VALUE = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)


@cache
def step(seq: Ranks, rank: int, count: int) -> tuple[int, Ranks]:
    """Playing ``rank`` on the trimmed count ``seq`` standing at ``count``:
    (points, the new trimmed count)."""
    new_seq = (*seq, rank)
    total = count + _VALUE[rank]
    return (2 if total in (15, 31) else 0) + shape_points(new_seq), trim(new_seq)


def _remove(hand: Ranks, rank: int) -> Ranks:
    i = hand.index(rank)
    return hand[:i] + hand[i + 1 :]


@lru_cache(maxsize=SOLVE_CACHE)
def solve(mine: Ranks, theirs: Ranks, seq: Ranks, count: int, turn: int, last: int) -> int:
    """My pegging points minus theirs from here to the end of the hand, both sides
    playing perfectly.  ``mine``/``theirs``: sorted ranks still held; ``seq``: the
    ranks of the current count (``trim`` of them is enough); ``turn``: 0 me, 1 them;
    ``last``: who played the last card of the count (-1 when the count is empty)."""
    room = 31 - count
    can_me = bool(mine) and _VALUE[mine[0]] <= room
    can_them = bool(theirs) and _VALUE[theirs[0]] <= room
    if not can_me and not can_them:
        # the count ends: a go (or the last card) unless it is 31
        point = 0
        if last >= 0 and count != 31:
            point = 1 if last == 0 else -1
        if not mine and not theirs:
            return point
        nxt = 1 - last
        if not (theirs if nxt else mine):
            nxt = last
        return point + solve(mine, theirs, (), 0, nxt, -1)
    if turn == 0 and not can_me:
        turn = 1
    elif turn == 1 and not can_them:
        turn = 0
    if turn == 0:
        best = -1000
        prev = 0
        for i, r in enumerate(mine):
            v = _VALUE[r]
            if v > room:
                break
            if r == prev:
                continue
            prev = r
            pts, new_seq = step(seq, r, count)
            v = pts + solve(mine[:i] + mine[i + 1 :], theirs, new_seq, count + v, 1, 0)
            if v > best:
                best = v
        return best
    best = 1000
    prev = 0
    for i, r in enumerate(theirs):
        v = _VALUE[r]
        if v > room:
            break
        if r == prev:
            continue
        prev = r
        pts, new_seq = step(seq, r, count)
        v = solve(mine, theirs[:i] + theirs[i + 1 :], new_seq, count + v, 0, 1) - pts
        if v < best:
            best = v
    return best


def sample_holdings(
    unseen: Sequence[int],
    holds: int,
    min_value: int,
    played: Sequence[int],
    samples: int,
    rng: random.Random,
) -> list[tuple[Ranks, float]]:
    """Weighted deals of the opponent's ``holds`` unplayed cards (card indices drawn
    from ``unseen``, each worth at least ``min_value``), grouped by ranks."""
    pool = [c for c in unseen if _value(c // 4 + 1) >= min_value]
    holds = min(holds, len(pool))
    if holds == 0:
        return [((), 1.0)]
    out: dict[Ranks, float] = {}
    for _ in range(samples):
        deal = rng.sample(pool, holds)
        kept = [*played, *deal]
        w = 1.0
        if len(kept) == 4 and KEEP_WEIGHT:
            w = math.exp(KEEP_WEIGHT * mean_show(kept, kept))
        key = tuple(sorted(c // 4 + 1 for c in deal))
        out[key] = out.get(key, 0.0) + w
    return list(out.items())


def card_values(
    mine: Ranks,
    deals: Sequence[tuple[Ranks, float]],
    seq: Ranks,
    count: int,
) -> dict[int, float]:
    """For each rank I may play now: weighted mean of (its points + the solution after it)."""
    total = sum(w for _, w in deals)
    out: dict[int, float] = {}
    for r in sorted(set(mine)):
        if count + _value(r) > 31:
            continue
        pts, new_seq = step(seq, r, count)
        rest = _remove(mine, r)
        acc = 0.0
        for theirs, w in deals:
            acc += w * solve(rest, theirs, new_seq, count + _value(r), 1, 0)
        out[r] = pts + acc / total
    return out


class WinSearch:
    """The pegging of one deal solved for the chance of winning the game, not points.

    Near the end of a game a point is not a point: the first to the target wins
    at once, and what the shows will bring decides whether a point in the play is
    worth having.  ``value`` is minimax of the win probability over the same game
    as ``solve``; a side reaching the target wins on the spot, and when the hand's
    cards are all played ``terminal(my_gain, their_gain)`` gives the chance.
    With ``model`` the opponent plays ``model_choice`` (as in ``solve_model``)
    instead of the move worst for me.
    """

    def __init__(
        self,
        need_me: int,
        need_them: int,
        terminal: Callable[[int, int], float],
        model: bool = False,
    ):
        self.model = model
        self.need_me = need_me
        self.need_them = need_them
        self.terminal = terminal
        self.memo: dict[tuple[object, ...], float] = {}

    def value(
        self,
        mine: Ranks,
        theirs: Ranks,
        seq: Ranks,
        count: int,
        turn: int,
        last: int,
        got_me: int,
        got_them: int,
    ) -> float:
        if got_me >= self.need_me:
            return 1.0
        if got_them >= self.need_them:
            return 0.0
        key = (mine, theirs, seq, count, turn, last, got_me, got_them)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        room = 31 - count
        can_me = bool(mine) and _VALUE[mine[0]] <= room
        can_them = bool(theirs) and _VALUE[theirs[0]] <= room
        if not can_me and not can_them:
            if last >= 0 and count != 31:
                if last == 0:
                    got_me += 1
                else:
                    got_them += 1
            if not mine and not theirs:
                if got_me >= self.need_me:
                    result = 1.0
                elif got_them >= self.need_them:
                    result = 0.0
                else:
                    result = self.terminal(got_me, got_them)
            else:
                nxt = 1 - last
                if not (theirs if nxt else mine):
                    nxt = last
                result = self.value(mine, theirs, (), 0, nxt, -1, got_me, got_them)
            self.memo[key] = result
            return result
        if turn == 0 and not can_me:
            turn = 1
        elif turn == 1 and not can_them:
            turn = 0
        if turn == 1 and self.model:
            choice = model_choice(theirs, seq, count, len(mine))
            acc = 0.0
            for r in choice:
                pts, new_seq = step(seq, r, count)
                acc += self.value(
                    mine,
                    _remove(theirs, r),
                    new_seq,
                    count + _VALUE[r],
                    0,
                    1,
                    got_me,
                    got_them + pts,
                )
            result = acc / len(choice)
            self.memo[key] = result
            return result
        hand = mine if turn == 0 else theirs
        best = -1.0 if turn == 0 else 2.0
        prev = 0
        for i, r in enumerate(hand):
            v = _VALUE[r]
            if v > room:
                break
            if r == prev:
                continue
            prev = r
            pts, new_seq = step(seq, r, count)
            rest = hand[:i] + hand[i + 1 :]
            if turn == 0:
                x = self.value(rest, theirs, new_seq, count + v, 1, 0, got_me + pts, got_them)
                if x > best:
                    best = x
            else:
                x = self.value(mine, rest, new_seq, count + v, 0, 1, got_me, got_them + pts)
                if x < best:
                    best = x
        self.memo[key] = best
        return best


# -- a model of the opponent --------------------------------------------------------

_RANKS = tuple(range(1, 14))


@lru_cache(maxsize=1 << 16)
def reply_risk(seq: Ranks, count: int, holds: int) -> float:
    """The points a player holding ``holds`` cards dealt from a full pack can expect
    to make in answer to the count ``seq`` at ``count``: each rank that scores is
    held with chance ``1 - (1 - k/46)^holds`` for its ``k`` copies not in the
    count (independently of the other ranks), and the player takes
    the best of those it holds.  It does not depend on anybody's real cards: it is
    what a player who cannot see them fears."""
    if holds <= 0 or count >= 31:
        return 0.0
    scoring = []
    for r in _RANKS:
        copies = 4 - seq.count(r)
        if copies and count + _VALUE[r] <= 31:
            pts = step(seq, r, count)[0]
            if pts:
                scoring.append((pts, 1.0 - (1.0 - copies / 46) ** holds))
    scoring.sort(reverse=True)
    risk = 0.0
    miss = 1.0
    for pts, p in scoring:
        risk += miss * p * pts
        miss *= 1.0 - p
    return risk


@lru_cache(maxsize=1 << 18)
def model_choice(hand: Ranks, seq: Ranks, count: int, other_holds: int) -> tuple[int, ...]:
    """The ranks a sensible player who cannot see the other hand plays from ``hand``:
    the best of (points now − what the other side can expect to answer), ties kept."""
    room = 31 - count
    best = -1000.0
    out: list[int] = []
    prev = 0
    for r in hand:
        if _VALUE[r] > room:
            break
        if r == prev:
            continue
        prev = r
        pts, new_seq = step(seq, r, count)
        q = pts - RISK_WEIGHT * reply_risk(new_seq, count + _VALUE[r], other_holds)
        if q > best + 1e-9:
            best = q
            out = [r]
        elif q > best - 1e-9:
            out.append(r)
    return tuple(out)


def forget() -> None:
    """Empty the memos of the modelled search (``solve_model`` and what it calls).

    The hard player calls it at every discard.  The memos only save work within a
    hand (the same positions recur across a decision's deals and the hand's
    decisions); kept across hands they grow to millions of entries, a gigabyte
    per process, and every full collection of Python's cyclic garbage collector
    walks them (hundreds of milliseconds, the slowest decisions).  Emptying them
    changes no result."""
    solve_model.cache_clear()
    # the small memos (positions of a count, not of a deal) stay unless they grew
    for small in (model_choice, step, shape_points):
        if small.cache_info().currsize > SMALL_MEMO:
            small.cache_clear()


SMALL_MEMO = 50_000
"""``forget`` keeps the memos of counts (``step``, ``model_choice``…) below this size."""


@lru_cache(maxsize=SOLVE_CACHE)
def solve_model(mine: Ranks, theirs: Ranks, seq: Ranks, count: int, turn: int, last: int) -> float:
    """Like ``solve`` (my points minus theirs to the end of the hand), but the
    opponent does not see my cards: it plays ``model_choice`` (ties averaged), and I
    play the best answer to that."""
    room = 31 - count
    can_me = bool(mine) and _VALUE[mine[0]] <= room
    can_them = bool(theirs) and _VALUE[theirs[0]] <= room
    if not can_me and not can_them:
        point = 0
        if last >= 0 and count != 31:
            point = 1 if last == 0 else -1
        if not mine and not theirs:
            return point
        nxt = 1 - last
        if not (theirs if nxt else mine):
            nxt = last
        return point + solve_model(mine, theirs, (), 0, nxt, -1)
    if turn == 0 and not can_me:
        turn = 1
    elif turn == 1 and not can_them:
        turn = 0
    if turn == 0:
        best = -1000.0
        prev = 0
        for i, r in enumerate(mine):
            v = _VALUE[r]
            if v > room:
                break
            if r == prev:
                continue
            prev = r
            pts, new_seq = step(seq, r, count)
            x = pts + solve_model(mine[:i] + mine[i + 1 :], theirs, new_seq, count + v, 1, 0)
            if x > best:
                best = x
        return best
    choice = model_choice(theirs, seq, count, len(mine))
    acc = 0.0
    for r in choice:
        pts, new_seq = step(seq, r, count)
        acc += solve_model(mine, _remove(theirs, r), new_seq, count + _VALUE[r], 0, 1) - pts
    return acc / len(choice)


def card_values_model(
    mine: Ranks,
    deals: Sequence[tuple[Ranks, float]],
    seq: Ranks,
    count: int,
) -> dict[int, float]:
    """``card_values`` against the modelled opponent (``solve_model``)."""
    total = sum(w for _, w in deals)
    out: dict[int, float] = {}
    for r in sorted(set(mine)):
        if count + _value(r) > 31:
            continue
        pts, new_seq = step(seq, r, count)
        rest = _remove(mine, r)
        acc = 0.0
        for theirs, w in deals:
            acc += w * solve_model(rest, theirs, new_seq, count + _value(r), 1, 0)
        out[r] = pts + acc / total
    return out
