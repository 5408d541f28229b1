"""Baseline players for the arena (``python -m engine.arena``), not offered to players.

``greedy``
    Discard: the discard whose kept four score the most show points now, with
    no starter (a four-card flush counts 4), ignoring the crib; ties at random.
    Play: the card that pegs the most points now (fifteen, thirty-one, pairs,
    runs), ties to the lowest card; a go when nothing can be played.  Muggins
    games: counts exactly and calls muggins on a short claim, as ``medium`` does.

``random`` is ``engine.players.random_action`` and ``bsd`` is in
:mod:`engine.bsd`.
"""

from __future__ import annotations

import random
from itertools import combinations

from engine.actions import Action, Discard, Go, Play
from engine.game import DISCARD, PEGGING, SHOW
from engine.players import answer_claim, choose_claim, pick, play_points
from engine.scoring import show_points
from engine.view import PlayerView


def greedy_discard(view: PlayerView, rng: random.Random) -> Action:
    """The discard keeping the most show points now (no starter, no crib)."""
    need = 2 if view.players == 2 else 1
    scored: list[tuple[float, Action]] = []
    for discard in combinations(view.holding, need):
        kept = [c for c in view.holding if c not in discard]
        scored.append((float(show_points(kept, None)), Discard(view.seat, discard)))
    return pick(scored, rng)


def greedy_play(view: PlayerView) -> Action:
    """The card pegging the most now; ties to the lowest card."""
    if view.must_go:
        return Go(view.seat)
    sequence = [card for _, card in view.count_cards]
    best = min(view.playable, key=lambda c: (-play_points([*sequence, c]), c))
    return Play(view.seat, best)


def greedy_action(view: PlayerView, rng: random.Random) -> Action:
    """The ``greedy`` baseline: most points now, no look ahead."""
    if view.phase == DISCARD:
        return greedy_discard(view, rng)
    if view.phase == PEGGING:
        return greedy_play(view)
    if view.phase == SHOW:
        return answer_claim(view) if view.awaiting_muggins else choose_claim(view)
    raise ValueError(f"nothing to decide in phase {view.phase!r}")


__all__ = ["greedy_action", "greedy_discard", "greedy_play"]
