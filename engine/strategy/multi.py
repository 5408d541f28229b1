"""Pegging by search for 3 and 4 players.

The 2-player search (``pegsearch.solve_model``) generalised to every seat at the
table.  Seats are numbered from the deciding player: 0 is me, 1 the player on my
left (the next to play after me), and so on; at 4 players seat 2 is my partner.

``solve`` plays out the rest of the hand's pegging once every hand is known
(ranks only): at my turns I take the best card; every other seat — my partner
too — cannot see the other hands and plays ``pegsearch.model_choice`` (the best
of points now less what the next player can expect to answer, ties averaged).
The play follows the rules of the engine: the turn passes to the next seat on
the left that can play (one that cannot has said go, and the count only
rises); when nobody can, the last card of the count scores the go (not at 31)
and the seat on the last player's left that still holds cards leads again.
Its value is the weighted sum of the points each seat makes from here:
``weights[s]`` is 1 for my side and ``-OPP_WEIGHT`` (3 players) or -1
(4 players) for an opponent.

The hidden hands are not known, so ``sample_hands`` deals every other seat's
unplayed cards from the cards this seat has not seen, consistent with the gos
each seat said this hand, each deal weighted by how good a keep it makes for
each seat (``pegsearch.KEEP_WEIGHT``), as the 2-player search does.

Near the end of a game (``WinSearch``) the same play is searched for the game
itself: a side that reaches the target while pegging wins on the spot, and when
nobody does, the position after the play is scored by ``race`` — each side's
chance to reach the target first in the counting order of the shows and the
hands after.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from functools import lru_cache

from engine.strategy import pegsearch, winprob
from engine.strategy.handvalue import mean_show
from engine.strategy.pegsearch import KEEP_WEIGHT, Ranks, model_choice, step

Hands = tuple[Ranks, ...]
"""Sorted ranks still held, by seat counted from the deciding player (0 = me)."""

OPP_WEIGHT = 0.5
"""At 3 players, what a point an opponent pegs costs me, against a point of mine.
Each of two opponents' points hurts less than mine helps: it also sets that
opponent against the other."""

MULTI_CACHE = 1 << 18
"""Positions at my turn that ``solve`` remembers (shared by every deal of a hand)."""

_VALUE = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)


def weights_for(players: int, opp_weight: float = OPP_WEIGHT) -> tuple[float, ...]:
    """Each seat's points as worth to me (seat 0): my side +1, the others negative."""
    if players == 4:
        return (1.0, -1.0, 1.0, -1.0)
    return (1.0, *([-opp_weight] * (players - 1)))


@lru_cache(maxsize=1 << 18)
def model_play(hand: Ranks, seq: Ranks, count: int, other_holds: int) -> int:
    """The one rank a modelled seat plays from ``hand`` (sorted, at least one card
    playable): the best of points now less ``reply_risk`` of the next player
    (``pegsearch.model_choice``), ties broken as the medium player's tactics do —
    lead a four or lower or from a pair, not a five; keep low cards while the
    count is young; do not leave the count at 5 or 21 — then the highest rank."""
    choice = model_choice(hand, seq, count, other_holds)
    if len(choice) == 1:
        return choice[0]
    best = -1e9
    pick = choice[0]
    for r in choice:
        v = _VALUE[r]
        new = count + v
        bonus = 0.0
        if count == 0:
            if hand.count(r) > 1:
                bonus += 0.2
            if v <= 4:
                bonus += 0.2
            if v == 5:
                bonus -= 0.3
        elif v <= 4 and new < 21 and _VALUE[hand[-1]] > 4:
            bonus -= 0.1 * (5 - v) / 4
        if new in (5, 21):
            bonus -= 0.2
        if bonus >= best - 1e-9:
            best = max(best, bonus)
            pick = r
    return pick


def _can(hand: Ranks, room: int) -> bool:
    return bool(hand) and _VALUE[hand[0]] <= room


def _without(hand: Ranks, rank: int) -> Ranks:
    i = hand.index(rank)
    return hand[:i] + hand[i + 1 :]


