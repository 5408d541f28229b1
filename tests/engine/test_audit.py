"""The computer's moves re-derived from its own view (`engine.audit`): whole 2-, 3- and
4-player games at every level pass; a computer that peeks, a changed move, a wrong level
and a malformed ``computer`` list are caught."""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from typing import Any

import pytest

from engine import Game, action_to_json, new_game, to_archive
from engine.actions import Accept, Action, Claim, Discard, Go, Muggins, Play, action_from_json
from engine.archive import replay_archive
from engine.audit import (
    Audit,
    Difference,
    audit_archive,
    computer_entries,
    computer_seats,
    engine_label,
    same_move,
)
from engine.computer import choose_action, computer_move, computer_view
from engine.errors import ReplayError
from engine.levels import LEVELS
from engine.players import choose_claim, random_action
from engine.view import PlayerView, player_view
from tests.e2e.helpers import assert_private_events_are_own, hidden_from, view_cards

ENGINE = engine_label("0.1.0")
TABLES = (2, 3, 4)


def person_move(view: PlayerView, rng: random.Random) -> Action:
    """A careless person: random cards, a count now and then two short (the computer
    calls muggins on it) and the computer's counts answered at random."""
    if view.may_claim:
        exact = choose_claim(view)
        assert isinstance(exact, Claim)
        return Claim(view.seat, max(0, exact.points - rng.choice((0, 0, 2))))
    return random_action(view, rng)


def play_game(players: int, level: str, seed: str, chooser: Any = None) -> Game:
    """A game to 61 with muggins: seat 0 a person (`person_move`), every other seat the
    computer at ``level``, moved as the service moves it (forced moves first).
    ``chooser(game, seat)``: another computer."""
    game = new_game(players, seed=seed, target=61, muggins=True)
    person = random.Random(seed)
    while not game.is_over:
        action = game.forced_action()
        if action is None:
            seat = game.to_act()[0]
            if seat == 0:
                action = person_move(player_view(game, 0), person)
            elif chooser is not None:
                action = chooser(game, seat)
            else:
                action = computer_move(computer_view(game, seat), level)
        game.apply(action)
    return game


def archive_of(game: Game, level: str) -> dict[str, Any]:
    robots = {seat: level for seat in range(1, game.players)}
    return to_archive(game, computer=computer_entries(robots, "0.1.0"))


@pytest.fixture(scope="module")
def games() -> dict[tuple[int, str], dict[str, Any]]:
    """One whole game per table size and level (shared by the tests of this module)."""
    return {
        (n, level): archive_of(play_game(n, level, f"audit-{n}-{level}"), level)
        for n in TABLES
        for level in LEVELS
    }


@pytest.mark.parametrize("players", TABLES)
@pytest.mark.parametrize("level", LEVELS)
def test_every_computer_move_of_a_whole_game_is_re_derived(
    games: dict[tuple[int, str], dict[str, Any]], players: int, level: str
) -> None:
    archive = games[(players, level)]
    audit = audit_archive(archive, engine=ENGINE)
    assert audit.ok and audit.difference is None
    computer_moves = [a for a in archive["actions"] if a["seat"] != 0]
    assert audit.decisions == len(computer_moves) > 20
    assert audit.message == (
        f"the computer played only from its own cards ({audit.decisions} decisions re-derived)"
    )
    assert [s.level for s in audit.seats] == [level] * (players - 1)


def test_the_games_hold_every_kind_of_computer_decision(
    games: dict[tuple[int, str], dict[str, Any]],
) -> None:
    """Discards, plays, gos, counts and the answers to a person's count (muggins or
    accept) are all decisions the audit re-derives."""
    kinds = Counter(a["type"] for g in games.values() for a in g["actions"] if a["seat"] != 0)
    assert {"discard", "play", "go", "claim", "muggins", "accept"} <= set(kinds), kinds
    assert all(g["actions"] and len(g["actions"]) > 30 for g in games.values())


