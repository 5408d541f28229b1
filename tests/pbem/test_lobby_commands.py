"""The lobby's commands as read from a mail to the plain service address."""

from __future__ import annotations

import pytest

from engine import InvalidSyntaxError
from pbem.commands import Command, LobbyCommand, parse_lobby, parse_reply


@pytest.mark.parametrize(
    ("text", "verb", "fields"),
    [
        ("new", "new", {}),
        ("New game to 61", "new", {"target": 61}),
        ("play computer to 61 muggins", "new", {"target": 61, "muggins": True}),
        ("play against the computer, no skunk", "new", {"skunk": "none"}),
        ("new lurch 3 players", "new", {"skunk": "lurch", "players": 3}),
        ("new game, 4 players", "new", {"players": 4}),
        (
            "challenge bob@example.org carol@example.net to 61",
            "challenge",
            {"invitees": ("bob@example.org", "carol@example.net"), "target": 61},
        ),
        (
            "invite <b@x.org>, c@x.org and d@x.org partners",
            "challenge",
            {"invitees": ("b@x.org", "c@x.org", "d@x.org"), "partners": True},
        ),
        ("cancel", "cancel", {}),
        ("games", "games", {}),
        ("my games please", "games", {}),
    ],
)
def test_lobby_commands(text: str, verb: str, fields: dict[str, object]) -> None:
    found = parse_lobby(text)
    assert isinstance(found, LobbyCommand)
    assert found.verb == verb
    for name, value in fields.items():
        assert getattr(found, name) == value


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("new to 100", "61 or 121, not 100"),
        ("new 5 players", "2, 3 or 4 players, not 5"),
        ("challenge", "challenge whom"),
        ("challenge bob@example.org partners", "partners play four"),
        ("challenge a@x.org b@x.org c@x.org d@x.org", "at most 3"),
        ("challenge bob@example.org tomorrow", "'tomorrow' is not an option"),
        (
            "challenge üser@idn.test",
            "üser@idn.test: only plain ASCII addresses can be invited",
        ),
        (
            "challenge bob@example.org Zoë@Exämple.com",
            "zoë@exämple.com: only plain ASCII addresses can be invited",
        ),
    ],
)
def test_lobby_commands_it_cannot_read(text: str, error: str) -> None:
    found = parse_lobby(text)
    assert isinstance(found, InvalidSyntaxError)
    assert error in str(found)


@pytest.mark.parametrize(
    "text",
    [
        "New to this, how do I play?",
        "games are fun",
        "play 7c",
        "discard 5h jd",
        "play computer now",
        "cancel my subscription",
        "hello",
        # "start" is only the setting that undoes "stop": it starts no game.
        "start",
        "start game",
        "start a game, 4 players",
    ],
)
def test_not_lobby_commands(text: str) -> None:
    assert parse_lobby(text) is None


def test_start_is_the_setting_and_new_the_game() -> None:
    assert parse_reply("start").commands == (Command("start", (), "start"),)
    found = parse_lobby("new")
    assert isinstance(found, LobbyCommand) and found.verb == "new"


def test_an_international_domain_in_its_ascii_form_may_be_invited() -> None:
    found = parse_lobby("challenge user@xn--bcher-kva.example")
    assert isinstance(found, LobbyCommand)
    assert found.invitees == ("user@xn--bcher-kva.example",)


def test_the_body_is_read_before_the_subject() -> None:
    found = parse_lobby("challenge bob@example.org", "new game to 61")
    assert isinstance(found, LobbyCommand) and found.verb == "challenge"
    # A subject that alone would be refused ("challenge whom?") is not read at all.
    found = parse_lobby("challenge dave@z.test to 61", "challenge")
    assert isinstance(found, LobbyCommand) and found.invitees == ("dave@z.test",)
    # The subject when the body holds no command: "new" with a friendly line.
    found = parse_lobby("Hello, may I play?", "new game to 61")
    assert isinstance(found, LobbyCommand) and found.verb == "new" and found.target == 61
    # A body with any command (here a game's) leaves the subject unread.
    assert parse_lobby("hand", "new") is None
