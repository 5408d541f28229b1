"""A database URL that is not SQLite or PostgreSQL is one clear line and exit code 1,
from every command that opens the database, and nothing is created anywhere."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pbem.config import ConfigError, check_database_url, load_settings
from tests.cli_process import PBEM
from tests.e2e.helpers import fresh_env

BAD_URLS = [
    ("garbage", "is not a database URL"),
    ("pbem.sqlite", "is not a database URL"),
    ("postgres://pbem@127.0.0.1:5432/pbem", "write postgresql:// instead of postgres://"),
    ("postgressql://pbem@127.0.0.1/pbem", "unsupported database 'postgressql'"),
    ("mysql://pbem:hunter2@127.0.0.1/pbem", "unsupported database 'mysql'"),
    ("sqlite://", "names no SQLite file"),
    ("sqlite:///", "names no SQLite file"),
    ("postgresql://", "names no PostgreSQL host or database"),
    ("postgresql://pbem:hunter2@127.0.0.1:54x32/pbem", "is not a valid PostgreSQL URL"),
]
COMMANDS = [
    ["init"],
    ["game", "list"],
    ["game", "new", "alice@example.com", "--computer"],
    ["inbox", "list"],
    ["serve", "--once"],
    ["config"],
]


def _pbem(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PBEM, *args],
        cwd=cwd,
        env={**fresh_env(), **env},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize(("url", "reason"), BAD_URLS)
def test_a_bad_database_url_is_refused_by_the_settings(url: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        check_database_url(url)
    with pytest.raises(ConfigError, match=f"bad setting database_url: .*{reason}") as caught:
        load_settings(None, database_url=url)
    assert "hunter2" not in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        "",
        "sqlite:////var/lib/pbem/pbem.sqlite",
        "sqlite:///pbem.sqlite",
        "postgresql://pbem@127.0.0.1:5432/pbem",
        "postgresql+psycopg://pbem:secret@db:5432/pbem",
        "postgresql:///pbem",
    ],
)
def test_sqlite_files_and_postgresql_are_accepted(url: str) -> None:
    check_database_url(url)
    assert load_settings(None, database_url=url).database_url == url


def _refused(tmp_path: Path, url: str, reason: str, commands: list[list[str]]) -> None:
    data_dir = tmp_path / "data"
    for command in commands:
        done = _pbem(command, tmp_path, PBEM_DATABASE_URL=url, PBEM_DATA_DIR=str(data_dir))
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        lines = done.stderr.splitlines()
        assert len(lines) == 1, (command, done.stderr)
        assert lines[0].startswith("error: bad setting database_url: "), lines
        assert reason in lines[0]
        assert "hunter2" not in done.stderr + done.stdout
        assert "Traceback" not in done.stderr
        assert list(tmp_path.iterdir()) == [], f"{command} created {list(tmp_path.iterdir())}"


@pytest.mark.parametrize(("url", "reason"), BAD_URLS)
def test_init_answers_a_bad_url_with_one_line_and_creates_nothing(
    tmp_path: Path, url: str, reason: str
) -> None:
    _refused(tmp_path, url, reason, [["init"]])


@pytest.mark.parametrize(("url", "reason"), [BAD_URLS[0], BAD_URLS[4]])
def test_every_command_that_opens_the_database_refuses_a_bad_url(
    tmp_path: Path, url: str, reason: str
) -> None:
    _refused(tmp_path, url, reason, COMMANDS)


def test_a_bad_url_in_the_config_file_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "pbem.toml").write_text('database_url = "garbage"\n', encoding="utf-8")
    done = _pbem(["init"], tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "error: bad setting database_url in pbem.toml: 'garbage' is not a database URL "
        "(expected sqlite:///PATH or postgresql://USER@HOST/DATABASE)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pbem.toml"]


def test_a_sqlite_url_opens_that_file(tmp_path: Path) -> None:
    database = tmp_path / "elsewhere" / "games.sqlite"
    database.parent.mkdir()
    done = _pbem(["init"], tmp_path, PBEM_DATABASE_URL=f"sqlite:///{database}")
    assert done.returncode == 0, done.stderr
    assert database.is_file()
    listed = _pbem(["game", "list"], tmp_path, PBEM_DATABASE_URL=f"sqlite:///{database}")
    assert listed.returncode == 0, listed.stderr


def test_the_demo_keeps_to_its_own_sqlite_file_whatever_the_environment_says(
    tmp_path: Path,
) -> None:
    done = _pbem(
        ["demo", "--to", "61", "--quiet", "--dir", str(tmp_path / "demo")],
        tmp_path,
        PBEM_DATABASE_URL="garbage",
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "demo" / "pbem.sqlite").is_file()
    assert not (tmp_path / "garbage").exists()
