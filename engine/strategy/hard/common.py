"""What the hard player's discard and pegging share: reading the view (the board, the
cards not seen, a seat's gos) and the choice among equal values."""

from __future__ import annotations

import random
from collections.abc import Sequence

from engine.actions import Action
from engine.strategy import pegsearch
from engine.view import PlayerView

EPS = 1e-9
"""Values this close are equal: the choice among them is the generator's."""


def pick(scored: Sequence[tuple[float, Action]], rng: random.Random) -> Action:
    """The action of the best value; among equal ones, one drawn from ``rng`` (none is
    drawn when one is best)."""
    best = max(v for v, _ in scored)
    ties = [a for v, a in scored if v >= best - EPS]
    return ties[0] if len(ties) == 1 else rng.choice(ties)


def owns_crib(view: PlayerView) -> bool:
    """Whether the crib of this hand is the seat's side's."""
    return view.dealer == view.seat or (view.partner is not None and view.dealer == view.partner)


def board(view: PlayerView) -> tuple[int, int]:
    """(my side's score, the other side's) — 2 players."""
    mine = next(s.front for s in view.scores if s.side == view.my_side)
    theirs = max(s.front for s in view.scores if s.side != view.my_side)
    return mine, theirs


def endgame(view: PlayerView, reach: int) -> bool:
    """2 players, and a side within ``reach`` points of the target."""
    if view.players != 2:
        return False
    mine, theirs = board(view)
    return view.target - mine <= reach or view.target - theirs <= reach


def near_end(view: PlayerView, reach: int) -> bool:
    """Any side within ``reach`` points of the target (3 and 4 players)."""
    return any(view.target - sc.front <= reach for sc in view.scores)


def unseen(view: PlayerView) -> list[int]:
    """The card indices the seat has not seen: not held, laid away, kept, the starter
    or played."""
    seen = {c.index for c in view.holding} | {c.index for c in view.laid_away}
    seen |= {c.index for c in view.kept}
    if view.starter is not None:
        seen.add(view.starter.index)
    seen |= {c.index for _, c, _ in view.plays}
    return [i for i in range(52) if i not in seen]


def go_floor(view: PlayerView, seat: int) -> int:
    """The lowest pip value ``seat`` can still hold in this hand, by its gos (a go at
    count 25 means no card of 6 or less)."""
    low = 0
    for e in view.events:
        if e.hand == view.hand_no and e.kind == "go" and e.seat == seat and e.count is not None:
            low = max(low, 32 - e.count)
    return low


def played_by(view: PlayerView, seat: int) -> list[int]:
    """The card indices ``seat`` has played in this hand."""
    return [c.index for s, c, _ in view.plays if s == seat]


def held_ranks(view: PlayerView) -> tuple[int, ...]:
    """The ranks the seat still holds, sorted (the pegging searches' hand)."""
    return tuple(sorted(c.rank for c in view.holding))


def count_ranks(view: PlayerView) -> tuple[int, ...]:
    """The ranks of the count so far, as the pegging searches read them (only the end
    that can still score: ``pegsearch.trim``)."""
    return pegsearch.trim(tuple(c.rank for _, c in view.count_cards))
