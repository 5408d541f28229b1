"""The archive: JSON that replays bit for bit, and a ReplayError for anything else."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine import (
    Game,
    ReplayError,
    action_from_json,
    action_to_json,
    dumps,
    load,
    new_game,
    replay,
    replay_archive,
    to_archive,
)
from engine.actions import Accept, Claim, Discard, Go, Muggins, Play, Resign
from engine.errors import InvalidSyntaxError
from tests.engine.helpers import card, play_out


@pytest.fixture(scope="module")
def game() -> Game:
    return play_out(new_game(2, seed="archive", muggins=True), stop=3)


def test_archive_shape(game: Game) -> None:
    data = to_archive(game, names=["Ann", "Bob"])
    assert data["format"] == "pbem-cribbage/1"
    assert data["seed"] == "archive"
    assert data["settings"]["muggins"] is True
    assert len(data["actions"]) == len(game.actions)
    assert data["state_hash"] == game.state_hash()
    assert data["names"] == ["Ann", "Bob"]
    assert json.loads(dumps(game)) == to_archive(game)


def test_load_and_replay(game: Game) -> None:
    loaded = load(dumps(game))
    assert loaded.state_hash() == game.state_hash()
    assert loaded.events == game.events
    states = list(replay_archive(to_archive(game)))
    assert len(states) == len(game.actions) + 1
    assert states[-1].state_hash() == game.state_hash()


def _broken(game: Game) -> dict[str, Any]:
    return json.loads(dumps(game))


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda a: "{", "not JSON"),
        (lambda a: "[]", "not a pbem-cribbage/1 archive"),
        (lambda a: {**a, "format": "chess/1"}, "not a pbem-cribbage/1 archive"),
        (lambda a: {k: v for k, v in a.items() if k != "seed"}, "no 'seed'"),
        (lambda a: {k: v for k, v in a.items() if k != "actions"}, "no 'actions'"),
        (lambda a: {**a, "state_hash": "0" * 64}, "state hash"),
        (lambda a: {**a, "actions": a["actions"][:1] * 2}, "action 2"),
        (lambda a: {**a, "actions": [{"type": "play", "seat": 0, "card": "zz"}]}, "action 1"),
        (lambda a: {**a, "actions": ["discard"]}, "action 1"),
        (lambda a: {**a, "settings": {**a["settings"], "players": 7}}, "bad settings"),
        (lambda a: {**a, "settings": {**a["settings"], "players": "two"}}, "bad settings"),
        (lambda a: {**a, "settings": {**a["settings"], "target": "lots"}}, "bad settings"),
        (lambda a: {**a, "settings": ["players", 2]}, "settings"),
        (lambda a: {**a, "actions": None}, "actions"),
    ],
    ids=[
        "not-json",
        "not-an-object",
        "wrong-format",
        "no-seed",
        "no-actions",
        "wrong-hash",
        "illegal-action",
        "bad-card",
        "action-not-an-object",
        "seven-players",
        "players-not-a-number",
        "target-not-a-number",
        "settings-not-an-object",
        "actions-not-a-list",
    ],
)
def test_a_broken_archive_raises_replay_error(game: Game, change: Any, match: str) -> None:
    data = change(_broken(game))
    with pytest.raises(ReplayError, match=match):
        load(data)
    if "state hash" not in match:
        with pytest.raises(ReplayError, match=match):
            list(replay_archive(data))


def test_load_without_verify_ignores_the_hash(game: Game) -> None:
    data = {**_broken(game), "state_hash": "0" * 64}
    assert load(data, verify=False).state_hash() == game.state_hash()


@pytest.mark.parametrize(
    "action",
    [
        Discard(1, (card("5H"), card("10S"))),
        Play(0, card("JD")),
        Go(2),
        Claim(3, 29),
        Muggins(1),
        Accept(0),
        Resign(1),
        Resign(0, "timeout"),
    ],
)
def test_actions_round_trip_through_json(action: Any) -> None:
    data = action_to_json(action)
    assert action_from_json(json.loads(json.dumps(data))) == action


@pytest.mark.parametrize(
    "data",
    [
        {"type": "play", "seat": 0},
        {"type": "play", "card": "5H"},
        {"type": "play", "seat": 0, "card": "zz"},
        {"type": "claim", "seat": 0, "points": "many"},
        {"type": "castle", "seat": 0},
        {"seat": 0},
    ],
)
def test_malformed_action_records(data: dict[str, Any]) -> None:
    with pytest.raises(InvalidSyntaxError):
        action_from_json(data)


def test_action_strings() -> None:
    assert str(Play(0, card("7C"))) == "play 7♣"
    assert str(Discard(0, (card("5H"), card("JD")))) == "discard 5♥ J♦"
    assert str(Go(0)) == "go"
    assert str(Claim(0, 12)) == "count 12"
    assert str(Resign(0)) == "resign"
    assert str(Resign(0, "timeout")) == "forfeit (timeout)"


def test_replay_yields_every_state(game: Game) -> None:
    states = list(replay(game.settings, game.seed, game.actions))
    assert len(states) == len(game.actions) + 1
    assert states[0].actions == [] and states[0].hand_no == 1
    assert states[-1].state_hash() == game.state_hash()
    # Each yielded state is a copy, untouched by later actions.
    assert [len(s.actions) for s in states] == list(range(len(game.actions) + 1))
