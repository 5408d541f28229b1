"""Typed player actions and their JSON form.

Actions are small frozen values.  ``action_to_json`` / ``action_from_json`` are
the archive format; ``str(action)`` is a human line such as ``play 7♣``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.cards import Card, parse_card
from engine.errors import InvalidSyntaxError


@dataclass(frozen=True, slots=True)
class Discard:
    """Lay cards away to the crib (2 in a 2-player game, 1 with 3 or 4 players)."""

    seat: int
    cards: tuple[Card, ...]

    def __str__(self) -> str:
        return "discard " + " ".join(str(c) for c in self.cards)


@dataclass(frozen=True, slots=True)
class Play:
    """Play a card to the count."""

    seat: int
    card: Card

    def __str__(self) -> str:
        return f"play {self.card}"


@dataclass(frozen=True, slots=True)
class Go:
    """Say go: no card can be played without passing 31."""

    seat: int

    def __str__(self) -> str:
        return "go"


@dataclass(frozen=True, slots=True)
class Claim:
    """Muggins games: announce the count of the hand (or crib) being shown."""

    seat: int
    points: int

    def __str__(self) -> str:
        return f"count {self.points}"


@dataclass(frozen=True, slots=True)
class Muggins:
    """Muggins games: call muggins on the claim just made, taking any points it missed."""

    seat: int

    def __str__(self) -> str:
        return "muggins"


@dataclass(frozen=True, slots=True)
class Accept:
    """Muggins games: accept the claim just made without calling muggins."""

    seat: int

    def __str__(self) -> str:
        return "accept"


@dataclass(frozen=True, slots=True)
class Resign:
    """Give up the game.  ``reason`` is ``resign`` or ``timeout`` (a forfeit)."""

    seat: int
    reason: str = "resign"

    def __str__(self) -> str:
        return "resign" if self.reason == "resign" else f"forfeit ({self.reason})"


Action = Discard | Play | Go | Claim | Muggins | Accept | Resign


def action_to_json(action: Action) -> dict[str, Any]:
    """The archive form of an action, e.g. ``{"type": "play", "seat": 1, "card": "7C"}``."""
    match action:
        case Discard(seat, cards):
            return {"type": "discard", "seat": seat, "cards": [c.ascii for c in cards]}
        case Play(seat, card):
            return {"type": "play", "seat": seat, "card": card.ascii}
        case Go(seat):
            return {"type": "go", "seat": seat}
        case Claim(seat, points):
            return {"type": "claim", "seat": seat, "points": points}
        case Muggins(seat):
            return {"type": "muggins", "seat": seat}
        case Accept(seat):
            return {"type": "accept", "seat": seat}
        case Resign(seat, reason):
            return {"type": "resign", "seat": seat, "reason": reason}
    raise TypeError(f"not an action: {action!r}")


def action_from_json(data: dict[str, Any]) -> Action:
    """Inverse of ``action_to_json``; raises ``InvalidSyntaxError`` for a malformed record."""
    try:
        kind = data["type"]
        seat = int(data["seat"])
        if kind == "discard":
            return Discard(seat, tuple(parse_card(c) for c in data["cards"]))
        if kind == "play":
            return Play(seat, parse_card(data["card"]))
        if kind == "go":
            return Go(seat)
        if kind == "claim":
            return Claim(seat, int(data["points"]))
        if kind == "muggins":
            return Muggins(seat)
        if kind == "accept":
            return Accept(seat)
        if kind == "resign":
            return Resign(seat, str(data.get("reason", "resign")))
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidSyntaxError(f"malformed action record {data!r}: {exc}") from exc
    raise InvalidSyntaxError(f"unknown action type in {data!r}")