def _replace(hands: Hands, seat: int, hand: Ranks) -> Hands:
    return (*hands[:seat], hand, *hands[seat + 1 :])


def _next_holder(hands: Hands, after: int) -> int:
    """The first seat on ``after``'s left (``after`` itself last) that holds cards."""
    n = len(hands)
    for k in range(1, n + 1):
        s = (after + k) % n
        if hands[s]:
            return s
    return after


def solve(
    hands: Hands,
    seq: Ranks,
    count: int,
    turn: int,
    last: int,
    weights: tuple[float, ...],
    depth: int = 99,
) -> float:
    """Σ weights[s] × the points seat s pegs from here to the end of the hand.

    I choose the best card at my next ``depth`` turns, then play the model too.

    ``turn``: the seat whose turn it is (the first seat from it on the left that
    can play plays); ``last``: who played the last card of the count (-1 when the
    count is empty); ``seq``: the ranks of the count (``pegsearch.trim`` of them
    is enough).

    The modelled seats' plays are followed in a loop up to my next choice, which
    alone is remembered (``_choose``): the plays between are determined, and
    remembering each of them cost more than it saved."""
    n = len(hands)
    acc = 0.0
    while True:
        room = 31 - count
        mover = -1
        for k in range(n):
            s = (turn + k) % n
            if _can(hands[s], room):
                mover = s
                break
        if mover < 0:
            if last >= 0 and count != 31:
                acc += weights[last]
            if not any(hands):
                return acc
            seq, count, turn, last = (), 0, _next_holder(hands, last), -1
            continue
        if mover == 0 and depth > 0:
            return acc + _choose(hands, seq, count, weights, depth)
        hand = hands[mover]
        r = model_play(hand, seq, count, len(hands[_next_holder(hands, mover)]))
        pts, seq = step(seq, r, count)
        acc += weights[mover] * pts
        hands = _replace(hands, mover, _without(hand, r))
        count += _VALUE[r]
        turn = (mover + 1) % n
        last = mover


@lru_cache(maxsize=MULTI_CACHE)
def _choose(hands: Hands, seq: Ranks, count: int, weights: tuple[float, ...], depth: int) -> float:
    """``solve`` where it is my turn and I can play: the best of my cards."""
    hand = hands[0]
    room = 31 - count
    nxt = 1 % len(hands)
    best = -1e9
    prev = 0
    for r in hand:
        v = _VALUE[r]
        if v > room:
            break
        if r == prev:
            continue
        prev = r
        pts, new_seq = step(seq, r, count)
        x = weights[0] * pts + solve(
            _replace(hands, 0, _without(hand, r)), new_seq, count + v, nxt, 0, weights, depth - 1
        )
        if x > best:
            best = x
    return best


def card_values(
    mine: Ranks,
    deals: Sequence[tuple[Hands, float]],
    seq: Ranks,
    count: int,
    weights: tuple[float, ...],
    depth: int = 99,
) -> dict[int, float]:
    """For each rank I may play now: its points plus the weighted mean over the deals
    (the other seats' hands, seats 1..n-1) of ``solve`` after it."""
    total = sum(w for _, w in deals)
    out: dict[int, float] = {}
    n = len(weights)
    for r in sorted(set(mine)):
        if count + _VALUE[r] > 31:
            continue
        pts, new_seq = step(seq, r, count)
        rest = _without(mine, r)
        acc = 0.0
        for others, w in deals:
            acc += w * solve((rest, *others), new_seq, count + _VALUE[r], 1 % n, 0, weights, depth)
        out[r] = weights[0] * pts + acc / total
    return out