def test_a_decision_needs_nothing_but_the_view_as_a_mail_carries_it(
    games: dict[tuple[int, str], dict[str, Any]],
) -> None:
    """The view rebuilt from its JSON (the ``view.json`` part of a mail) gives the same
    move: the decision takes no object the seat could not be sent."""
    archive = games[(3, "medium")]
    game = new_game(3, seed=archive["seed"], target=61, muggins=True)
    checked = 0
    for raw in archive["actions"]:
        action = action_from_json(raw)
        if action.seat != 0:
            view = computer_view(game, action.seat)
            again = PlayerView.from_json(view.to_json())
            assert computer_move(again, "medium") == computer_move(view, "medium") == action
            checked += 1
        game.apply(action)
    assert checked > 40


@pytest.mark.parametrize("level", LEVELS)
def test_the_service_decides_as_it_did_from_the_game(
    games: dict[tuple[int, str], dict[str, Any]], level: str
) -> None:
    """`computer_move` of `computer_view` (the service's call now) makes the moves the
    service made before from the game itself (``choose_action(game, seat)`` after the
    forced moves): the same decisions, from less."""
    checked = 0
    for players in TABLES:
        archive = games[(players, level)]
        for game, raw in zip(replay_archive(archive), archive["actions"], strict=False):
            if raw["seat"] == 0 or game.forced_action() is not None:
                continue
            before = choose_action(game, raw["seat"], level=level)
            assert action_to_json(before) == raw
            checked += 1
    assert checked > 50


def test_the_inputs_of_every_decision_hold_no_hidden_card(
    games: dict[tuple[int, str], dict[str, Any]],
) -> None:
    """What the computer decides from (`computer_view`; its tie-break generator is seeded
    from that view alone) names no card its seat may not know: no other seat's hand or
    laid-away cards, no crib, no undealt card."""
    checked = 0
    for archive in games.values():
        for game, raw in zip(replay_archive(archive), archive["actions"], strict=False):
            if raw["seat"] == 0:
                continue
            view = computer_view(game, raw["seat"])
            assert_private_events_are_own(view)
            assert not view_cards(view) & hidden_from(game, raw["seat"]), raw
            checked += 1
    assert checked > 500


# -- a computer that peeks -----------------------------------------------------------


def peeking_move(game: Game, seat: int) -> Action:
    """The medium computer, except that when pegging it looks at the next seat's hidden
    cards and plays the card that leaves that seat the fewest points to peg next."""
    honest = computer_move(computer_view(game, seat), "medium")
    view = computer_view(game, seat)
    if view.phase != "pegging" or len(view.playable) < 2:
        return honest
    after = (seat + 1) % game.players
    theirs = game.holding(after)  # another seat's hidden cards: the peek

    def harm(card: Any) -> tuple[int, int]:
        trial = game.copy()
        trial.apply(Play(seat, card))
        if trial.is_over or trial.to_act() != (after,):
            return (0, -card.rank)
        best = 0
        for answer in theirs:
            if Play(after, answer) in trial.legal_actions(after):
                probe = trial.copy()
                before = probe.scores[probe.side_of(after)]
                probe.apply(Play(after, answer))
                best = max(best, probe.scores[probe.side_of(after)] - before)
        return (best, -card.rank)

    return Play(seat, min(view.playable, key=harm))


def first_peek(archive: dict[str, Any]) -> int:
    """The number of the first action where the archive's move is not the honest one."""
    game = new_game(archive["settings"]["players"], seed=archive["seed"], target=61, muggins=True)
    for number, raw in enumerate(archive["actions"], start=1):
        action = action_from_json(raw)
        if action.seat != 0:
            honest = computer_move(computer_view(game, action.seat), "medium")
            if not same_move(honest, action):
                return number
        game.apply(action)
    raise AssertionError("the peeking computer never played otherwise")


