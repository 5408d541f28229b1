"""What is left of a forgotten player in the database's files, and what forgetting costs
at the end (`pbem.store.erasure`): on SQLite old bytes are overwritten as they are
deleted, so forgetting ends by emptying the write-ahead log, not by writing the whole
file again — but a file made before secure deletion is compacted once; a reader that
keeps the log from being emptied is reported, and the command fails."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

import pbem.store.erasure as erasure
from pbem.store.erasure import LOG_NOT_EMPTIED
from tests.e2e.helpers import ALICE, cli_env, run_cli
from tests.pbem.ops_helpers import Installation, clone
from tests.pbem.test_ops_forget import ALICE_TRACES, traces_left


@pytest.fixture
def installation(ops_installation: Installation, tmp_path: Path) -> Iterator[Installation]:
    made = clone(ops_installation, tmp_path)
    yield made
    made.harness.close()
    made.harness.db.dispose()


def database_file(installation: Installation) -> Path:
    return Path(installation.harness.settings.db_url.removeprefix("sqlite:///"))


def pragma(path: Path, name: str) -> int:
    with sqlite3.connect(path) as connection:
        return int(connection.execute(f"PRAGMA {name}").fetchone()[0])


def test_forgetting_overwrites_the_old_bytes_without_writing_the_file_again(
    installation: Installation,
) -> None:
    path = database_file(installation)
    assert pragma(path, "auto_vacuum") == 2  # a file made by this version: incremental
    assert traces_left(installation.harness, ALICE_TRACES)
    pages = pragma(path, "page_count")
    report = installation.harness.service.forget(ALICE[0], abort_games=True)
    # No VACUUM: the rewrite overwrote what it replaced; the log is emptied.
    assert report.storage == "the write-ahead log emptied"
    assert traces_left(installation.harness, ALICE_TRACES) == []
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    assert pragma(path, "page_count") >= pages - 2  # not written again smaller


def test_a_file_made_before_secure_deletion_is_compacted_once(installation: Installation) -> None:
    path = database_file(installation)
    installation.harness.db.dispose()
    with sqlite3.connect(path, isolation_level=None) as connection:
        connection.execute("PRAGMA auto_vacuum = NONE")
        connection.execute("VACUUM")  # as an earlier version made it
    assert pragma(path, "auto_vacuum") == 0
    report = installation.harness.service.forget(ALICE[0], abort_games=True)
    assert report.storage == "VACUUM (the whole file written again); the write-ahead log emptied"
    assert traces_left(installation.harness, ALICE_TRACES) == []
    assert pragma(path, "auto_vacuum") == 2  # the next forgetting needs no VACUUM


def test_compact_writes_the_file_again_when_asked(installation: Installation) -> None:
    env = cli_env(installation.harness.tmp_path / "cli", installation.harness.settings.db_url)
    result = run_cli(env, "player", "forget", ALICE[0], "--abort-games", "--yes", "--compact")
    assert result.exit_code == 0, result.output
    assert "old versions: VACUUM (the whole file written again)" in result.stdout
    assert traces_left(installation.harness, ALICE_TRACES) == []


def test_a_reader_that_keeps_the_log_is_reported(
    installation: Installation, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(erasure, "CHECKPOINT_WAIT_S", 0.05)
    monkeypatch.setattr(erasure, "TRIES", 1)
    path = database_file(installation)
    reader = sqlite3.connect(path, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM player").fetchone()  # an older snapshot held
        env = cli_env(installation.harness.tmp_path / "cli", installation.harness.settings.db_url)
        result = run_cli(env, "player", "forget", ALICE[0], "--abort-games", "--yes")
        assert result.exit_code == 1
        assert "is now forgotten-1@forgotten.invalid" in result.stdout  # the rows are done
        assert f"{LOG_NOT_EMPTIED} (others kept reading it)" in result.stderr
        assert "pbem db prune --vacuum" in result.stderr
        reader.execute("COMMIT")
    finally:
        reader.close()
    # Once the reader is gone, pbem db prune --vacuum empties the log: no trace left.
    result = run_cli(env, "db", "prune", "--vacuum")
    assert result.exit_code == 0, result.output
    assert traces_left(installation.harness, ALICE_TRACES) == []
    assert re.search(r"vacuumed: \d+ bytes before, \d+ after", result.stdout)
