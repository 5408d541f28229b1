"""The email command language: reading lines and replies (`pbem.commands.reader`).

Moves into engine actions are tested in test_commands_moves.py, settings in
test_commands_settings.py, the lobby in test_lobby_commands.py.
"""

from __future__ import annotations

import pytest

from pbem.commands import parse_line, parse_reply


@pytest.mark.parametrize(
    ("line", "verb", "args"),
    [
        ("discard 5h jd", "discard", ("5h", "jd")),
        ("Discard 5H, JD", "discard", ("5h", "jd")),
        ("crib 5h jd", "discard", ("5h", "jd")),
        ("throw 5♥ J♦", "discard", ("5♥", "j♦")),
        ("lay away 5h and jd", "discard", ("5h", "jd")),
        ("play 7c", "play", ("7c",)),
        ("PLAY 7C.", "play", ("7c",)),
        ("p 10h", "play", ("10h",)),
        ("7c", "cards", ("7c",)),
        ("♥5", "cards", ("♥5",)),
        ("go", "go", ()),
        ("Go!", "go", ()),
        ("pass", "go", ()),
        ("count 12", "count", ("12",)),
        ("claim 12", "count", ("12",)),
        ("muggins", "muggins", ()),
        ("Muggins!", "muggins", ()),
        ("accept", "accept", ()),
        ("no muggins", "accept", ()),
        ("hand", "hand", ()),
        ("status", "hand", ()),
        ("history", "history", ()),
        ("resign", "resign", ()),
        ("help", "help", ()),
        ("help please", "help", ()),
        ("I resign.", "resign", ()),
        ("I'll play 7c", "play", ("7c",)),
        ("let's go", "go", ()),
        # "a" is the ace unless it is an article before "card".
        ("play a", "play", ("a",)),
        ("Play A!", "play", ("a",)),
        ("play a please", "play", ("a",)),
        ("play a card", "play", ()),
        ("I play a 5", "play", ("a", "5")),
        ("play an ace", "play", ("ace",)),
        ("play the king", "play", ("king",)),
        ("discard a k", "discard", ("a", "k")),
        ("throw a 5 and a jack", "discard", ("a", "5", "a", "jack")),
        # The other one-letter ranks are never fillers.
        ("play k", "play", ("k",)),
        ("play q", "play", ("q",)),
        ("play j", "play", ("j",)),
        ("play t", "play", ("t",)),
    ],
)
def test_parse_line(line: str, verb: str, args: tuple[str, ...]) -> None:
    cmd = parse_line(line)
    assert cmd is not None
    assert (cmd.verb, cmd.args) == (verb, args)


@pytest.mark.parametrize(
    "line", ["thanks!", "good game", "Hi Bob,", "I think so", "go 7c", "I will", "I"]
)
def test_not_commands(line: str) -> None:
    assert parse_line(line) is None


def test_several_commands_in_order_and_ignored_lines() -> None:
    parsed = parse_reply("Hi!\ndiscard 5h jd\nplay 7c; go\nthanks", "")
    assert [c.verb for c in parsed.commands] == ["discard", "play", "go"]
    assert parsed.ignored == ("Hi!", "thanks")


def test_the_body_is_read_and_the_subject_only_when_it_holds_no_command() -> None:
    parsed = parse_reply("go", "play 7c")
    assert [c.verb for c in parsed.commands] == ["go"]
    parsed = parse_reply("thanks, Bob!", "play 7c")
    assert [c.verb for c in parsed.commands] == ["play"] and parsed.ignored == ("thanks, Bob!",)
    assert [c.verb for c in parse_reply("", "stop").commands] == ["stop"]


@pytest.mark.parametrize("line", ["archive", "Archive please", "export", "record"])
def test_archive_is_read(line: str) -> None:
    cmd = parse_line(line)
    assert cmd is not None and cmd.verb == "archive" and cmd.args == ()


def test_lay_away_is_still_a_discard() -> None:
    cmd = parse_line("lay away 5h jd")
    assert cmd is not None and (cmd.verb, cmd.args) == ("discard", ("5h", "jd"))
