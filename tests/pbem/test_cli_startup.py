"""The command line starts without its heavy modules (issue 24, "Fast start").

Not a timed test: what each start imports is read from ``python -X importtime`` in a
process of its own, and the modules that cost the time (SQLAlchemy, Alembic, pydantic,
the engine and its strategies, the mail libraries, the templates) must not be among
them. ``benchmarks/startup_bench.py`` measures the times themselves.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pbem.cli.game import LEVELS

ROOT = Path(__file__).resolve().parents[2]

HEAVY = (
    "sqlalchemy",
    "sqlmodel",
    "alembic",
    "psycopg",
    "pydantic",
    "pydantic_settings",
    "numpy",
    "jinja2",
    "aiosmtplib",
    "imapclient",
    "html2text",
    "openskill",
    "engine",
    "engine.levels",
    "engine.strategy",
    "pbem.config",
    "pbem.service",
    "pbem.store.models",
    "pbem.store.db",
    "pbem.run.daemon",
)
"""What building the command line must not import: every one is imported by the command
that uses it, when it runs."""

DAEMON_LATER = (
    "alembic",
    "numpy",
    "engine.strategy",
    "engine.strategy.hard",
    "aiosmtplib",
    "imapclient",
    "openskill",
)
"""What the daemon does not need before its first log line: Alembic migrates (``pbem
init``), numpy and the strategies play the computer's moves, the mail libraries serve
SMTP and IMAP URLs (a Maildir set-up never loads them), OpenSkill rates finished games."""


def imported(*python_args: str, tmp_path: Path, must: str = "pbem.cli") -> set[str]:
    """The modules a fresh ``python -X importtime PYTHON_ARGS`` imports (it must exit 0,
    and have imported ``must``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PBEM_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *python_args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    assert must in names, done.stderr[-2000:]
    return names


def heavy_among(names: set[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    return sorted(name for name in names if name in heavy)


def test_pbem_version_alone_answers_before_typer(tmp_path: Path) -> None:
    names = imported("-m", "pbem.cli", "--version", tmp_path=tmp_path)
    assert heavy_among(names) == []
    assert not {"typer", "click", "rich"} & names, sorted(names)


def test_pbem_help_imports_typer_only(tmp_path: Path) -> None:
    names = imported("-m", "pbem.cli", "--help", tmp_path=tmp_path)
    assert heavy_among(names) == []
    assert "typer" in names  # the help is typer's own
    # Typer's rich panels would bring Markdown and Pygments (half of the help's time);
    # the help is the plain one, and Rich waits for a command that prints a table.
    assert not {"rich", "typer.rich_utils", "markdown_it", "pygments"} & names, sorted(names)


def test_building_every_command_imports_none_of_what_they_use(tmp_path: Path) -> None:
    # Every command's parameters resolved, as `pbem COMMAND --help` would.
    build = "import typer.main, pbem.cli; typer.main.get_command(pbem.cli.app)"
    names = imported("-c", build, tmp_path=tmp_path)
    assert heavy_among(names) == []


@pytest.mark.parametrize("words", [["game", "new"], ["outbox", "list"], ["serve"]])
def test_a_commands_help_imports_none_of_what_it_uses(tmp_path: Path, words: list[str]) -> None:
    names = imported("-m", "pbem.cli", *words, "--help", tmp_path=tmp_path)
    # typer checks the global options' values with pydantic before a command's help: its
    # own cost, which every command pays.
    assert heavy_among(names, tuple(n for n in HEAVY if n != "pydantic")) == []


def test_the_daemon_starts_without_what_it_needs_later(tmp_path: Path) -> None:
    wiring = "import pbem.run.runtime, pbem.run.daemon, pbem.service, pbem.cli.serve"
    names = imported("-c", wiring, tmp_path=tmp_path)
    assert heavy_among(names, DAEMON_LATER) == []
    assert "sqlalchemy" in names and "pbem.service" in names  # it did wire the service


def test_naming_the_levels_loads_no_strategy(tmp_path: Path) -> None:
    check = "from engine.levels import LEVELS, all_names, canonical; canonical('good')"
    names = imported("-c", check, tmp_path=tmp_path, must="engine.levels")
    assert heavy_among(names, DAEMON_LATER) == []


def test_the_help_lists_the_engines_levels() -> None:
    from engine.levels import LEVELS as ENGINE_LEVELS

    assert LEVELS == ENGINE_LEVELS


def test_the_strategies_load_when_first_asked_for() -> None:
    import engine.levels as levels

    table = levels.STRATEGIES
    assert set(table) == {*levels.LEVELS, *levels.BASELINES}
    assert levels.strategy("good") is table["medium"]
    with pytest.raises(ValueError, match="unknown level 'grandmaster'"):
        levels.canonical("grandmaster")
    with pytest.raises(AttributeError, match="no attribute 'TABLES'"):
        _ = levels.TABLES


def test_reading_the_standings_needs_the_database_alone(tmp_path: Path) -> None:
    # The stored table is read by index: no service, templates, engine, OpenSkill or
    # ORM, whose imports would cost more than reading 20,000 lines.
    imported("-m", "pbem.cli", "init", tmp_path=tmp_path)
    names = imported("-m", "pbem.cli", "standings", tmp_path=tmp_path)
    assert "sqlalchemy" in names and "pbem.store.lines" in names
    unused = (
        *("pbem.service", "pbem.render.mailmaker", "pbem.render.turnmail", "jinja2", "openskill"),
        *("engine", "numpy"),
        *("sqlmodel", "pbem.store.models", "rich"),  # plain rows, plain text
    )
    assert heavy_among(names, unused) == []
