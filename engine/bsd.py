"""``bsd``: an arena baseline following the method of the classic BSD ``cribbage`` game.

The computer player of the BSD games collection (Earl T. Cohen and Ken Arnold,
Berkeley, 1980; ``games/cribbage``) is the best-known published cribbage
program.  This module plays by its method, written afresh from a reading of it
for our engine (only two-player games existed there; the three- and
four-player parts below are our adaptation).  It is a yardstick for the arena
(``python -m engine.arena medium bsd``), not a level offered to players.

Discarding (its ``cdiscard``)
    For each way to lay away, add up over every card the seat has not seen
    (each possible starter) the exact show score of the four kept cards —
    scored *as a crib*, a quirk kept here: a four-card flush counts only when
    the starter matches — and add (own crib) or subtract (the opponent's) for
    each starter the *crib adjustment* of the two cards laid away.  The
    adjustment is a table: the mean score of a crib holding these two cards,
    the other two crib cards and the starter drawn from the rest of the pack,
    by the two ranks and whether the two cards share a suit, rounded to a
    whole point (the program stores the exhaustive sums over the 58,800 cribs
    and divides with rounding).  ``BSD_ADJUST_OFFSUIT`` and
    ``BSD_ADJUST_SUITED`` are that table, recomputed with
    :func:`engine.players.exact_crib_mean` (a test checks them).  The largest
    total wins; ties go to the first discard in hand order.  With three or four
    players one card is laid away; its adjustment is the rounded mean crib with
    that one card (``BSD_ADJUST_SINGLE``).

Pegging (its ``peg`` and ``cchose``)
    Play the card that pegs the most now (fifteen, thirty-one, pairs, runs);
    ties go to the lowest card.  When no card scores, in this order:

    1. count under 4: a card bringing the count to exactly 4 (nothing makes
       fifteen on it); at the lead, failing that, a three;
    2. count 1 to 19: a card bringing the count to 21 − i when the seat holds
       another card worth i (for every i from 1 to 10): a ten played on it lets
       the seat make thirty-one;
    3. count under 15: a card bringing the count to t while holding another card
       worth 15 − t, trying t = 8, 7, 9, 6, 11, 12, 13, 14, 10, 5 in that order:
       an answer to a fifteen;
    4. otherwise the highest card that does not leave the count at 5, 10 or 21;
       failing that one that does not leave 5 or 21; failing that the highest.

    With one card left it plays it.  The program does not look at what the
    opponent may answer, beyond these rules.

Muggins games
    The program counts its own hands exactly and never takes muggins points
    from its opponent (it tells the player what they missed instead): this
    player claims the exact count and always accepts.
"""

from __future__ import annotations

import random
from itertools import combinations

from engine.actions import Accept, Action, Discard, Go, Play
from engine.cards import Card
from engine.game import DISCARD, PEGGING, SHOW
from engine.players import choose_claim, owns_crib, play_points
from engine.scoring import show_total
from engine.view import PlayerView

_DECK: tuple[Card, ...] = tuple(Card.from_index(i) for i in range(52))

# Upper triangles, row a = 1..13, column b = a..13 (suited: b = a+1..13).
_OFFSUIT_ROWS: tuple[tuple[int, ...], ...] = (
    (6, 4, 5, 5, 6, 4, 4, 4, 4, 4, 4, 4, 4),
    (6, 7, 5, 6, 4, 4, 4, 4, 4, 4, 4, 4),
    (6, 5, 6, 4, 4, 4, 4, 4, 4, 4, 4),
    (6, 7, 5, 4, 4, 4, 4, 4, 4, 4),
    (9, 7, 6, 6, 6, 7, 7, 7, 7),
    (6, 6, 5, 6, 4, 4, 4, 4),
    (6, 7, 4, 4, 4, 4, 4),
    (6, 5, 4, 4, 4, 4),
    (6, 5, 4, 4, 4),
    (5, 5, 4, 3),
    (6, 5, 4),
    (5, 4),
    (5,),
)
_SUITED_ROWS: tuple[tuple[int, ...], ...] = (
    (4, 5, 6, 6, 4, 4, 4, 4, 4, 4, 4, 4),
    (7, 5, 6, 4, 4, 4, 4, 4, 4, 4, 4),
    (6, 6, 4, 4, 4, 4, 4, 4, 4, 4),
    (7, 5, 4, 4, 4, 4, 4, 4, 4),
    (7, 6, 6, 6, 7, 7, 7, 7),
    (6, 5, 6, 4, 4, 4, 4),
    (7, 4, 4, 4, 4, 4),
    (5, 4, 4, 4, 4),
    (5, 5, 4, 4),
    (5, 4, 3),
    (5, 4),
    (4,),
)

BSD_ADJUST_OFFSUIT: dict[tuple[int, int], int] = {
    (a, b): _OFFSUIT_ROWS[a - 1][b - a] for a in range(1, 14) for b in range(a, 14)
}
"""Rounded mean crib score with two laid-away cards of ranks a <= b, different suits."""

