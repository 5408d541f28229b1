"""The command line's help reads like a person wrote it, and its choices are checked."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest
import typer

import pbem.cli
from tests.e2e.helpers import cli_env, run_cli


def _commands() -> list[list[str]]:
    """Every leaf command's words, e.g. ``["game", "new"]``."""
    found: list[list[str]] = []

    def walk(command: object, words: list[str]) -> None:
        children = getattr(command, "commands", None)
        if children:
            for name, child in children.items():
                walk(child, [*words, name])
        else:
            found.append(words)

    walk(typer.main.get_command(pbem.cli.app), [])
    return found


COMMANDS = _commands()


def test_every_command_is_found() -> None:
    assert ["game", "new"] in COMMANDS and ["serve"] in COMMANDS and ["status"] in COMMANDS
    assert len(COMMANDS) >= 20


@pytest.mark.parametrize("words", COMMANDS, ids=[" ".join(w) for w in COMMANDS])
def test_help_has_no_type_noise_and_has_examples(tmp_path: Path, words: list[str]) -> None:
    result = run_cli(cli_env(tmp_path), *words, "--help")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert not re.search(r"<(bool|int|str|float|list\[[^>]*\]|path)>", text), text
    assert "Examples" in text
    # Each example is a command line of this very command.
    examples = text.split("Examples", 1)[1]
    assert f"pbem {' '.join(words)}" in re.sub(r"pbem (-\S+ )+", "pbem ", examples), examples


def test_boolean_options_are_flags(tmp_path: Path) -> None:
    text = run_cli(cli_env(tmp_path), "game", "new", "--help").stdout
    line = next(line for line in text.splitlines() if "--muggins" in line)
    assert "--no-muggins" not in line and "bool" not in line.lower()
    assert re.search(r"--muggins\s+Players count", line), line
    assert re.search(r"--to\s+N\s", text)  # a value option names its value plainly


@pytest.mark.parametrize(
    ("words", "valid"),
    [
        (["game", "list"], ["active", "paused", "finished", "aborted"]),
        (["inbox", "list"], ["pending", "applied", "rejected", "ignored", "failed"]),
        (["outbox", "list"], ["pending", "sending", "sent", "failed"]),
    ],
)
def test_an_unknown_status_is_refused_with_the_valid_ones(
    tmp_path: Path, words: list[str], valid: list[str]
) -> None:
    result = run_cli(cli_env(tmp_path), *words, "--status", "bogus")
    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.replace("│", " ").split())
    assert "'bogus' is not one of" in message, message
    for status in valid:
        assert f"'{status}'" in message
    assert "Traceback" not in result.output


def test_version(tmp_path: Path) -> None:
    result = run_cli(cli_env(tmp_path), "--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"pbem {version('pbem-cribbage')}"


def test_the_consoles_are_made_on_first_use_and_take_what_is_set_on_them() -> None:
    from unittest import mock

    from pbem.cli.base import _LazyConsole

    lazy = _LazyConsole(markup=False, soft_wrap=True)
    before = lazy._width  # None, or 80 where no terminal answers
    with mock.patch.object(lazy, "_width", 123):  # as tests/e2e/helpers.run_cli does
        assert lazy.width == 123
        assert lazy._console._width == 123  # on the console itself, not the stand-in
    assert lazy._width == before and lazy.width != 123
