"""Settings by mail (`pbem.commands.settings`): their lines, and the choices read."""

from __future__ import annotations

import pytest

from engine import InvalidSyntaxError
from pbem.commands import mail_choice, parse_line


@pytest.mark.parametrize(
    ("line", "every"),
    [
        ("mail all", True),
        ("Mail me after every move", True),
        ("mail turns", False),
        ("emails: fewer please", False),
    ],
)
def test_the_mail_setting_is_read(line: str, every: bool) -> None:
    cmd = parse_line(line)
    assert cmd is not None and cmd.verb == "mail"
    assert mail_choice(cmd) is every


def test_the_mail_setting_needs_a_choice() -> None:
    bare = parse_line("mail")
    assert bare is not None and bare.verb == "mail"
    with pytest.raises(InvalidSyntaxError, match="mail all"):
        mail_choice(bare)
    assert parse_line("mail me tomorrow") is None  # not the setting: an ordinary line


@pytest.mark.parametrize(
    ("line", "verb", "args"),
    [
        ("name Alice Smith", "name", ("Alice Smith",)),
        ("Name:  Zoë  O'Neil", "name", ("Zoë  O'Neil",)),
        ("name", "name", ()),
        ("mail text", "mail", ("text",)),
        ("mail html please", "mail", ("html",)),
        ("mail both", "mail", ("both",)),
        ("stop", "stop", ()),
        ("Stop mailing me please", "stop", ()),
        ("unsubscribe", "stop", ()),
        ("start", "start", ()),
        ("away 5 days", "away", ("5", "days")),
        ("away for 2 weeks", "away", ("2", "weeks")),
        ("back", "back", ()),
        ("back again!", "back", ()),
    ],
)
def test_setting_lines(line: str, verb: str, args: tuple[str, ...]) -> None:
    cmd = parse_line(line)
    assert cmd is not None and (cmd.verb, cmd.args) == (verb, args)


@pytest.mark.parametrize(
    "line",
    ["stop playing the king", "back to you", "away from my desk", "start the game", "mail me"],
)
def test_lines_that_only_start_with_a_setting_word(line: str) -> None:
    assert parse_line(line) is None
