"""Several workers on the real servers: two ``pbem serve`` processes on one PostgreSQL
database share 50 concurrent games to 61, played by IMAP/SMTP players (random and good).

- Exactly one worker reads the inbox at any moment: the holder of the session advisory
  lock, sampled from ``pg_locks`` throughout the run (each worker names its connections
  with ``application_name``).
- The reader is killed with SIGKILL, twice: the other worker holds the lock within
  seconds, takes over the dead one's outbox rows, and the games go on; the killed worker
  is started again, as a supervisor would.
- Afterwards each game's action log runs seq 0, 1, 2, … and equals the fault-free
  reference; no move was applied twice; every inbound message ended in a final state;
  every mail reached its recipient and no mailbox holds a Message-ID twice (but those
  of the one batch a kill may have left in flight, as in ``test_crash_real_stack``).

And with SQLite, a second ``pbem serve`` is refused with one clear line and exit code 1,
while the first goes on.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url
from sqlmodel import Session

from engine import Settings as GameSettings
from pbem.config import load_settings
from pbem.service import Service
from pbem.store import models as m
from tests.e2e.realstack_daemon import (
    REPO,
    ServeProcess,
    action_logs,
    duplicate_ids,
    in_flight_rows,
    inbound_statuses,
    mailbox_ids,
    moves_applied_once,
    outbox_rows,
    service_config,
)
from tests.e2e.realstack_players import (
    ImapPlayer,
    LogEntry,
    PlayerPool,
    mail_every_move,
    reference_log,
)
from tests.fixtures.mailstack import MailStack

GAMES = 50
PLAYERS = 20  # each plays 5 games at once
TARGET = 61
KILL_AT = (0.25, 0.6)  # kill the reader when this share of the expected actions is logged
TAKEOVER_WITHIN = 5.0
FINISH_TIMEOUT = 240.0

pytestmark = [pytest.mark.slow, pytest.mark.mailstack]

POSTGRES_ONLY = pytest.mark.parametrize(
    "db_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
SQLITE_ONLY = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


def _with_name(db_url: str, name: str) -> str:
    url = make_url(db_url).update_query_dict({"application_name": name})
    return url.render_as_string(hide_password=False)


def readers(db: Engine, key: int) -> list[str]:
    """The application names of the connections holding the inbox reader lock."""
    with db.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a"
                " ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted"
                " AND l.classid = 0 AND l.objid = :key AND l.objsubid = 1"
            ),
            {"key": key},
        ).all()
    return sorted(str(row[0]) for row in rows)


def connected(db: Engine, name: str) -> bool:
    with db.connect() as connection:
        found = connection.execute(
            text("SELECT count(*) FROM pg_stat_activity WHERE application_name = :n"),
            {"n": name},
        ).scalar()
    return bool(found)


def logged(db: Engine) -> int:
    with db.connect() as connection:
        return int(connection.execute(text("SELECT count(*) FROM action_log")).scalar() or 0)


def cpu_seconds(pid: int) -> float:
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@POSTGRES_ONLY
def test_two_workers_share_fifty_games_and_survive_the_reader_killed(
    mailstack: MailStack, tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    stack = mailstack
    address, password = stack.new_user("workers-svc")
    names = ("pbem-a", "pbem-b")
    configs = [
        service_config(
            tmp_path / f"{name}.toml", stack, address, password, _with_name(db_url, name)
        )
        for name in names
    ]
    settings = load_settings(configs[0])
    key = zlib.crc32(settings.inbound.encode()) & 0x7FFFFFFF
    service = Service(settings, db_engine)

    players = []
    for i in range(PLAYERS):
        who, secret = stack.new_user(f"workers-p{i}")
        players.append(
            ImapPlayer(who, secret, f"W{i}", stack.domain, stack.imap_host, stack.imap_port)
        )
    games: dict[int, list[ImapPlayer]] = {}
    expected: dict[int, list[LogEntry]] = {}
    for g in range(GAMES):
        pair = [players[g % PLAYERS], players[(g + 1 + g // PLAYERS) % PLAYERS]]
        seed = f"workers-{g}"
        game_id = service.new_game([(p.address, p.name) for p in pair], target=TARGET, seed=seed)
        mail_every_move(db_engine, [p.address for p in pair])
        level = "random" if g % 2 else "good"
        for p in pair:
            p.levels[game_id] = level
        games[game_id] = pair
        with Session(db_engine) as session:
            row = session.get(m.Game, game_id)
            assert row is not None
            game_settings = GameSettings.from_json(row.settings)
        expected[game_id] = reference_log(game_settings, seed, [p.identity for p in pair], level)
    total = sum(len(log) for log in expected.values())

    workers = {
        name: ServeProcess(config, tmp_path / f"{name}.log", db_url)
        for name, config in zip(names, configs, strict=True)
    }
    samples: list[list[str]] = []
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.is_set():
            samples.append(readers(db_engine, key))
            sampling.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    pool = PlayerPool(players, smtp_host=stack.smtp_host, smtp_port=stack.smtp_port, threads=4)
    takeovers: list[float] = []
    in_doubt: set[str] = set()
    cpu: dict[str, float] = dict.fromkeys(names, 0.0)
    try:
        first = workers[names[0]]
        first.start()
        first.wait_up(ready=lambda: readers(db_engine, key) == [names[0]])
        second = workers[names[1]]
        second.start()
        second.wait_up(ready=lambda: connected(db_engine, names[1]))
        sampler.start()
        pool.start()
        for share in KILL_AT:
            deadline = time.monotonic() + FINISH_TIMEOUT
            while logged(db_engine) < share * total:
                assert time.monotonic() < deadline, "the games stopped moving"
                time.sleep(0.2)
            [reader] = readers(db_engine, key)
            other = next(n for n in names if n != reader)
            cpu[reader] += cpu_seconds(workers[reader].pid)
            workers[reader].kill()
            in_doubt |= in_flight_rows(db_engine)
            killed_at = time.monotonic()
            while readers(db_engine, key) != [other]:
                assert time.monotonic() - killed_at < TAKEOVER_WITHIN, "nobody took over"
                time.sleep(0.05)
            takeovers.append(time.monotonic() - killed_at)
            workers[reader].start()  # as a supervisor would
            workers[reader].wait_up(ready=lambda: connected(db_engine, reader))  # noqa: B023
        deadline = time.monotonic() + FINISH_TIMEOUT
        while not all(g in p.games_over for g, pair in games.items() for p in pair):
            assert time.monotonic() < deadline, f"games unfinished; {logged(db_engine)}/{total}"
            time.sleep(0.5)
        while not all(r.status == "sent" for r in outbox_rows(db_engine)):
            assert time.monotonic() < deadline + 30, "the outbox did not empty"
            time.sleep(0.2)
        for name, worker in workers.items():
            cpu[name] += cpu_seconds(worker.pid)
            assert worker.stop() == 0, worker.tail()
    finally:
        sampling.set()
        pool.stop()
        for worker in workers.values():
            worker.close()

    print(
        f"\nreader takeovers after a kill: {[round(t, 2) for t in takeovers]} s; "
        f"{len(samples)} samples of the reader lock; worker CPU seconds: "
        f"{ {k: round(v, 1) for k, v in cpu.items()} }; in flight at a kill: {len(in_doubt)}"
    )
    assert all(len(holders) <= 1 for holders in samples), "two readers at once"
    assert sum(len(holders) == 1 for holders in samples) >= 0.9 * len(samples)
    assert all(t < TAKEOVER_WITHIN for t in takeovers)
    assert all(cpu[name] > 1.0 for name in names), f"a worker did no work: {cpu}"

    logs = action_logs(db_engine, games)  # seq 0, 1, 2, … in every game
    for game_id, log in logs.items():
        assert log == expected[game_id], f"game {game_id} differs from the reference"
    moves_applied_once(db_engine)
    statuses = inbound_statuses(db_engine)
    assert set(statuses.values()) <= {"applied", "rejected", "ignored"}
    replies = {move.message_id for p in players for move in p.moves}
    assert replies <= set(statuses) and all(statuses[r] == "applied" for r in replies)

    sent_to: dict[str, set[str]] = {}
    for mail in outbox_rows(db_engine):
        sent_to.setdefault(mail.recipient, set()).add(mail.message_id)
    for p in players:
        ids = mailbox_ids(stack, p.address, p.password)
        assert set(ids) == sent_to[p.address]
        twice = duplicate_ids(ids)
        unexplained = {k: n for k, n in twice.items() if k not in in_doubt or n > 2}
        assert not unexplained, f"{p.address} holds these Message-IDs more than once: {twice}"


@SQLITE_ONLY
def test_a_second_serve_on_one_sqlite_database_is_refused_and_the_first_goes_on(
    mailstack: MailStack, tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    address, password = mailstack.new_user("single-svc")
    config = service_config(tmp_path / "pbem.toml", mailstack, address, password, db_url)
    first = ServeProcess(config, tmp_path / "first.log", db_url)
    first.start()
    try:
        first.wait_up()
        second = subprocess.run(
            [sys.executable, "-m", "pbem.cli", "--config", str(config), "serve"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert second.returncode == 1
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, second.stderr
        assert "another pbem serve is already running on this SQLite database" in lines[0]
        assert f"pid {first.pid}" in lines[0]
        assert "Traceback" not in second.stderr + second.stdout
        assert first.running()
        lock = first.lock_file
        assert lock is not None and lock.read_text().strip() == str(first.pid)
        assert first.stop() == 0
    finally:
        first.close()
