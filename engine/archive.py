"""The archive: a finished (or running) game as JSON that replays bit for bit.

Format ``pbem-cribbage/1``::

    {"format": "pbem-cribbage/1", "settings": {...}, "seed": "...",
     "actions": [{"type": "discard", "seat": 0, "cards": ["5H", "JD"]}, ...],
     "state_hash": "<sha256 of the final state>",
     "deal_proof": {...}}

Loading replays the actions from the seed and checks the hash. ``deal_proof`` is
optional: a game dealt by the verifiable-deal protocol carries its commitment, the
players' entropy and (once the game is over) the server seed; see `engine.fairness`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from engine.actions import action_from_json, action_to_json
from engine.errors import EngineError, ReplayError
from engine.game import Game, Settings

FORMAT = "pbem-cribbage/1"


def to_archive(game: Game, **extra: Any) -> dict[str, Any]:
    """The archive of ``game``; ``extra`` keys (names, dates) are kept alongside."""
    data: dict[str, Any] = {
        "format": FORMAT,
        "settings": game.settings.to_json(),
        "seed": game.seed,
        "actions": [action_to_json(a) for a in game.actions],
        "state_hash": game.state_hash(),
    }
    data.update(extra)
    return data


def dumps(game: Game, **extra: Any) -> str:
    return json.dumps(to_archive(game, **extra), indent=1, ensure_ascii=False)


def _parse(data: dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise ReplayError(f"the archive is not JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReplayError(f"not a {FORMAT} archive")
    for key in ("settings", "seed", "actions"):
        if key not in data:
            raise ReplayError(f"the archive has no {key!r}")
    if not isinstance(data["settings"], dict):
        raise ReplayError("the archive's settings are not an object")
    if not isinstance(data["actions"], list):
        raise ReplayError("the archive's actions are not a list")
    return data


def parse_archive(data: dict[str, Any] | str) -> dict[str, Any]:
    """The archive's JSON object, its required keys checked; ReplayError otherwise."""
    return _parse(data)


def _new_game(record: dict[str, Any]) -> Game:
    """The game before its first action; a malformed settings value, or no seed (a game
    that ended before its deal), is a ReplayError."""
    if record["seed"] is None:
        raise ReplayError("the game was never dealt: its archive has no seed")
    try:
        return Game(Settings.from_json(record["settings"]), str(record["seed"]))
    except (EngineError, TypeError, ValueError) as exc:
        raise ReplayError(f"bad settings in the archive: {exc}") from exc


def replay_archive(data: dict[str, Any] | str) -> Iterator[Game]:
    """Every state of the archived game: before the first action, then after each."""
    record = _parse(data)
    game = _new_game(record)
    yield game.copy()
    for number, raw in enumerate(record["actions"], start=1):
        try:
            game.apply(action_from_json(raw))
        except EngineError as exc:
            raise ReplayError(f"action {number} ({raw}) does not replay: {exc}") from exc
        yield game.copy()


def load(data: dict[str, Any] | str, *, verify: bool = True) -> Game:
    """Rebuild the game by replaying it; with ``verify`` check the final state hash."""
    record = _parse(data)
    game = _new_game(record)
    for number, raw in enumerate(record["actions"], start=1):
        try:
            game.apply(action_from_json(raw))
        except EngineError as exc:
            raise ReplayError(f"action {number} ({raw}) does not replay: {exc}") from exc
    expected = record.get("state_hash")
    if verify and expected is not None and expected != game.state_hash():
        raise ReplayError("the replayed game does not match the archive's state hash")
    return game
