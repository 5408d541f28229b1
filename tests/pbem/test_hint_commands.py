"""The command language of hints and levels: ``hint``, ``hints on|off`` in a game mail;
``level easy|medium|hard`` in the lobby's ``new``."""

from __future__ import annotations

import pytest

from engine import InvalidSyntaxError
from pbem.commands import (
    Command,
    LobbyCommand,
    computer_level,
    computer_levels,
    hints_choice,
    parse_line,
    parse_lobby,
    parse_reply,
)


@pytest.mark.parametrize(
    ("line", "verb", "args"),
    [
        ("hint", "hint", ()),
        ("Hint please", "hint", ()),
        ("hints", "hint", ()),
        ("hints please", "hint", ()),
        ("advice?", "hint", ()),
        ("suggest", "hint", ()),
        ("hints on", "hints", ("on",)),
        ("Hints ON please", "hints", ("on",)),
        ("hints off", "hints", ("off",)),
        ("hints: yes", "hints", ("yes",)),
    ],
)
def test_hint_lines(line: str, verb: str, args: tuple[str, ...]) -> None:
    command = parse_line(line)
    assert command is not None and (command.verb, command.args) == (verb, args)


def test_hints_in_prose_is_not_a_command() -> None:
    assert parse_line("hints on the crib would be welcome") is None


@pytest.mark.parametrize(("args", "on"), [(("on",), True), (("off",), False), (("no",), False)])
def test_hints_choice(args: tuple[str, ...], on: bool) -> None:
    assert hints_choice(Command("hints", args, "")) is on


@pytest.mark.parametrize("args", [(), ("on", "off")])
def test_hints_choice_unreadable(args: tuple[str, ...]) -> None:
    with pytest.raises(InvalidSyntaxError, match="'hints on' or 'hints off'"):
        hints_choice(Command("hints", args, ""))


def test_a_move_and_a_hint_in_one_mail() -> None:
    parsed = parse_reply("play 7c\nhint")
    assert [c.verb for c in parsed.commands] == ["play", "hint"]


# -- levels -----------------------------------------------------------------------------


def test_the_levels_are_the_engines() -> None:
    assert computer_levels() == ("easy", "medium", "hard")
    assert computer_level(" Hard ") == "hard"
    assert computer_level("good") == "medium"  # the old name of medium
    with pytest.raises(InvalidSyntaxError, match="'random' is not a level"):
        computer_level("random")  # a yardstick of the arena, not offered to players


@pytest.mark.parametrize(
    ("text", "level", "target", "players"),
    [
        ("new level hard", "hard", 121, None),
        ("play computer level easy to 61", "easy", 61, None),
        ("new 3 players level medium", "medium", 121, 3),
        ("new to 61", None, 61, None),
    ],
)
def test_new_with_a_level(text: str, level: str | None, target: int, players: int | None) -> None:
    found = parse_lobby(text)
    assert isinstance(found, LobbyCommand) and found.verb == "new"
    assert (found.level, found.target, found.players) == (level, target, players)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("new level grandmaster", "'grandmaster' is not a level of the computer; choose from"),
        ("new level", "level what?"),
        ("challenge bob@example.com level hard", "a level is for a game against the computer"),
    ],
)
def test_a_level_it_cannot_read(text: str, error: str) -> None:
    found = parse_lobby(text)
    assert isinstance(found, InvalidSyntaxError) and error in str(found)