BSD_ADJUST_SUITED: dict[tuple[int, int], int] = {
    (a, b): _SUITED_ROWS[a - 1][b - a - 1] for a in range(1, 13) for b in range(a + 1, 14)
}
"""Rounded mean crib score with two laid-away cards of ranks a < b of one suit."""

BSD_ADJUST_SINGLE: dict[int, int] = dict(
    zip(range(1, 14), (4, 5, 5, 5, 7, 5, 5, 5, 5, 4, 5, 4, 4), strict=True)
)
"""Rounded mean crib score with one laid-away card of this rank (3 and 4 players)."""

_TEN_TARGETS = (8, 7, 9, 6, 11, 12, 13, 14, 10, 5)


def crib_adjustment(discards: tuple[Card, ...]) -> int:
    """The program's crib adjustment for laying away ``discards``."""
    if len(discards) == 1:
        return BSD_ADJUST_SINGLE[discards[0].rank]
    x, y = discards
    key = (min(x.rank, y.rank), max(x.rank, y.rank))
    if x.suit == y.suit:
        return BSD_ADJUST_SUITED[key]
    return BSD_ADJUST_OFFSUIT[key]


def bsd_discard_values(view: PlayerView) -> list[tuple[int, Discard]]:
    """Every discard with its total over the unseen starters (hand as a crib ± adjustment)."""
    holding = view.holding
    unseen = [c for c in _DECK if c not in holding]
    sign = 1 if owns_crib(view) else -1
    need = 2 if view.players == 2 else 1
    out: list[tuple[int, Discard]] = []
    for discard in combinations(holding, need):
        kept = [c for c in holding if c not in discard]
        value = show_total(kept, unseen, crib=True)
        value += sign * len(unseen) * crib_adjustment(discard)
        out.append((value, Discard(view.seat, discard)))
    return out


def bsd_discard(view: PlayerView) -> Action:
    """The discard with the largest total; the first in hand order on a tie."""
    values = bsd_discard_values(view)
    best = max(value for value, _ in values)
    return next(action for value, action in values if value == best)


def _to(cards: list[Card], count: int, target: int) -> Card | None:
    """The first card (lowest first) that brings ``count`` to exactly ``target``."""
    return next((c for c in cards if count + c.value == target), None)


def _holds_other(cards: list[Card], card: Card, value: int) -> bool:
    """True when the seat holds a card worth ``value`` besides ``card``."""
    return sum(1 for c in cards if c.value == value) > (1 if card.value == value else 0)


def quiet_card(cards: list[Card], count: int) -> Card:
    """The program's choice when no card scores (``cards`` sorted, one at least playable)."""
    playable = [c for c in cards if count + c.value <= 31]
    if len(cards) <= 1:
        return playable[0]
    if count < 4:
        card = _to(cards, count, 4)
        if card is not None:
            return card
        if count == 0:
            card = _to(cards, count, 3)
            if card is not None:
                return card
    if 0 < count < 20:
        for i in range(1, 11):
            card = _to(cards, count, 21 - i)
            if card is not None and _holds_other(cards, card, i):
                return card
    if count < 15:
        for target in _TEN_TARGETS:
            card = _to(cards, count, target)
            if card is not None and _holds_other(cards, card, 15 - target):
                return card
    highest_first = playable[::-1]
    for avoid in ((5, 10, 21), (5, 21)):
        card = next((c for c in highest_first if count + c.value not in avoid), None)
        if card is not None:
            return card
    return highest_first[0]


def bsd_play(view: PlayerView) -> Action:
    """The program's pegging: the most points now, else ``quiet_card``."""
    if view.must_go:
        return Go(view.seat)
    sequence = [card for _, card in view.count_cards]
    best, points = None, 0
    for card in view.playable:  # sorted, lowest first: a tie keeps the lowest
        scored = play_points([*sequence, card])
        if scored > points:
            best, points = card, scored
    if best is None:
        best = quiet_card(sorted(view.holding), view.count)
    return Play(view.seat, best)


def bsd_action(view: PlayerView, rng: random.Random) -> Action:
    """The ``bsd`` baseline (deterministic: ``rng`` is not used)."""
    del rng
    if view.phase == DISCARD:
        return bsd_discard(view)
    if view.phase == PEGGING:
        return bsd_play(view)
    if view.phase == SHOW:
        return Accept(view.seat) if view.awaiting_muggins else choose_claim(view)
    raise ValueError(f"nothing to decide in phase {view.phase!r}")


__all__ = [
    "BSD_ADJUST_OFFSUIT",
    "BSD_ADJUST_SINGLE",
    "BSD_ADJUST_SUITED",
    "bsd_action",
    "bsd_discard",
    "bsd_discard_values",
    "bsd_play",
    "crib_adjustment",
    "quiet_card",
]
