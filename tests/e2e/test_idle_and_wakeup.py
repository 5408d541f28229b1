"""A waiting daemon is quiet and quick: it stays in IMAP IDLE while nothing happens (no
SELECT, no SEARCH, on the real Dovecot), wakes at once when mail arrives, and sends mail
the command line queued at once instead of at its next poll (SQLite: the wake-up FIFO;
PostgreSQL: LISTEN/NOTIFY)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from sqlalchemy import Engine
from sqlmodel import select

from pbem.config import Settings
from pbem.run.runtime import build_daemon
from pbem.run.wakeup import poke
from pbem.service import Service, utcnow
from pbem.store import models as m
from pbem.store.db import make_engine, session_scope
from tests.cli_process import PBEM, start_pbem
from tests.e2e.helpers import Clock, fresh_env, make_settings, plain_mail, read_maildir
from tests.fixtures.mailstack import MailStack, send_raw


def _until(check: Callable[[], bool], timeout: float) -> float:
    """Seconds until ``check()`` holds; fails after ``timeout``."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < timeout, "timed out"
        time.sleep(0.02)
    return time.monotonic() - start


def test_the_daemon_stays_in_idle_and_wakes_when_mail_arrives(
    tmp_path: Path, db_url: str, db_engine: Engine, mailstack: MailStack
) -> None:
    address, password = mailstack.new_user("service")
    settings = make_settings(
        tmp_path,
        db_url,
        domain=mailstack.domain,
        local_part=address.split("@")[0],
        inbound_url=mailstack.imap_url(address, password),
        outbound_url=f"maildir:{tmp_path / 'out'}",
        poll_seconds=1.0,  # the old loop left IDLE this often
        reminder_hours=24,
    )
    daemon = build_daemon(settings, db_engine)
    inbox = daemon.inbox
    inbox.connect()  # type: ignore[attr-defined]
    imap = inbox._client._imap  # type: ignore[attr-defined]
    sent: list[bytes] = []
    real_send = imap.send

    def counting_send(data: bytes) -> None:
        sent.append(bytes(data))
        real_send(data)

    imap.send = counting_send
    runner = threading.Thread(target=daemon.run, daemon=True)
    runner.start()
    try:
        _until(lambda: any(b"IDLE" in line for line in sent), 10)
        sent.clear()
        time.sleep(5)  # five poll intervals of nothing
        assert sent == []  # not a command: no DONE, SELECT, SEARCH or IDLE again

        send_raw(
            mailstack,
            "stranger@example.org",
            [address],
            plain_mail("stranger@example.org", address, "hello"),
        )

        def stored() -> bool:
            with session_scope(db_engine) as session:
                return len(session.exec(select(m.Inbound)).all()) == 1

        assert _until(stored, 10) < 5
        commands = b"".join(sent)
        assert b"DONE" in commands and b"SEARCH" in commands  # woken, it read the inbox
    finally:
        daemon.stop()
        runner.join(10)
    assert not runner.is_alive()  # stop ended the wait at once


def test_the_next_timer_bounds_the_wait(tmp_path: Path, db_url: str, db_engine: Engine) -> None:
    settings = make_settings(tmp_path, db_url, poll_seconds=600, reminder_hours=24)
    daemon = build_daemon(settings, db_engine)
    daemon.wakeup.open()  # (as run does)
    try:
        svc = daemon.service
        svc.new_game([("a@example.com", None), ("b@example.com", None)], seed="timer")
        assert daemon._wait_seconds(600) == 0.05  # the first mails are due now
        daemon.step()  # sends them
        assert daemon._wait_seconds(600) == 600  # the reminder is a day away
        with session_scope(db_engine) as session:
            game = session.exec(select(m.Game)).one()
            game.next_reminder_at = utcnow() + timedelta(seconds=3)
            session.add(game)
        # Known, not asked before every wait: what changes the clocks tells the daemon
        # (its own steps; the command line's wake-up).
        assert daemon._wait_seconds(600) == 600
        assert poke(db_engine)
        daemon.wakeup.wait(5)
        daemon._wait()  # the wake-up ends the wait at once, and the dues are asked again
        assert 1 < daemon._wait_seconds(600) <= 3
    finally:
        daemon.close()


def test_an_idle_step_drains_nothing_and_runs_no_timer_until_one_is_due(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    settings = make_settings(tmp_path, db_url, reminder_hours=1)
    clock = Clock()
    daemon = build_daemon(settings, db_engine, clock=clock)
    calls: list[str] = []
    drain, run_timers = daemon.sender.drain, daemon.service.run_timers

    def counted_drain(max_batches: int = 100) -> int:
        calls.append("drain")
        return drain(max_batches)

    def counted_timers() -> int:
        calls.append("timers")
        return run_timers()

    daemon.sender.drain = counted_drain  # type: ignore[method-assign]
    daemon.service.run_timers = counted_timers  # type: ignore[method-assign]
    try:
        daemon.service.new_game([("a@example.com", None), ("b@example.com", None)], seed="i")
        assert daemon.step().sent == 2  # a step asks afresh: the first mails are due
        calls.clear()
        for _ in range(3):
            stats = daemon._step(True)  # as the loop steps: what is due is known
            assert not stats.busy
        assert calls == []  # nothing due: no drain that cannot claim, no timers
        clock.advance(timedelta(hours=1, seconds=1))
        stats = daemon._step(True)
        assert stats.timers == 1 and stats.sent == 2  # the reminders, on time
        assert calls == ["timers", "drain"]
    finally:
        daemon.close()


def test_game_new_reaches_a_running_serve_at_once(tmp_path: Path, db_url: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    env = {
        **fresh_env(),
        "PBEM_DATA_DIR": str(data),
        "PBEM_DATABASE_URL": db_url,
        "PBEM_POLL_SECONDS": "60",
    }

    def pbem(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*PBEM, *args],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            cwd=tmp_path,
            check=False,
        )

    assert pbem("init").returncode == 0
    daemon = start_pbem("serve", env=env, cwd=tmp_path)
    try:
        assert daemon.stderr is not None
        assert "serving" in daemon.stderr.readline()
        time.sleep(1.0)  # waiting now, its next poll a minute away
        started = time.monotonic()
        made = pbem("game", "new", "alice@example.com", "bob@example.com")
        assert made.returncode == 0, made.stderr
        alice = data / "outbox" / "alice@example.com"
        _until(lambda: alice.is_dir() and len(read_maildir(alice)) == 1, 10)
        assert time.monotonic() - started < 5
        assert pbem("outbox", "retry").returncode == 0  # nothing failed: a no-op
        assert pbem("game", "resend", "1").returncode == 0
        _until(lambda: len(read_maildir(alice)) == 2, 5)
        if db_url.startswith("postgresql"):
            # Mail queued without the command line's poke: the outbox trigger's NOTIFY,
            # sent in the transaction that queued it, wakes the daemon.
            engine = make_engine(db_url)
            try:
                Service(Settings(data_dir=data, database_url=db_url), engine).resend(1)
            finally:
                engine.dispose()
            _until(lambda: len(read_maildir(alice)) == 3, 5)
        os.kill(daemon.pid, signal.SIGTERM)
        _, rest = daemon.communicate(timeout=20)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.communicate()
    assert daemon.returncode == 0, rest