@pytest.mark.parametrize("players", TABLES)
def test_a_computer_that_peeks_is_caught_at_its_first_peek(players: int) -> None:
    game = play_game(players, "medium", f"peek-{players}", chooser=peeking_move)
    archive = archive_of(game, "medium")
    number = first_peek(archive)
    audit = audit_archive(archive, engine=ENGINE)
    assert not audit.ok and audit.difference is not None
    diff = audit.difference
    assert diff.number == number
    assert action_to_json(diff.played) == archive["actions"][number - 1]
    assert isinstance(diff.played, Play) and isinstance(diff.expected, Play)
    assert diff.expected != diff.played and diff.level == "medium"
    assert audit.decisions == sum(1 for a in archive["actions"][: number - 1] if a["seat"] != 0)
    assert f"action {number} (hand {diff.hand})" in audit.message
    assert f"makes 'play {diff.expected.card}'" in audit.message
    assert f"the archive has 'play {diff.played.card}'" in audit.message


# -- changed archives ------------------------------------------------------------------


def changed_at(
    archive: dict[str, Any], kind: str, *, person: bool = False
) -> tuple[dict[str, Any], int, Action]:
    """A copy of ``archive`` whose first computer move (``person``: move of seat 0) of
    ``kind`` with another legal choice is replaced by that choice (and the moves after
    it dropped)."""
    for number, (game, raw) in enumerate(
        zip(replay_archive(archive), archive["actions"], strict=False), start=1
    ):
        if (raw["seat"] == 0) != person or raw["type"] != kind:
            continue
        played = action_from_json(raw)
        others = [a for a in game.legal_actions(played.seat) if not same_move(a, played)]
        if others:
            tampered = copy.deepcopy(archive)
            tampered["actions"] = [*archive["actions"][: number - 1], action_to_json(others[0])]
            return tampered, number, others[0]
    raise AssertionError(f"no {kind} with a choice")


@pytest.mark.parametrize("kind", ["discard", "play", "claim"])
def test_a_changed_computer_move_is_caught(
    games: dict[tuple[int, str], dict[str, Any]], kind: str
) -> None:
    archive = games[(2, "medium")]
    tampered, number, other = changed_at(archive, kind)
    audit = audit_archive(tampered, engine=ENGINE)
    assert audit.difference is not None and audit.difference.number == number
    assert audit.difference.played == other
    assert audit_archive(archive).ok  # the fixture itself is untouched


def test_a_discard_in_another_order_is_the_same_move(
    games: dict[tuple[int, str], dict[str, Any]],
) -> None:
    archive = copy.deepcopy(games[(2, "medium")])
    first = next(a for a in archive["actions"] if a["seat"] == 1 and a["type"] == "discard")
    first["cards"].reverse()
    assert audit_archive(archive).ok
    assert same_move(Discard(1, ()), Discard(1, ())) and not same_move(Discard(1, ()), Go(1))


def test_a_changed_persons_move_is_not_the_computers(
    games: dict[tuple[int, str], dict[str, Any]],
) -> None:
    """Only the computer seats are checked: a person's other choice is not a difference
    (the moves after it no longer replay, so they are dropped)."""
    tampered, number, _ = changed_at(games[(2, "medium")], "play", person=True)
    audit = audit_archive(tampered)
    assert audit.ok and audit.decisions == sum(
        1 for a in tampered["actions"][: number - 1] if a["seat"] != 0
    )


def test_the_wrong_level_is_caught(games: dict[tuple[int, str], dict[str, Any]]) -> None:
    archive = copy.deepcopy(games[(2, "hard")])
    archive["computer"][0]["level"] = "medium"
    audit = audit_archive(archive, engine=ENGINE)
    assert not audit.ok and audit.difference is not None
    assert audit.difference.level == "medium"


