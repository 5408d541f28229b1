"""``pbem players``: the status column (active, stopped, bounced, blocked, away) and
``--status`` filters, through the real command line on both databases, and once as a
process of its own."""

from __future__ import annotations

import re
import subprocess
from datetime import timedelta
from pathlib import Path

from sqlmodel import Session, select

from pbem.store import models as m
from tests.cli_process import PBEM
from tests.e2e.helpers import (
    ALICE,
    BOB,
    CAROL,
    DAVE,
    DOMAIN,
    Harness,
    cli_env,
    fresh_env,
    plain_mail,
    run_cli,
)

A, B, C, D = ALICE[0], BOB[0], CAROL[0], DAVE[0]
SERVICE = f"cribbage@{DOMAIN}"


def rows(listing: str) -> dict[str, str]:
    """Each listed address → its table row."""
    found: dict[str, str] = {}
    for line in listing.splitlines():
        match = re.search(r"[\w.+-]+@[\w.-]+", line)
        if match and "│" in line:
            found[match.group(0)] = line
    return found


def set_up(h: Harness) -> None:
    """Alice active, Bob stopped (by mail), Carol bounced, Dave blocked (by the admin),
    Erin in digest mode."""
    h.new_game([ALICE, BOB])
    h.new_game([CAROL, DAVE, ("erin@example.com", "Erin")])
    # A setting asked by plain mail (a From alone) is held until its mailbox confirms.
    h.deliver(plain_mail(B, SERVICE, "stop"))
    assert h.confirm(B).status == "applied"
    h.deliver(plain_mail("erin@example.com", SERVICE, "digest"))
    assert h.confirm("erin@example.com").status == "applied"
    with Session(h.db) as session:
        for player in session.exec(select(m.Player)).all():
            if player.email == C:
                player.bounce_count, player.last_bounce_reason = 2, "550 no such user"
            session.add(player)
        session.commit()


def test_players_shows_each_status_and_filters(harness: Harness) -> None:
    h = harness
    set_up(h)
    env = cli_env(h.settings.data_dir, h.settings.db_url)
    assert run_cli(env, "player", "block", D).exit_code == 0
    listing = run_cli(env, "players")
    assert listing.exit_code == 0, listing.output
    table = rows(listing.output)
    assert re.search(r"│\s*active\s*│\s*turns", table[A]), table[A]
    assert re.search(r"│\s*stopped\s*│", table[B]), table[B]
    assert re.search(r"│\s*bounced\s*│.*550 no such user", table[C]), table[C]
    assert re.search(r"│\s*blocked\s*│", table[D]), table[D]
    assert re.search(r"│\s*active\s*│\s*digest", table["erin@example.com"])
    stopped = rows(run_cli(env, "players", "--status", "stopped").output)
    assert set(stopped) == {B}
    either = rows(run_cli(env, "players", "--status", "bounced", "--status", "BLOCKED").output)
    assert set(either) == {C, D}
    active = rows(run_cli(env, "players", "--status", "active").output)
    assert set(active) == {A, "erin@example.com"}
    bad = run_cli(env, "players", "--status", "sleeping")
    assert bad.exit_code == 1 and "no status 'sleeping'" in bad.output
    assert "Traceback" not in bad.output


def test_an_away_player_is_listed_away_until_back(harness: Harness) -> None:
    h = harness
    h.new_game([ALICE, BOB])
    h.deliver(plain_mail(A, SERVICE, "away 3 days"))
    assert h.confirm(A).status == "applied"  # a From alone: held until Alice confirms
    with Session(h.db) as session:
        player = session.exec(select(m.Player).where(m.Player.email == A)).one()
        assert player.away_until is not None
        # The command line reads the real clock: put the return in the real future.
        from pbem.service import utcnow

        player.away_until = utcnow() + timedelta(days=3)
        session.add(player)
        session.commit()
    env = cli_env(h.settings.data_dir, h.settings.db_url)
    away = rows(run_cli(env, "players", "--status", "away").output)
    assert set(away) == {A}


def test_players_status_as_a_process_of_its_own(tmp_path: Path) -> None:
    env = {**fresh_env(), "PBEM_DATA_DIR": str(tmp_path), "COLUMNS": "200"}

    def pbem(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*PBEM, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
        )

    assert pbem("init").returncode == 0
    assert pbem("game", "new", "Alice=alice@example.com", "bob@example.org").returncode == 0
    assert pbem("player", "block", "bob@example.org").returncode == 0
    done = pbem("players", "--status", "blocked")
    assert done.returncode == 0, done.stderr
    assert set(rows(done.stdout)) == {"bob@example.org"}
    assert "blocked" in rows(done.stdout)["bob@example.org"]
    wrong = pbem("players", "--status", "gone")
    assert wrong.returncode == 1 and "Traceback" not in wrong.stderr