def sample_hands(
    unseen: Sequence[int],
    holds: Sequence[int],
    floors: Sequence[int],
    played: Sequence[Sequence[int]],
    samples: int,
    rng: random.Random,
    keep_weight: float = KEEP_WEIGHT,
) -> list[tuple[Hands, float]]:
    """Weighted deals of the other seats' unplayed cards, grouped by ranks.

    ``holds[i]``, ``floors[i]``, ``played[i]``: for the i-th other seat (seat i+1),
    how many cards it holds, the least value each of them can have (from its gos),
    and the card indices it played this hand.  Seats with the highest floor are
    dealt first, each from what is left of ``unseen``; a deal is weighted by
    ``exp(keep_weight × mean show)`` of each seat's four kept cards."""
    order = sorted(range(len(holds)), key=lambda i: (-floors[i], i))
    out: dict[Hands, float] = {}
    for _ in range(samples):
        pool = list(unseen)
        dealt: list[Ranks] = [()] * len(holds)
        w = 1.0
        for i in order:
            k = holds[i]
            if k <= 0:
                continue
            fit = [c for c in pool if _VALUE[c // 4 + 1] >= floors[i]]
            if len(fit) < k:
                fit = pool
            k = min(k, len(fit))
            cards = rng.sample(fit, k)
            taken = set(cards)
            pool = [c for c in pool if c not in taken]
            dealt[i] = tuple(sorted(c // 4 + 1 for c in cards))
            kept = [*played[i], *cards]
            if len(kept) == 4 and keep_weight:
                w *= math.exp(keep_weight * mean_show(kept, kept))
        key = tuple(dealt)
        out[key] = out.get(key, 0.0) + w
    return list(out.items())


def keep_peg_values(
    hand: Sequence[int],
    leader: int,
    unseen: Sequence[int],
    samples: int,
    rng: random.Random,
    weights: tuple[float, ...],
) -> dict[int, float]:
    """For each card of a 5-card ``hand`` laid away: the pegging value of keeping the
    other four, ``solve`` (everybody, me too, playing the model) over ``samples``
    deals of four cards to each other seat from ``unseen`` (the same deals for
    every discard); ``leader`` is the seat that leads (counted from me)."""
    n = len(weights)
    deals: list[Hands] = []
    for _ in range(samples):
        cards = rng.sample(list(unseen), 4 * (n - 1))
        deals.append(
            tuple(tuple(sorted(c // 4 + 1 for c in cards[4 * i : 4 * i + 4])) for i in range(n - 1))
        )
    out: dict[int, float] = {}
    for d in hand:
        kept = tuple(sorted(c // 4 + 1 for c in hand if c != d))
        total = 0.0
        for others in deals:
            total += solve((kept, *others), (), 0, leader, -1, weights, 0)
        out[d] = total / samples
    return out


# -- the end of the game ------------------------------------------------------------

CRIB = winprob.CRIB
"""The crib's score distribution (measured at 2 players; near enough for a race)."""

RACE_SCALE = {3: 5.0, 4: 9.0}
"""Points of lead worth a factor e in the chance to win after the hand (``race``):
about half of what a side scores in a hand."""


def race(needs: Sequence[int], players: int) -> list[float]:
    """Each side's chance to win when the hand is over and nobody has won, from the
    points each still needs: ``exp(-need / RACE_SCALE)`` normalised (the side
    nearest the target most likely, a lead of a hand's points worth much)."""
    scale = RACE_SCALE.get(players, 5.0)
    low = min(needs)
    w = [math.exp(-(n - low) / scale) for n in needs]
    total = sum(w)
    return [x / total for x in w]


def after_pegging(
    needs: Sequence[int],
    shows: Sequence[int],
    side_of: Sequence[int],
    dealer: int,
    me: int,
    players: int,
) -> float:
    """My side's chance to win when the pegging is over and nobody has won: the hands
    counted in order from the dealer's left (``shows`` by seat), the first to its
    side's ``needs`` wins; then the dealer's crib from ``CRIB``; then ``race``."""
    left = list(needs)
    n = len(shows)
    for k in range(1, n + 1):
        s = (dealer + k) % n
        side = side_of[s]
        left[side] -= shows[s]
        if left[side] <= 0:
            return 1.0 if side == side_of[me] else 0.0
    d = side_of[dealer]
    total = 0.0
    for c, p in enumerate(CRIB):
        if p < 1e-9:
            continue
        if left[d] - c <= 0:
            total += p * (1.0 if d == side_of[me] else 0.0)
        else:
            after = list(left)
            after[d] -= c
            total += p * race(after, players)[side_of[me]]
    return total


class WinSearch:
    """One deal's play searched for my side's chance to win the game, not points.

    Seats as in ``solve`` (0 = me); ``side_of[s]`` is seat s's side (0 = mine) and
    ``needs[side]`` what the side still needs.  A side reaching it while pegging
    wins on the spot; when the cards are all played, ``terminal(gains)`` (the
    points each side pegged) gives the chance.  The other seats play ``model_play``
    (they do not look at the score)."""

    def __init__(
        self,
        needs: Sequence[int],
        side_of: Sequence[int],
        terminal: Callable[[tuple[int, ...]], float],
    ):
        self.needs = tuple(needs)
        self.side_of = tuple(side_of)
        self.terminal = terminal
        self.memo: dict[tuple[object, ...], float] = {}

    def value(
        self,
        hands: Hands,
        seq: Ranks,
        count: int,
        turn: int,
        last: int,
        gains: tuple[int, ...],
    ) -> float:
        key = (hands, seq, count, turn, last, gains)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        result = self._value(hands, seq, count, turn, last, gains)
        self.memo[key] = result
        return result

    def _score(self, gains: tuple[int, ...], seat: int, pts: int) -> tuple[tuple[int, ...], int]:
        """Gains after ``seat`` pegs ``pts``; and -1, or the side that has won."""
        if not pts:
            return gains, -1
        side = self.side_of[seat]
        new = (*gains[:side], gains[side] + pts, *gains[side + 1 :])
        return new, (side if new[side] >= self.needs[side] else -1)

    def _value(
        self,
        hands: Hands,
        seq: Ranks,
        count: int,
        turn: int,
        last: int,
        gains: tuple[int, ...],
    ) -> float:
        n = len(hands)
        room = 31 - count
        mover = -1
        for k in range(n):
            s = (turn + k) % n
            if _can(hands[s], room):
                mover = s
                break
        if mover < 0:
            if last >= 0 and count != 31:
                gains, won = self._score(gains, last, 1)
                if won >= 0:
                    return 1.0 if won == 0 else 0.0
            if not any(hands):
                return self.terminal(gains)
            return self.value(hands, (), 0, _next_holder(hands, last), -1, gains)
        hand = hands[mover]
        if mover == 0:
            best = -1.0
            prev = 0
            for r in hand:
                v = _VALUE[r]
                if v > room:
                    break
                if r == prev:
                    continue
                prev = r
                x = self.after(hands, seq, count, 0, r, gains)
                if x > best:
                    best = x
            return best
        r = model_play(hand, seq, count, len(hands[_next_holder(hands, mover)]))
        return self.after(hands, seq, count, mover, r, gains)

    def after(
        self,
        hands: Hands,
        seq: Ranks,
        count: int,
        seat: int,
        rank: int,
        gains: tuple[int, ...],
    ) -> float:
        """The chance after ``seat`` plays ``rank``."""
        pts, new_seq = step(seq, rank, count)
        gains, won = self._score(gains, seat, pts)
        if won >= 0:
            return 1.0 if won == 0 else 0.0
        hand = _replace(hands, seat, _without(hands[seat], rank))
        return self.value(hand, new_seq, count + _VALUE[rank], (seat + 1) % len(hands), seat, gains)


def forget() -> None:
    """Empty the search's memo of deals (``solve``) and, if it grew, of the modelled
    seats' choices; the hard player calls it at every discard, as
    ``pegsearch.forget`` (a memo kept for the life of a process grows without end
    and Python's garbage collector walks it).  Changes no result."""
    _choose.cache_clear()
    if model_play.cache_info().currsize > pegsearch.SMALL_MEMO:
        model_play.cache_clear()
