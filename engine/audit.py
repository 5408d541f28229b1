"""The computer's decisions re-derived from its own cards: proof that it never peeks.

An archive names its computer seats (``computer``: ``[{"seat", "level", "engine"}]``).
The service decides a computer seat's move from that seat's view alone
(`engine.computer.computer_move` of `engine.computer.computer_view`): its own cards, the
public board and the events of the hand it may see, with its tie-breaks drawn from a
generator seeded by that view. `audit_archive` replays the archive and, before every
action of a computer seat, builds the same view and asks the same level again. A move
chosen with anything more — another seat's hidden cards, the undealt pack, the seed —
differs sooner or later from what the view alone gives, and the first difference is
reported: its action number, its hand, what the view gives and what was played.

What it proves: every computer move in the archive is the move the named level makes
from that seat's view. What it does not: that the server did not *look* (it holds
every hand while the game runs); only that the look never changed what the computer
played. A different engine version may decide differently; a difference then names
both versions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.actions import Action, Discard, action_from_json
from engine.archive import parse_archive, replay_archive
from engine.computer import computer_move, computer_view
from engine.errors import EngineError, ReplayError
from engine.levels import canonical
from engine.view import PlayerView

ENGINE_NAME = "pbem-cribbage"
"""The name an archive gives the engine that played its computer seats."""

Decider = Callable[[PlayerView, str], Action]
"""How a computer seat decides: its view and its level → its move."""


@dataclass(frozen=True, slots=True)
class ComputerSeat:
    """One computer seat of an archived game: its seat, level and engine."""

    seat: int
    level: str
    engine: str
    engine_sha256: str = ""
    """The engine by content (`pbem.engine_digest`): "" in an archive from before."""

    def to_json(self) -> dict[str, Any]:
        data = {"seat": self.seat, "level": self.level, "engine": self.engine}
        if self.engine_sha256:
            data["engine_sha256"] = self.engine_sha256
        return data


def engine_label(version: str) -> str:
    """The ``engine`` of a computer seat: ``"pbem-cribbage 0.1.0"``."""
    return f"{ENGINE_NAME} {version}"


def computer_entries(
    levels: Mapping[int, str], version: str, digest: str = ""
) -> list[dict[str, Any]]:
    """The archive's ``computer`` list for the computer seats ``levels`` (seat → level,
    aliases resolved), in seat order, played by engine ``version``."""
    return [
        ComputerSeat(seat, canonical(level), engine_label(version), digest).to_json()
        for seat, level in sorted(levels.items())
    ]


def computer_seats(record: Mapping[str, Any], players: int) -> tuple[ComputerSeat, ...]:
    """The archive's computer seats in seat order (none when it has no ``computer``).

    Raises:
        ReplayError: ``computer`` is not a list of ``{"seat", "level", "engine"}``
            objects, names a seat twice or a seat the game does not have, or a level
            the engine does not know.
    """
    raw = record.get("computer")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ReplayError("the archive's computer seats are not a list")
    seats: dict[int, ComputerSeat] = {}
    for entry in raw:
        if not isinstance(entry, dict):
            raise ReplayError(f"a computer seat is not an object: {entry!r}")
        seat, level, engine = entry.get("seat"), entry.get("level"), entry.get("engine")
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < players:
            raise ReplayError(f"no seat {seat!r} in a {players}-player game")
        if seat in seats:
            raise ReplayError(f"seat {seat} is listed twice as the computer")
        if not isinstance(level, str):
            raise ReplayError(f"the computer at seat {seat} has no level")
        try:
            name = canonical(level)
        except ValueError as exc:
            raise ReplayError(f"the computer at seat {seat}: {exc}") from exc
        digest = entry.get("engine_sha256")
        seats[seat] = ComputerSeat(
            seat,
            name,
            str(engine) if engine is not None else "",
            digest if isinstance(digest, str) else "",
        )
    return tuple(seats[s] for s in sorted(seats))


@dataclass(frozen=True, slots=True)
class Difference:
    """The first computer move that its view does not give."""

    number: int
    """The action's number in the archive, from 1."""
    hand: int
    seat: int
    level: str
    expected: Action
    played: Action

    def describe(self) -> str:
        return (
            f"action {self.number} (hand {self.hand}): from its own cards the computer at "
            f"seat {self.seat} ({self.level}) makes '{self.expected}', the archive has "
            f"'{self.played}'"
        )


@dataclass(frozen=True, slots=True)
class Audit:
    """What `audit_archive` found: every computer decision re-derived (``decisions``),
    or the first that differs."""

    seats: tuple[ComputerSeat, ...]
    decisions: int
    difference: Difference | None = None
    engine: str = ""
    """The engine that re-derived the decisions (`engine_label`), when known."""

    @property
    def ok(self) -> bool:
        return self.difference is None

    @property
    def message(self) -> str:
        if self.difference is None:
            return (
                f"the computer played only from its own cards "
                f"({self.decisions} decisions re-derived)"
            )
        text = "the computer's move differs from its own cards: " + self.difference.describe()
        played_by = {s.engine for s in self.seats if s.seat == self.difference.seat}
        if self.engine and played_by and self.engine not in played_by:
            text += (
                f" (the game was played by {', '.join(sorted(played_by))}, this check ran "
                f"{self.engine}: another version may decide otherwise)"
            )
        return text


def same_move(expected: Action, played: Action) -> bool:
    """Whether ``played`` is the move ``expected`` (a discard's cards in any order)."""
    if isinstance(expected, Discard) and isinstance(played, Discard):
        return expected.seat == played.seat and sorted(expected.cards) == sorted(played.cards)
    return expected == played


def audit_archive(
    data: Mapping[str, Any] | str,
    *,
    decide: Decider = computer_move,
    engine: str = "",
) -> Audit:
    """Re-derive every move of the archive's computer seats from that seat's view alone
    (`engine.computer.computer_view`) with ``decide`` (the service's, by default) and
    stop at the first that differs. ``engine``: the label of the engine running the
    check, named in a difference when the archive's is another.

    Raises:
        ReplayError: the archive is unreadable, its ``computer`` list is malformed, or
            an action does not replay.
    """
    record = parse_archive(dict(data) if isinstance(data, Mapping) else data)
    actions: Sequence[Any] = record["actions"]
    states = replay_archive(record)
    game = next(states)
    seats = computer_seats(record, game.players)
    levels = {s.seat: s.level for s in seats}
    decisions = 0
    for number, raw in enumerate(actions, start=1):
        seat = raw.get("seat") if isinstance(raw, dict) else None
        if seat in levels:
            assert isinstance(seat, int)
            try:
                played = action_from_json(raw)
            except (EngineError, KeyError, TypeError, ValueError) as exc:
                raise ReplayError(f"action {number} ({raw}) is not an action: {exc}") from exc
            view = computer_view(game, seat)
            try:
                expected = decide(view, levels[seat])
            except ValueError:
                # Nothing for this seat to decide now: the move cannot be the computer's.
                raise ReplayError(
                    f"action {number} ({raw}) does not replay: seat {seat} has nothing to do"
                ) from None
            if not same_move(expected, played):
                difference = Difference(number, game.hand_no, seat, levels[seat], expected, played)
                return Audit(seats, decisions, difference, engine)
            decisions += 1
        game = next(states)
    return Audit(seats, decisions, None, engine)


__all__ = [
    "ENGINE_NAME",
    "Audit",
    "ComputerSeat",
    "Decider",
    "Difference",
    "audit_archive",
    "computer_entries",
    "computer_seats",
    "engine_label",
    "same_move",
]
