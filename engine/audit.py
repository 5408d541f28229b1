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

A person's seat is moved by the computer too when its player's time runs out (the
service's ``timeout_action`` "autoplay"): the archive lists those moves (``timeouts``:
``[{"action", "seat", "level", "engine", "engine_sha256"}]``, ``action`` numbered from
1) and the audit re-derives each of them the same way, at its level
(`TIMEOUT_LEVEL`), from that seat's view.

What it proves: every computer move in the archive — a computer seat's, or one made
for a player whose time ran out — is the move the named level makes from that seat's
view. What it does not: that the server did not *look* (it holds every hand while the
game runs); only that the look never changed what the computer played; nor that a move
the archive does not list as the computer's was the player's own. A different engine
version may decide differently; a difference then names both versions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

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

TIMEOUT_LEVEL = "medium"
"""The level at which the computer moves for a player whose time ran out."""


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
class TimeoutMove:
    """A move the computer made for a person's seat when its player's time ran out:
    the action's number in the archive (from 1), the seat, the level and the engine."""

    action: int
    seat: int
    level: str
    engine: str = ""
    engine_sha256: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"action": self.action, "seat": self.seat, "level": self.level}
        if self.engine:
            data["engine"] = self.engine
        if self.engine_sha256:
            data["engine_sha256"] = self.engine_sha256
        return data


def timeout_entries(
    moves: Sequence[tuple[int, int, str]], version: str, digest: str = ""
) -> list[dict[str, Any]]:
    """The archive's ``timeouts`` for the moves ``(action number, seat, level)`` the
    computer made for players whose time ran out, by engine ``version``."""
    return [
        TimeoutMove(number, seat, canonical(level), engine_label(version), digest).to_json()
        for number, seat, level in sorted(moves)
    ]


def timeout_moves(
    record: Mapping[str, Any], players: int, robots: Sequence[int] = ()
) -> dict[int, TimeoutMove]:
    """The archive's ``timeouts`` by action number (none when it has no list).

    Raises:
        ReplayError: ``timeouts`` is not a list of ``{"action", "seat", "level"}``
            objects, names an action twice or one the archive does not have, a seat the
            game does not have or a computer seat (``robots``), or an unknown level.
    """
    raw = record.get("timeouts")
    if raw is None:
        return {}
    actions = record.get("actions")
    count = len(actions) if isinstance(actions, list) else 0
    if not isinstance(raw, list):
        raise ReplayError("the archive's timeouts are not a list")
    out: dict[int, TimeoutMove] = {}
    for entry in raw:
        if not isinstance(entry, dict):
            raise ReplayError(f"a timeout move is not an object: {entry!r}")
        number, seat, level = entry.get("action"), entry.get("seat"), entry.get("level")
        if not _whole(number) or not 1 <= number <= count:
            raise ReplayError(f"the timeouts name no action of the archive: {number!r}")
        if number in out:
            raise ReplayError(f"the timeouts name action {number} twice")
        if not _whole(seat) or not 0 <= seat < players or seat in robots:
            raise ReplayError(f"the timeout move {number} names no person's seat: {seat!r}")
        if not isinstance(level, str):
            raise ReplayError(f"the timeout move {number} has no level")
        try:
            name = canonical(level)
        except ValueError as exc:
            raise ReplayError(f"the timeout move {number}: {exc}") from exc
        digest = entry.get("engine_sha256")
        out[number] = TimeoutMove(
            number,
            seat,
            name,
            str(entry.get("engine") or ""),
            digest if isinstance(digest, str) else "",
        )
    return out


