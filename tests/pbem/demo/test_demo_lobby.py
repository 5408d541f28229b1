"""``pbem demo --lobby``, as a process of its own: the game is started by mail (a
challenge, its acceptance) through the daemon on SQLite and Maildir, played by email to
the end, and its archive replays."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.cli_process import PBEM
from tests.e2e.helpers import fresh_env


def pbem(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    environment = {**fresh_env(), "PBEM_DATA_DIR": str(data_dir), "COLUMNS": "200"}
    return subprocess.run(
        [*PBEM, *args],
        capture_output=True,
        text=True,
        timeout=240,
        env=environment,
        cwd=data_dir,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_the_lobby_demo_starts_the_game_by_mail_and_plays_it(tmp_path: Path) -> None:
    demo_dir = tmp_path / "demo"
    done = pbem(
        "demo", "--lobby", "--to", "61", "--quiet", "--dir", str(demo_dir), data_dir=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    out = done.stdout
    assert "Alice writes to cribbage@pbem.localhost:  challenge bob@example.com to 61" in out
    assert re.search(r"Bob gets:\s+\[Cribbage\] An invitation to a game by email", out), out
    assert re.search(r"Bob replies to .*cribbage\+\w+@pbem\.localhost.*accept", out), out
    assert "The service starts game 1" in out
    assert re.search(r"(Alice|Bob) \d+ — (Alice|Bob) \d+ \((Alice|Bob) wins\)", out), out
    # What the daemon made of the mail: the challenge, the acceptance, then the moves.
    inbox = pbem("--data-dir", str(demo_dir), "inbox", "list", data_dir=tmp_path)
    assert inbox.returncode == 0, inbox.stderr
    assert "challenge" in inbox.stdout and "accept" in inbox.stdout
    replay = pbem("--data-dir", str(demo_dir), "game", "replay", "1", "--verify", data_dir=tmp_path)
    assert replay.returncode == 0, replay.stderr
    assert "verified:" in replay.stdout
