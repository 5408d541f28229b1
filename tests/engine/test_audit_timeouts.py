"""The moves the computer makes for a player whose time ran out (`engine.audit`'s
``timeouts``): re-derived like a computer seat's; a forged deviation in one is caught,
a malformed list is refused, and the verdict's seat line marks who played what."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from engine import Game, action_to_json, new_game, to_archive
from engine.actions import Action, action_from_json
from engine.archive import replay_archive
from engine.audit import (
    TIMEOUT_LEVEL,
    Difference,
    audit_archive,
    computer_entries,
    engine_label,
    same_move,
    seat_list,
    timeout_entries,
    timeout_moves,
)
from engine.computer import computer_move, computer_view
from engine.errors import ReplayError
from engine.view import player_view
from tests.engine.test_audit import person_move

ENGINE = engine_label("0.1.0")


def play(players: int, seed: str, robots: dict[int, str], every: int) -> tuple[Game, list[Any]]:
    """A game to 61 with muggins where the person at seat 0 (and any other person) lets
    every ``every``-th decision time out: the computer makes it at `TIMEOUT_LEVEL`, as
    the service does. The game, and its timeouts as (number, seat, level)."""
    game = new_game(players, seed=seed, target=61, muggins=True)
    rng = random.Random(seed)
    timed: list[tuple[int, int, str]] = []
    decisions = 0
    while not game.is_over:
        action = game.forced_action()
        if action is None:
            seat = game.to_act()[0]
            if seat in robots:
                action = computer_move(computer_view(game, seat), robots[seat])
            else:
                decisions += 1
                if decisions % every == 0:
                    action = computer_move(computer_view(game, seat), TIMEOUT_LEVEL)
                    timed.append((len(game.actions) + 1, seat, TIMEOUT_LEVEL))
                else:
                    action = person_move(player_view(game, seat), rng)
        game.apply(action)
    return game, timed


def archive_with_timeouts(players: int, robots: dict[int, str], every: int = 5) -> dict[str, Any]:
    game, timed = play(players, f"timeouts-{players}", robots, every)
    archive = to_archive(
        game,
        computer=computer_entries(robots, "0.1.0"),
        timeouts=timeout_entries(timed, "0.1.0"),
        players=[
            {
                "email": f"p{s}@example.org",
                "name": f"P{s}",
                **({"computer": True} if s in robots else {}),
            }
            for s in range(players)
        ],
    )
    assert len(timed) >= 3
    return archive


@pytest.fixture(scope="module")
def people() -> dict[str, Any]:
    """Two people, each letting every fifth decision time out."""
    return archive_with_timeouts(2, {})


@pytest.fixture(scope="module")
def mixed() -> dict[str, Any]:
    """A person against the computer (hard) and a person: the people time out."""
    return archive_with_timeouts(3, {1: "hard"}, every=4)


def test_the_moves_made_at_a_timeout_are_re_derived(
    people: dict[str, Any], mixed: dict[str, Any]
) -> None:
    audit = audit_archive(people, engine=ENGINE)
    assert audit.ok and audit.decisions == audit.timeouts == len(people["timeouts"])
    assert audit.message == (
        f"the computer played only from its own cards ({audit.decisions} decisions "
        f"re-derived, {audit.timeouts} of them made for players whose time ran out)"
    )
    both = audit_archive(mixed, engine=ENGINE)
    robot = sum(1 for a in mixed["actions"] if a["seat"] == 1)
    assert both.ok and both.timeouts == len(mixed["timeouts"])
    assert both.decisions == robot + both.timeouts
    assert {entry["seat"] for entry in mixed["timeouts"]} == {0, 2}
    assert people["timeouts"][0] == {
        "action": people["timeouts"][0]["action"],
        "seat": people["timeouts"][0]["seat"],
        "level": "medium",
        "engine": ENGINE,
    }


def forged_at(archive: dict[str, Any], number: int) -> tuple[dict[str, Any], Action]:
    """``archive`` as a forger would make it: move ``number`` (made at a timeout)
    replaced by another legal choice, and the game played on from there by the engine
    (people at random, the computer seats by the computer); the timeouts up to it kept."""
    robots = {c["seat"]: c["level"] for c in archive["computer"]}
    game = list(replay_archive(archive))[number - 1].copy()
    played = action_from_json(archive["actions"][number - 1])
    other = next(a for a in game.legal_actions(played.seat) if not same_move(a, played))
    game.apply(other)
    rng = random.Random(number)
    while not game.is_over:
        action = game.forced_action()
        if action is None:
            seat = game.to_act()[0]
            if seat in robots:
                action = computer_move(computer_view(game, seat), robots[seat])
            else:
                action = person_move(player_view(game, seat), rng)
        game.apply(action)
    forged = copy.deepcopy(archive)
    forged.update(actions=[action_to_json(a) for a in game.actions], state_hash=game.state_hash())
    forged["timeouts"] = [t for t in archive["timeouts"] if t["action"] <= number]
    return forged, other


def test_a_forged_move_made_at_a_timeout_is_caught(
    people: dict[str, Any], mixed: dict[str, Any]
) -> None:
    for archive in (people, mixed):
        for entry in archive["timeouts"]:
            number = entry["action"]
            before = list(replay_archive(archive))[number - 1]
            if len(before.legal_actions(entry["seat"])) < 2:
                continue
            forged, other = forged_at(archive, number)
            assert list(replay_archive(forged))[-1].is_over  # it replays, consistent in itself
            audit = audit_archive(forged, engine=ENGINE)
            assert audit.difference is not None, number
            assert audit.difference.number == number and audit.difference.timeout
            assert audit.difference.played == other
            assert f"the computer moving for seat {entry['seat']} at a timeout (medium)" in (
                audit.message
            )
            break
        else:
            raise AssertionError("no timeout move with a choice")


def test_a_move_said_made_at_a_timeout_that_was_the_players_own_is_caught(
    people: dict[str, Any],
) -> None:
    """A person's own move listed as the computer's at a timeout: the listed level does
    not give it (the careless person plays otherwise somewhere)."""
    own = [
        number
        for number, action in enumerate(people["actions"], start=1)
        if number not in {t["action"] for t in people["timeouts"]}
    ]
    listed = copy.deepcopy(people)
    listed["timeouts"] = [
        {"action": number, "seat": people["actions"][number - 1]["seat"], "level": "medium"}
        for number in own
        if people["actions"][number - 1]["type"] != "go"
    ]
    audit = audit_archive(listed)
    assert not audit.ok and audit.difference is not None and audit.difference.timeout


@pytest.mark.parametrize(
    ("timeouts", "error"),
    [
        ("action 3", "not a list"),
        ([3], "not an object"),
        ([{"action": 0, "seat": 0, "level": "medium"}], "no action of the archive: 0"),
        ([{"action": 10_000, "seat": 0, "level": "medium"}], "no action of the archive"),
        ([{"action": True, "seat": 0, "level": "medium"}], "no action of the archive: True"),
        ([{"action": 1, "seat": 5, "level": "medium"}], "names no person's seat: 5"),
        ([{"action": 1, "seat": False, "level": "medium"}], "names no person's seat"),
        ([{"action": 1, "seat": 0}], "has no level"),
        ([{"action": 1, "seat": 0, "level": "genius"}], "unknown level 'genius'"),
        (
            [
                {"action": 1, "seat": 0, "level": "medium"},
                {"action": 1, "seat": 0, "level": "hard"},
            ],
            "action 1 twice",
        ),
    ],
)
def test_a_malformed_timeout_list_is_refused(timeouts: Any, error: str) -> None:
    game = new_game(2, seed="malformed", target=61)
    game.apply(computer_move(computer_view(game, 0), "medium"))
    archive = {**to_archive(game), "timeouts": timeouts}
    with pytest.raises(ReplayError, match=error):
        timeout_moves(archive, 2)
    with pytest.raises(ReplayError, match=error):
        audit_archive(archive)


def test_a_timeout_move_names_its_actions_seat_and_no_computer_seat(
    mixed: dict[str, Any],
) -> None:
    entry = mixed["timeouts"][0]
    moved = copy.deepcopy(mixed)
    moved["timeouts"][0]["seat"] = 2 if entry["seat"] == 0 else 0
    with pytest.raises(ReplayError, match=f"action {entry['action']} was made for seat"):
        audit_archive(moved)
    robot = copy.deepcopy(mixed)
    robot["timeouts"][0]["seat"] = 1  # the computer's own seat
    with pytest.raises(ReplayError, match="names no person's seat: 1"):
        audit_archive(robot)


def test_the_seat_line_marks_the_computer_and_its_timeout_moves(mixed: dict[str, Any]) -> None:
    line, problems = seat_list(mixed, 3)
    late = {
        seat: ", ".join(str(t["action"]) for t in mixed["timeouts"] if t["seat"] == seat)
        for seat in (0, 2)
    }
    assert problems == []
    assert line == (
        f"players: seat 0 P0 (the computer moved for them at a timeout: actions {late[0]}); "
        "seat 1 P1 (the computer, hard); "
        f"seat 2 P2 (the computer moved for them at a timeout: actions {late[2]})"
    )
    unmarked = copy.deepcopy(mixed)
    unmarked["players"][1].pop("computer")
    assert seat_list(unmarked, 3)[1] == []  # no mark at all: an archive from before marks
    wrong = copy.deepcopy(mixed)
    wrong["players"][2]["computer"] = True
    assert seat_list(wrong, 3)[1] == [
        "the players list marks seat 2 as the computer, the computer list does not"
    ]
    wrong["players"][1]["computer"] = False
    assert "marks seat 1 as a person" in seat_list(wrong, 3)[1][0]
    assert seat_list({"actions": []}, 2) == ("players: seat 0; seat 1", [])


def test_a_timeout_difference_describes_itself() -> None:
    from engine.actions import Go, Play
    from engine.cards import parse_card

    diff = Difference(12, 1, 0, "medium", Play(0, parse_card("5H")), Go(0), timeout=True)
    assert diff.describe() == (
        "action 12 (hand 1): from its own cards the computer moving for seat 0 at a "
        "timeout (medium) makes 'play 5♥', the archive has 'go'"
    )
