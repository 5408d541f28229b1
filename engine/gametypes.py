"""The game's value types: its settings, what happens in it, how it ends.

``Settings`` (fixed when a game is created), ``Event`` (something that happened, for
the record and the players' mail), ``Outcome`` (how a game ended) and ``game_value``
(games lost under the skunk rule), with the phase names and limits the rules use.
:mod:`engine.game` re-exports them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.cards import Card
from engine.errors import IllegalActionError
from engine.scoring import ScoreItem

DISCARD = "discard"
PEGGING = "pegging"
SHOW = "show"
GAME_OVER = "game_over"

SKUNK_MODES = ("none", "lurch", "skunk")
MAX_CLAIM = 29


@dataclass(frozen=True, slots=True)
class Settings:
    """What is fixed when a game is created.

    ``first_dealer`` skips the draw (a match's later games: the loser deals).
    """

    players: int = 2
    target: int = 121
    skunk: str = "skunk"
    muggins: bool = False
    first_dealer: int | None = None

    def __post_init__(self) -> None:
        if self.players not in (2, 3, 4):
            raise IllegalActionError(f"cribbage is for 2, 3 or 4 players, not {self.players}")
        if self.target not in (61, 121):
            raise IllegalActionError(f"a game is to 61 or 121, not {self.target}")
        if self.skunk not in SKUNK_MODES:
            raise IllegalActionError(f"skunk must be one of {', '.join(SKUNK_MODES)}")
        if self.first_dealer is not None and not 0 <= self.first_dealer < self.players:
            raise IllegalActionError(f"no seat {self.first_dealer} to deal first")

    @property
    def sides(self) -> int:
        return 2 if self.players == 4 else self.players

    @property
    def hand_size(self) -> int:
        return 6 if self.players == 2 else 5

    @property
    def discard_count(self) -> int:
        return 2 if self.players == 2 else 1

    def to_json(self) -> dict[str, Any]:
        return {
            "players": self.players,
            "target": self.target,
            "skunk": self.skunk,
            "muggins": self.muggins,
            "first_dealer": self.first_dealer,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Settings:
        return cls(
            players=int(data.get("players", 2)),
            target=int(data.get("target", 121)),
            skunk=str(data.get("skunk", "skunk")),
            muggins=bool(data.get("muggins", False)),
            first_dealer=None if data.get("first_dealer") is None else int(data["first_dealer"]),
        )


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened, for the record and for the players' mail.

    ``private_to`` is the one seat allowed to see it (a deal, a discard);
    None means public.  ``points`` is what the event pegged and equals the sum
    of ``items`` — except for ``reveal`` (muggins games: the true breakdown of a
    hand whose count was claimed), which pegs nothing.
    """

    kind: str
    hand: int
    seat: int | None = None
    side: int | None = None
    cards: tuple[Card, ...] = ()
    count: int | None = None
    points: int = 0
    items: tuple[ScoreItem, ...] = ()
    detail: str = ""
    private_to: int | None = None

    def __reduce__(self) -> tuple[type[Event], tuple[Any, ...]]:
        """Pickled as its fields, made again by its constructor (cheaper both ways than a
        frozen slotted dataclass's state, for the views sent to the rendering helper)."""
        return Event, (
            self.kind,
            self.hand,
            self.seat,
            self.side,
            self.cards,
            self.count,
            self.points,
            self.items,
            self.detail,
            self.private_to,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "hand": self.hand,
            "seat": self.seat,
            "side": self.side,
            "cards": [c.ascii for c in self.cards],
            "count": self.count,
            "points": self.points,
            "items": [i.to_json() for i in self.items],
            "detail": self.detail,
            "private_to": self.private_to,
        }


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended.  ``game_values[side]`` is the number of games each loser loses."""

    winner: int
    winner_seats: tuple[int, ...]
    scores: tuple[int, ...]
    reason: str
    game_values: dict[int, int]

    @property
    def value(self) -> int:
        """The winner's game value: the most any loser loses (1, 2 for a lurch/skunk, 4)."""
        return max(self.game_values.values(), default=1)

    @property
    def label(self) -> str:
        return {1: "a single game", 2: "a double game", 4: "a quadruple game"}.get(
            self.value, f"{self.value} games"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "winner": self.winner,
            "winner_seats": list(self.winner_seats),
            "scores": list(self.scores),
            "reason": self.reason,
            "game_values": {str(k): v for k, v in self.game_values.items()},
            "value": self.value,
        }


def game_value(loser_score: int, target: int, mode: str) -> int:
    """Games lost by a loser with ``loser_score`` under the skunk setting.

    lurch: under half the target (61 of 121, 31 of 61) loses 2.
    skunk: under 91 of 121 (46 of 61) loses 2, under 61 (31) loses 4.
    """
    half = (target + 1) // 2
    if mode == "lurch":
        return 2 if loser_score < half else 1
    if mode == "skunk":
        three_quarters = 91 if target == 121 else 46
        if loser_score < half:
            return 4
        if loser_score < three_quarters:
            return 2
    return 1