def test_a_difference_names_both_engines_when_they_differ(
    games: dict[tuple[int, str], dict[str, Any]],
) -> None:
    tampered, _, _ = changed_at(games[(2, "easy")], "discard")
    tampered["computer"][0]["engine"] = "pbem-cribbage 0.0.9"
    text = audit_archive(tampered, engine=ENGINE).message
    assert "played by pbem-cribbage 0.0.9, this check ran pbem-cribbage 0.1.0" in text
    same = audit_archive(changed_at(games[(2, "easy")], "discard")[0], engine=ENGINE).message
    assert "this check ran" not in same and same.startswith("the computer's move differs")


def test_a_move_the_computer_could_not_make_does_not_replay(
    games: dict[tuple[int, str], dict[str, Any]],
) -> None:
    archive = copy.deepcopy(games[(2, "medium")])
    # A computer play put before the person's first play: the person's turn, not its.
    first = next(i for i, a in enumerate(archive["actions"]) if a == {**a, "type": "play"})
    if archive["actions"][first]["seat"] == 1:
        first += 1
    assert archive["actions"][first]["seat"] == 0
    archive["actions"].insert(first, {"type": "play", "seat": 1, "card": "AS"})
    with pytest.raises(ReplayError, match="seat 1 has nothing to do"):
        audit_archive(archive)
    archive["actions"][first] = {"type": "teleport", "seat": 1}
    with pytest.raises(ReplayError, match="is not an action"):
        audit_archive(archive)


# -- the computer list -------------------------------------------------------------------


def test_computer_entries_name_the_level_and_engine() -> None:
    assert computer_entries({2: "hard", 1: "good"}, "1.2.3") == [
        {"seat": 1, "level": "medium", "engine": "pbem-cribbage 1.2.3"},
        {"seat": 2, "level": "hard", "engine": "pbem-cribbage 1.2.3"},
    ]
    assert computer_entries({}, "1.2.3") == []


def test_an_archive_without_computer_seats_has_nothing_to_check() -> None:
    game = play_game(2, "medium", "nobody")
    archive = to_archive(game)
    assert audit_archive(archive) == Audit((), 0, None, "")
    assert audit_archive({**archive, "computer": []}).decisions == 0
    # The archive as text is read too.
    assert audit_archive(json.dumps({**archive, "computer": []})).ok


@pytest.mark.parametrize(
    ("computer", "error"),
    [
        ("seat 1", "not a list"),
        ([1], "not an object"),
        ([{"seat": 2, "level": "medium"}], "no seat 2 in a 2-player game"),
        ([{"seat": True, "level": "medium"}], "no seat True"),
        ([{"seat": -1, "level": "medium"}], "no seat -1"),
        ([{"seat": 1, "level": "medium"}, {"seat": 1, "level": "hard"}], "listed twice"),
        ([{"seat": 1}], "has no level"),
        ([{"seat": 1, "level": "genius"}], "unknown level 'genius'"),
    ],
)
def test_a_malformed_computer_list_is_refused(computer: Any, error: str) -> None:
    with pytest.raises(ReplayError, match=error):
        computer_seats({"computer": computer}, 2)
    game = new_game(2, seed="malformed", target=61)
    with pytest.raises(ReplayError, match=error):
        audit_archive({**to_archive(game), "computer": computer})


def test_an_unreadable_archive_is_refused() -> None:
    with pytest.raises(ReplayError):
        audit_archive("{not json")
    with pytest.raises(ReplayError):
        audit_archive({"format": "pbem-cribbage/1"})


def test_the_difference_describes_itself() -> None:
    diff = Difference(7, 2, 1, "hard", Claim(1, 8), Claim(1, 6))
    assert diff.describe() == (
        "action 7 (hand 2): from its own cards the computer at seat 1 (hard) makes "
        "'count 8', the archive has 'count 6'"
    )
    answer = Difference(9, 3, 2, "easy", Muggins(2), Accept(2)).describe()
    assert "the computer at seat 2 (easy) makes 'muggins', the archive has 'accept'" in answer
