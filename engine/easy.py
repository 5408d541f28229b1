"""``easy``: the ``medium`` player with a human's slips, made on purpose.

Each slip is drawn from the ``random.Random`` the player is given, so an
``easy`` game is as reproducible as any other.

Discarding
    With probability ``DISCARD_SLIP`` it does not take the best discard but one
    of the next ``DISCARD_TOP - 1`` by ``medium``'s valuation, uniformly: a
    weaker hand among the top few, never a silly one.
Pegging
    With probability ``PLAY_SLIP`` it plays for what the card scores now and
    nothing else, blind to what it gives away (a count of 5 or 21 for a
    fifteen or thirty-one, a card the next player can pair); ties at random.
Muggins games
    With probability ``MISCOUNT`` it counts its hand or crib short, missing one
    scoring combination of it (a fifteen, a pair, his nobs…); with probability
    ``MISS_MUGGINS`` it does not notice a short claim and accepts it.
"""

from __future__ import annotations

import random

from engine.actions import Accept, Action, Claim, Go, Play
from engine.game import DISCARD, MAX_CLAIM, PEGGING, SHOW
from engine.players import (
    answer_claim,
    choose_play,
    claim_answered,
    discard_values,
    pick,
    play_points,
    shown_value,
)
from engine.scoring import score_show
from engine.view import PlayerView

DISCARD_SLIP = 0.35
DISCARD_TOP = 4
PLAY_SLIP = 0.35
MISCOUNT = 0.3
MISS_MUGGINS = 0.5


def easy_discard(view: PlayerView, rng: random.Random) -> Action:
    """Usually ``medium``'s discard; sometimes one of the next few best."""
    values = discard_values(view)
    if len(values) > 1 and rng.random() < DISCARD_SLIP:
        ranked = sorted(values, key=lambda item: -item[0])
        return rng.choice(ranked[1:DISCARD_TOP])[1]
    return pick(values, rng)


def easy_play(view: PlayerView, rng: random.Random) -> Action:
    """Usually ``medium``'s card; sometimes the card scoring most now, careless of the rest."""
    if view.must_go:
        return Go(view.seat)
    if len(view.playable) > 1 and rng.random() < PLAY_SLIP:
        sequence = [card for _, card in view.count_cards]
        scored = [
            (float(play_points([*sequence, card])), Play(view.seat, card)) for card in view.playable
        ]
        return pick(scored, rng)
    return choose_play(view, rng)


def easy_claim(view: PlayerView, rng: random.Random) -> Action:
    """The exact count, or (sometimes) the count less one scoring combination."""
    actual = min(shown_value(view) or 0, MAX_CLAIM)
    entry = view.show_entry
    if actual and entry is not None and view.starter is not None and rng.random() < MISCOUNT:
        seat, what = entry
        cards = view.showing or (view.kept if seat == view.seat else ())
        items = score_show(cards, view.starter, crib=what == "crib")
        if items:
            actual -= rng.choice(items).points
    return Claim(view.seat, max(actual, 0))


def easy_answer(view: PlayerView, rng: random.Random) -> Action:
    """``medium``'s answer, except that a short claim sometimes goes unnoticed."""
    answer = answer_claim(view)
    noticed = claim_answered(view) is not None
    if not isinstance(answer, Accept) and noticed and rng.random() < MISS_MUGGINS:
        return Accept(view.seat)
    return answer


def easy_action(view: PlayerView, rng: random.Random) -> Action:
    """The ``easy`` level."""
    if view.phase == DISCARD:
        return easy_discard(view, rng)
    if view.phase == PEGGING:
        return easy_play(view, rng)
    if view.phase == SHOW:
        if view.awaiting_muggins:
            return easy_answer(view, rng)
        return easy_claim(view, rng)
    raise ValueError(f"nothing to decide in phase {view.phase!r}")


__all__ = [
    "DISCARD_SLIP",
    "DISCARD_TOP",
    "MISCOUNT",
    "MISS_MUGGINS",
    "PLAY_SLIP",
    "easy_action",
    "easy_answer",
    "easy_claim",
    "easy_discard",
    "easy_play",
]
