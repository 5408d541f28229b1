"""``pbem`` as a real program: the demo, the daemon lock, and errors at a terminal's width."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

from tests.cli_process import PBEM, start_pbem
from tests.e2e.helpers import fresh_env


def pbem(
    *args: str, data_dir: Path, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    environment = {**fresh_env(), "PBEM_DATA_DIR": str(data_dir), **env}
    environment.pop("COLUMNS", None)  # a pipe: rich falls back to 80 columns
    return subprocess.run(
        [*PBEM, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
        cwd=data_dir,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_the_demo_plays_a_game_by_email_and_the_replay_verifies(tmp_path: Path) -> None:
    demo_dir = tmp_path / "demo"
    done = pbem("demo", "--to", "61", "--quiet", "--dir", str(demo_dir), data_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "Final board" in done.stdout
    assert re.search(r"(Alice|Bob) \d+ — (Alice|Bob) \d+ \((Alice|Bob) wins\)", done.stdout)
    match = re.search(r"replay it:\s+pbem (--data-dir \S+ game replay (\d+) --verify)", done.stdout)
    assert match, done.stdout
    replay = pbem(*match.group(1).split(), data_dir=tmp_path)
    assert replay.returncode == 0, replay.stderr
    assert "verified:" in replay.stdout and "replay exactly" in replay.stdout
    assert (demo_dir / "outbox" / "alice@example.com").is_dir()
    # Its players cut for the deal by mail: every deal checks out.
    fair = re.search(r"check the deals:\s+pbem (--data-dir \S+ verify --game \d+)", done.stdout)
    assert fair, done.stdout
    verified = pbem(*fair.group(1).split(), data_dir=tmp_path)
    assert verified.returncode == 0, verified.stderr
    assert re.fullmatch(r"all \d+ deals verified\n", verified.stdout)


def test_a_second_serve_on_one_sqlite_database_is_refused(tmp_path: Path) -> None:
    assert pbem("init", data_dir=tmp_path).returncode == 0
    environment = {**fresh_env(), "PBEM_DATA_DIR": str(tmp_path), "PBEM_POLL_SECONDS": "0.05"}
    first = start_pbem("serve", env=environment, cwd=tmp_path)
    try:
        lock = tmp_path / "pbem.sqlite.lock"
        deadline = time.monotonic() + 30
        while not (lock.exists() and lock.read_text().strip() == str(first.pid)):
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the first daemon never took the lock"
            time.sleep(0.05)
        second = pbem("serve", "--once", data_dir=tmp_path)
        assert second.returncode == 1
        assert "Traceback" not in second.stderr
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, second.stderr
        assert "another pbem serve is already running" in lines[0]
        assert f"pid {first.pid}" in lines[0]
    finally:
        os.kill(first.pid, signal.SIGINT)
        try:
            first.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            first.kill()
            first.communicate()
    assert first.returncode in (0, -signal.SIGINT)


def test_errors_are_one_line_even_at_80_columns(tmp_path: Path) -> None:
    before = pbem("game", "list", data_dir=tmp_path)
    assert before.returncode == 1
    assert before.stderr.count("\n") == 1 and "pbem init" in before.stderr
    config = tmp_path / "pbem.toml"
    config.write_text('timeout_action = "explode"\n', encoding="utf-8")
    bad = pbem("--config", str(config), "config", data_dir=tmp_path)
    assert bad.returncode == 1
    assert len(bad.stderr.strip()) > 80 and bad.stderr.count("\n") == 1, bad.stderr
    config.unlink()
    assert pbem("init", data_dir=tmp_path).returncode == 0
    twice = pbem("game", "new", "x@y.org", "X@Y.org", data_dir=tmp_path)
    assert twice.returncode == 1
    assert twice.stderr == "error: a player cannot sit twice at one game\n"
    for done in (before, bad, twice):
        assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
