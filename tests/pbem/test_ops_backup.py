"""``pbem backup`` and ``pbem restore``: a consistent copy taken by another process while
a game is being played, restored and played on; and every way they refuse."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.service import Service
from pbem.store.backup import BackupError, backup_sqlite, inspect_backup, sqlite_path
from pbem.store.db import make_engine
from tests.e2e.helpers import ALICE, BOB, Harness, cli_env, run_cli
from tests.pbem.ops_helpers import sqlite_harness

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def harness(tmp_path: Path, _sqlite_template: Path) -> Iterator[Harness]:
    harness = sqlite_harness(tmp_path, _sqlite_template, fair_deals=False)
    yield harness
    harness.close()
    harness.db.dispose()


def env_for(harness: Harness) -> dict[str, str | None]:
    return cli_env(harness.tmp_path / "cli", harness.settings.db_url)


def backup_process(harness: Harness, dest: Path) -> subprocess.CompletedProcess[str]:
    """The real ``pbem backup`` in a process of its own (this source tree's)."""
    env = {k: v for k, v in env_for(harness).items() if v is not None}
    env.update(PATH=os.environ.get("PATH", ""), PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "pbem.cli", "backup", str(dest)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def moves_in(path: Path) -> int:
    """The moves logged in a database file, every game's."""
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM action_log").fetchone()[0])


def test_backups_taken_while_a_game_is_played_restore_and_play_on(harness: Harness) -> None:
    results: list[subprocess.CompletedProcess[str]] = []
    files = [harness.tmp_path / f"backup-{n}.db" for n in range(2)]
    done = threading.Event()

    def take_backups() -> None:
        for path in files:
            results.append(backup_process(harness, path))
        done.set()

    thread = threading.Thread(target=take_backups)
    thread.start()
    games: list[int] = []
    while not done.is_set():  # moves by mail, game after game, until the backups are done
        n = len(games)  # new players each game: each replies to their only game's mail
        pair = [(f"a{n}@example.com", "Ann"), (f"b{n}@example.org", "Ben")]
        games.append(harness.new_game(pair, target=61, seed=f"backup-{n}"))
        harness.play_until(games[-1], lambda g: done.is_set() or g.is_over)
    thread.join()
    for process in results:
        assert process.returncode == 0, process.stderr
        assert "backed up " in process.stdout
    taken = [moves_in(path) for path in files]
    assert taken == sorted(taken) and taken[-1] > 0  # each a later moment of the play
    for path in files:  # whole files, each a consistent moment whose games replay
        assert inspect_backup(path).games >= 1
        copy = make_engine(f"sqlite:///{path}")
        try:
            audit = Service(harness.settings, copy).audit()
        finally:
            copy.dispose()
        assert audit.ok and audit.replayed == audit.games, audit.problems
    assert moves_in(harness.tmp_path / "pbem.db") >= taken[-1]

    # Restore the last backup over the live database and play on from there.
    harness.close()
    result = run_cli(env_for(harness), "restore", str(files[-1]), "--yes")
    assert result.exit_code == 0, result.output
    assert "games from" in result.stdout
    harness.restart()
    assert moves_in(harness.tmp_path / "pbem.db") == taken[-1]
    assert harness.service.audit().ok
    game_id = harness.new_game([ALICE, BOB], target=61, seed="after-the-restore")
    harness.play_until(game_id, lambda g: len(g.actions) >= 3)
    assert harness.service.audit().ok


def test_restore_asks_first_and_refuses_while_the_daemon_runs(harness: Harness) -> None:
    harness.new_game([ALICE, BOB], target=61, seed="backup")
    dest = harness.tmp_path / "b.db"
    backup_sqlite(harness.settings.db_url, dest)
    env = env_for(harness)
    result = run_cli(env, "restore", str(dest), input="n\n")
    assert result.exit_code == 1 and "nothing restored" in result.stderr
    harness.daemon.claim()
    result = run_cli(env, "restore", str(dest), "--yes")
    assert result.exit_code == 1
    assert "another pbem serve is already running" in result.stderr
    # Worded for a restore on SQLite: stop the daemon, then restore (a second daemon's
    # refusal speaks of PostgreSQL's workers; a restore has nothing to do with them).
    assert "stop it first" in result.stderr and "run pbem restore again" in result.stderr
    assert "PostgreSQL" not in result.stderr and "workers" not in result.stderr
    harness.daemon._lock.release()  # type: ignore[union-attr]
    result = run_cli(env, "restore", str(dest), input="y\n")
    assert result.exit_code == 0, result.output


def test_restore_refuses_what_is_not_a_whole_pbem_backup(harness: Harness) -> None:
    env = env_for(harness)
    missing = harness.tmp_path / "none.db"
    assert "does not exist" in run_cli(env, "restore", str(missing), "--yes").stderr
    text = harness.tmp_path / "notes.txt"
    text.write_text("not a database\n" * 100)
    result = run_cli(env, "restore", str(text), "--yes")
    assert result.exit_code == 1 and "is not a SQLite database" in result.stderr
    other = harness.tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    result = run_cli(env, "restore", str(other), "--yes")
    assert result.exit_code == 1 and "is not a pbem database" in result.stderr
    # A damaged backup: pages overwritten in the middle of the file.
    harness.new_game([ALICE, BOB], target=61, seed="backup")
    good = harness.tmp_path / "good.db"
    backup_sqlite(harness.settings.db_url, good)
    damaged = harness.tmp_path / "damaged.db"
    data = bytearray(good.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 8192] = b"\xff" * 8192
    damaged.write_bytes(bytes(data))
    result = run_cli(env, "restore", str(damaged), "--yes")
    assert result.exit_code == 1
    assert "damaged" in result.stderr or "not a SQLite database" in result.stderr
    assert harness.service.audit().games == 1  # the live database was left alone


def test_backup_failures_are_one_clear_line(harness: Harness, tmp_path: Path) -> None:
    env = env_for(harness)
    result = run_cli(env, "backup", str(tmp_path / "no" / "such" / "dir" / "b.db"))
    assert result.exit_code == 1 and "cannot write" in result.stderr
    result = run_cli(env, "backup", harness.settings.db_url.removeprefix("sqlite:///"))
    assert result.exit_code == 1 and "cannot be the database itself" in result.stderr
    with pytest.raises(BackupError, match="does not exist"):
        backup_sqlite(f"sqlite:///{tmp_path}/missing.db", tmp_path / "b.db")
    with pytest.raises(BackupError, match="in-memory"):
        sqlite_path("sqlite://")


@pytest.mark.postgres
def test_on_postgresql_backup_and_restore_say_how_to_use_pg_dump(
    tmp_path: Path, pg_admin_url: object
) -> None:
    url = "postgresql://postgres@127.0.0.1:5432/postgres"
    env = cli_env(tmp_path, url)
    for args in (("backup", str(tmp_path / "b.db")), ("restore", str(tmp_path / "b.db"), "--yes")):
        result = run_cli(env, *args)
        assert result.exit_code == 1
        assert "pg_dump --format=custom" in result.stderr
        assert "pg_restore --clean" in result.stderr