def _whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


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
    timeout: bool = False
    """A move made for a person whose time ran out (not a computer seat's)."""

    def describe(self) -> str:
        who = (
            f"the computer moving for seat {self.seat} at a timeout ({self.level})"
            if self.timeout
            else f"the computer at seat {self.seat} ({self.level})"
        )
        return (
            f"action {self.number} (hand {self.hand}): from its own cards {who} makes "
            f"'{self.expected}', the archive has '{self.played}'"
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
    timeouts: int = 0
    """How many of the ``decisions`` were made for players whose time ran out."""
    played_by: tuple[str, ...] = ()
    """The engines the archive names for its timeout moves."""

    @property
    def ok(self) -> bool:
        return self.difference is None

    @property
    def message(self) -> str:
        if self.difference is None:
            extra = (
                f", {self.timeouts} of them made for players whose time ran out"
                if self.timeouts
                else ""
            )
            return (
                f"the computer played only from its own cards "
                f"({self.decisions} decisions re-derived{extra})"
            )
        text = "the computer's move differs from its own cards: " + self.difference.describe()
        if self.difference.timeout:
            played_by = set(self.played_by) - {""}
        else:
            played_by = {s.engine for s in self.seats if s.seat == self.difference.seat}
        if self.engine and played_by and self.engine not in played_by:
            text += (
                f" (the game was played by {', '.join(sorted(played_by))}, this check ran "
                f"{self.engine}: another version may decide otherwise)"
            )
        return text


def seat_list(record: Mapping[str, Any], players: int) -> tuple[str, list[str]]:
    """The verdict's line on who sat where — ``players: seat 0 Alice; seat 1 Computer
    (the computer, hard); seat 2 Bob (the computer moved for them at a timeout: action
    40)`` — from the archive's ``players``, ``computer`` and ``timeouts``; and where the
    ``players`` list's marks (``"computer": true``) differ from the ``computer`` list
    (an archive whose players carry no mark, from before they were marked, is not
    compared). ReplayError as `computer_seats` and `timeout_moves`."""
    robots = {s.seat: s for s in computer_seats(record, players)}
    timed = timeout_moves(record, players, tuple(robots))
    listed = record.get("players")
    people: list[Any] = listed if isinstance(listed, list) else []
    marked = any(isinstance(p, dict) and "computer" in p for p in people)
    parts: list[str] = []
    problems: list[str] = []
    for seat in range(players):
        person = people[seat] if seat < len(people) else None
        name = person.get("name") if isinstance(person, dict) else None
        part = f"seat {seat} {name}" if isinstance(name, str) and name else f"seat {seat}"
        if seat in robots:
            part += f" (the computer, {robots[seat].level})"
        late = sorted(n for n, t in timed.items() if t.seat == seat)
        if late:
            many = "actions" if len(late) > 1 else "action"
            part += f" (the computer moved for them at a timeout: {many} "
            part += ", ".join(str(n) for n in late) + ")"
        parts.append(part)
        flag = isinstance(person, dict) and person.get("computer") is True
        if marked and flag != (seat in robots):
            problems.append(
                f"the players list marks seat {seat} as "
                + (
                    "the computer, the computer list does not"
                    if flag
                    else "a person, the computer list as the computer"
                )
            )
    return "players: " + "; ".join(parts), problems


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
    """Re-derive every move of the archive's computer seats, and every move it lists
    as made for a player whose time ran out (``timeouts``), from that seat's view alone
    (`engine.computer.computer_view`) with ``decide`` (the service's, by default) and
    stop at the first that differs. ``engine``: the label of the engine running the
    check, named in a difference when the archive's is another.

    Raises:
        ReplayError: the archive is unreadable, its ``computer`` or ``timeouts`` list is
            malformed, a timeout move is not its seat's, or an action does not replay.
    """
    record = parse_archive(dict(data) if isinstance(data, Mapping) else data)
    actions: Sequence[Any] = record["actions"]
    states = replay_archive(record)
    game = next(states)
    seats = computer_seats(record, game.players)
    levels = {s.seat: s.level for s in seats}
    timed = timeout_moves(record, game.players, tuple(levels))
    engines = tuple(sorted({t.engine for t in timed.values()}))
    decisions = timeouts = 0
    for number, raw in enumerate(actions, start=1):
        seat = raw.get("seat") if isinstance(raw, dict) else None
        late = timed.get(number)
        if late is not None and seat != late.seat:
            raise ReplayError(
                f"the timeouts say action {number} was made for seat {late.seat}; "
                f"it is seat {seat!r}'s"
            )
        if seat in levels or late is not None:
            assert isinstance(seat, int)
            level = late.level if late is not None else levels[seat]
            try:
                played = action_from_json(raw)
            except (EngineError, KeyError, TypeError, ValueError) as exc:
                raise ReplayError(f"action {number} ({raw}) is not an action: {exc}") from exc
            view = computer_view(game, seat)
            try:
                expected = decide(view, level)
            except ValueError:
                # Nothing for this seat to decide now: the move cannot be the computer's.
                raise ReplayError(
                    f"action {number} ({raw}) does not replay: seat {seat} has nothing to do"
                ) from None
            if not same_move(expected, played):
                difference = Difference(
                    number, game.hand_no, seat, level, expected, played, late is not None
                )
                return Audit(seats, decisions, difference, engine, timeouts, engines)
            decisions += 1
            timeouts += late is not None
        game = next(states)
    return Audit(seats, decisions, None, engine, timeouts, engines)


__all__ = [
    "ENGINE_NAME",
    "TIMEOUT_LEVEL",
    "Audit",
    "ComputerSeat",
    "Decider",
    "Difference",
    "TimeoutMove",
    "audit_archive",
    "computer_entries",
    "computer_seats",
    "engine_label",
    "same_move",
    "seat_list",
    "timeout_entries",
    "timeout_moves",
]
