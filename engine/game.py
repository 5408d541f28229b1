"""The Cribbage state machine.

A game is its ``Settings``, its ``seed`` and the list of actions applied to it.
Everything random (the draw for the first deal, each hand's pack) comes from the
seed through :mod:`engine.rng`, so replaying the actions rebuilds every state
exactly.  ``Game.apply`` validates an action completely before changing
anything: a rejected action leaves the game as it was.

Seats are numbered 0..n-1 clockwise; the player on the dealer's left is
``(dealer + 1) % n``.  With four players seats 0 and 2 are partners against 1
and 3, and a *side* (the thing that scores) is ``seat % 2``; otherwise each seat
is its own side.

Phases: ``discard`` → (starter) → ``pegging`` → ``show`` → next hand, until
``game_over``.  The draw, the deal, the starter and (when muggins is off) the
show happen inside ``apply`` as soon as they are due, so the phases that wait
for a player are ``discard``, ``pegging``, ``show`` (muggins only) and none
after ``game_over``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from engine.actions import Accept, Action, Claim, Discard, Go, Muggins, Play, Resign
from engine.cards import Card
from engine.errors import IllegalActionError, InvalidSyntaxError
from engine.gamestate import GameState, _State
from engine.gametypes import (
    DISCARD,
    GAME_OVER,
    MAX_CLAIM,
    PEGGING,
    SHOW,
    SKUNK_MODES,
    Event,
    Outcome,
    Settings,
    game_value,
)
from engine.pegging import PeggingRules

__all__ = [
    "DISCARD",
    "GAME_OVER",
    "MAX_CLAIM",
    "PEGGING",
    "SHOW",
    "SKUNK_MODES",
    "Event",
    "Game",
    "GameState",
    "Outcome",
    "Settings",
    "game_value",
    "new_game",
    "replay",
    "with_settings",
]


class Game(PeggingRules):
    """One game of Cribbage.  Create with ``Game(settings, seed)``; drive with ``apply``.

    What it shows is :class:`engine.gamestate.GameState`'s; the rules of each phase are
    :mod:`engine.pegging`'s and :mod:`engine.show`'s."""

    def __init__(self, settings: Settings, seed: str) -> None:
        if not isinstance(seed, str) or not seed:
            raise InvalidSyntaxError("a game needs a non-empty string seed")
        self.settings = settings
        self.seed = seed
        self.actions: list[Action] = []
        self.events: list[Event] = []
        self.draws: list[dict[int, Card]] = []
        self._s = _State(scores=[0] * settings.sides, back_pegs=[0] * settings.sides)
        first = settings.first_dealer
        if first is None:
            first = self._draw_for_deal()
        self._deal(first, 1)

    # -- applying ------------------------------------------------------------------

    def apply(self, action: Action) -> list[Event]:
        """Apply one action; return the events it caused.

        Raises ``IllegalActionError`` (leaving the game unchanged) when the
        action is not allowed now; the message names the action and why.
        """
        if not 0 <= action.seat < self.players:
            raise IllegalActionError(f"there is no seat {action.seat} in this game")
        if self._s.phase == GAME_OVER:
            raise IllegalActionError("the game is over")
        start = len(self.events)
        if isinstance(action, Resign):
            self._resign(action)
        else:
            self._check_turn(action)
            if isinstance(action, Discard):
                self._discard(action)
            elif isinstance(action, Play):
                self._play(action)
            elif isinstance(action, Go):
                self._go(action)
            elif isinstance(action, Claim):
                self._claim(action)
            elif isinstance(action, Muggins | Accept):
                self._respond(action)
            else:  # pragma: no cover - exhaustive
                raise IllegalActionError(f"unknown action {action!r}")
        self.actions.append(action)
        return self.events[start:]

    def _check_turn(self, action: Action) -> None:
        s = self._s
        allowed = {
            DISCARD: (Discard,),
            PEGGING: (Play, Go),
            SHOW: (Muggins, Accept) if s.window is not None else (Claim,),
        }[s.phase]
        if not isinstance(action, allowed):
            names = " or ".join(cls.__name__.lower() for cls in allowed)
            raise IllegalActionError(
                f"cannot {action}: the game is waiting for {names} ({self._phase_words()})"
            )
        if action.seat not in self.to_act():
            if s.phase == DISCARD:
                raise IllegalActionError(f"cannot {action}: you have already laid away")
            waiting = ", ".join(f"seat {x}" for x in self.to_act())
            raise IllegalActionError(
                f"cannot {action}: it is not your turn (waiting for {waiting})"
            )

    def _phase_words(self) -> str:
        s = self._s
        if s.phase == DISCARD:
            return "discards to the crib"
        if s.phase == PEGGING:
            return f"the play, count {s.count}"
        if s.window is not None:
            return "muggins or accept"
        return "the count of the hand being shown"

    def _resign(self, action: Resign) -> None:
        s = self._s
        loser = self.side_of(action.seat)
        others = [side for side in range(self.settings.sides) if side != loser]
        winner = max(others, key=lambda side: (s.scores[side], -side))
        self.events.append(
            Event("resign", s.hand_no, seat=action.seat, side=loser, detail=action.reason)
        )
        self._finish(winner, action.reason)

    # -- copying, hashing, archive ---------------------------------------------------

    def copy(self) -> Game:
        other = Game.__new__(Game)
        other.settings = self.settings
        other.seed = self.seed
        other.actions = list(self.actions)
        other.events = list(self.events)
        other.draws = list(self.draws)
        other._s = self._s.clone()
        return other

    def state_json(self) -> dict[str, Any]:
        """The whole state, hidden cards included (for hashing and debugging, never for mail)."""
        s = self._s
        return {
            "hand_no": s.hand_no,
            "dealer": s.dealer,
            "phase": s.phase,
            "pack": [c.ascii for c in s.pack],
            "holding": [[c.ascii for c in h] for h in s.holding],
            "kept": [[c.ascii for c in k] for k in s.kept],
            "crib": [c.ascii for c in s.crib],
            "starter": s.starter.ascii if s.starter else None,
            "count": s.count,
            "count_cards": [[seat, c.ascii] for seat, c in s.count_cards],
            "plays": [[seat, c.ascii, n] for seat, c, n in s.plays],
            "gone": sorted(s.gone),
            "turn": s.turn,
            "show_index": s.show_index,
            "window": None
            if s.window is None
            else [s.window.claimant, s.window.missed, s.window.responders],
            "scores": s.scores,
            "back_pegs": s.back_pegs,
            "outcome": s.outcome.to_json() if s.outcome else None,
            "actions": len(self.actions),
        }

    def state_hash(self) -> str:
        blob = json.dumps(self.state_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()


def new_game(
    players: int = 2,
    *,
    seed: str,
    target: int = 121,
    skunk: str = "skunk",
    muggins: bool = False,
    first_dealer: int | None = None,
) -> Game:
    """Create a game: ``new_game(2, seed="abc", target=61)``."""
    return Game(Settings(players, target, skunk, muggins, first_dealer), seed)


def replay(settings: Settings, seed: str, actions: Sequence[Action]) -> Iterator[Game]:
    """Yield a copy of the game before any action and after each action."""
    game = Game(settings, seed)
    yield game.copy()
    for action in actions:
        game.apply(action)
        yield game.copy()


def with_settings(settings: Settings, **changes: Any) -> Settings:
    return replace(settings, **changes)
