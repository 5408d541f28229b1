"""``pbem status``: healthy (exit 0) with a daemon running and nothing wrong; exit 1 naming
each thing that needs attention; the same as JSON. On both databases, with a real
``pbem serve`` running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, update
from sqlmodel import Session, col

from pbem.service import utcnow
from pbem.store import models as m
from pbem.store.health import INBOX, OUTBOX, record_transport_error, record_transport_ok
from pbem.store.players import record_bounce
from tests.cli_process import start_pbem
from tests.e2e.helpers import CliResult, cli_env, fresh_env, run_cli


def _status(env: dict[str, str | None]) -> tuple[CliResult, dict[str, Any]]:
    """``pbem status`` and ``pbem status --json``, which must agree. They are two runs:
    a daemon that takes the inbox reader's lock between them (it does so once it has
    logged that it serves) changes the answer, so a pair that differs is asked again."""
    for _ in range(3):
        text = run_cli(env, "status")
        as_json = run_cli(env, "status", "--json")
        assert "Traceback" not in text.output + as_json.output
        if as_json.exit_code == text.exit_code:
            break
        time.sleep(0.2)
    assert as_json.exit_code == text.exit_code, (text.output, as_json.output)
    return text, json.loads(as_json.stdout)


def _start_serve(tmp_path: Path, db_url: str) -> subprocess.Popen[str]:
    env = {
        **fresh_env(),
        "PBEM_DATA_DIR": str(tmp_path),
        "PBEM_DATABASE_URL": db_url,
        "PBEM_DOMAIN": "pbem.test",
        "PBEM_POLL_SECONDS": "60",
    }
    proc = start_pbem("serve", env=env, cwd=tmp_path)
    assert proc.stderr is not None
    assert "serving" in proc.stderr.readline()
    return proc


def _stop_serve(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


def test_status_healthy_and_what_needs_attention(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    env = cli_env(tmp_path, db_url)
    text, data = _status(env)
    assert text.exit_code == 1
    assert data["daemon_running"] is False and data["healthy"] is False
    assert "daemon: NOT RUNNING" in text.stdout
    assert "! no daemon is running" in text.stdout

    assert run_cli(env, "game", "new", "alice@example.com", "bob@example.com").exit_code == 0
    proc = _start_serve(tmp_path, db_url)
    try:
        deadline = time.monotonic() + 15
        while True:
            text, data = _status(env)
            if data["healthy"] and data["outbox_queued"] == 0:
                break
            assert time.monotonic() < deadline, text.output
            time.sleep(0.2)
        assert text.exit_code == 0
        assert text.stdout.startswith("status: healthy")
        assert "daemon: running" in text.stdout and "!" not in text.stdout
        assert data["problems"] == [] and data["outbox_failed"] == 0

        # Things that need attention: each makes the status 1 and is named.
        now = utcnow()
        with Session(db_engine) as session:
            session.exec(update(m.Outbox).where(col(m.Outbox.id) == 1).values(status="failed"))
            assert record_bounce(session, "bob@example.com", "550 no such user", now=now)
            session.exec(update(m.Game).values(last_move_at=now - timedelta(days=3)))
            session.commit()
        record_transport_error(db_engine, OUTBOX, "connection refused by mx", now=now)
        text, data = _status(env)
        assert text.exit_code == 1
        assert data["outbox_failed"] == 1
        assert data["bounced_players"][0]["email"] == "bob@example.com"
        assert data["stalled_games"] == [1]
        [outbox] = data["transports"]
        assert outbox["failing"] and outbox["last_error"] == "connection refused by mx"
        problems = "\n".join(data["problems"])
        assert "1 outgoing messages failed" in problems
        assert "the outbox transport is failing: connection refused by mx" in problems
        assert "bounce" not in problems and "stalled" not in problems  # listed, not problems
        assert "! 1 outgoing messages failed" in text.stdout
        assert "bounced players: 1: bob@example.com (1)" in text.stdout
        assert "stalled games: 1: 1" in text.stdout

        # Put right, it is healthy again; an inbox error then its recovery also count.
        with Session(db_engine) as session:
            session.exec(update(m.Outbox).where(col(m.Outbox.id) == 1).values(status="sent"))
            session.commit()
        record_transport_ok(db_engine, OUTBOX, now=utcnow())
        record_transport_error(db_engine, INBOX, "IMAP login refused", now=utcnow())
        text, data = _status(env)
        assert data["problems"] == ["the inbox transport is failing: IMAP login refused"]
        record_transport_ok(db_engine, INBOX, now=utcnow())
        text, data = _status(env)
        assert text.exit_code == 0 and data["healthy"], text.output
    finally:
        _stop_serve(proc)
    text, data = _status(env)
    assert text.exit_code == 1 and not data["daemon_running"]


def test_late_and_failed_inbox_messages_need_attention(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    env = cli_env(tmp_path, db_url)
    now = utcnow()
    with Session(db_engine) as session:
        for key, status, age in (("a", "pending", 10), ("b", "failed", 60), ("c", "failed", 3000)):
            session.add(
                m.Inbound(
                    message_key=key,
                    source="test",
                    received_at=now - timedelta(minutes=age),
                    processed_at=None if status == "pending" else now - timedelta(minutes=age),
                    status=status,
                    reason="boom" if status == "failed" else None,
                )
            )
        session.commit()
    text, data = _status(env)
    assert text.exit_code == 1
    assert data["inbox_pending"] == 1 and data["inbox_failed"] == 2
    assert data["inbox_failed_recently"] == 1  # the one of two days ago is old news
    assert 590 < data["inbox_oldest_pending_seconds"] < 700
    problems = data["problems"]
    assert any("1 received messages wait to be processed" in p for p in problems)
    assert any("1 received messages failed in the last" in p for p in problems)


def test_the_daemon_records_transport_errors_for_status(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    """An inbox that cannot be reached and an SMTP server that refuses connections (nothing
    listens on port 1) are recorded, and pbem status names them."""
    import threading

    from pbem.run.runtime import build_daemon
    from pbem.store.db import session_scope
    from pbem.store.health import transport_states
    from tests.e2e.helpers import make_settings

    settings = make_settings(
        tmp_path,
        db_url,
        inbound_url="imap://svc:secret@127.0.0.1:1/INBOX?tls=none&timeout=2",
        outbound_url="smtp://127.0.0.1:1?tls=none&timeout=2",
    )
    daemon = build_daemon(settings, db_engine)
    daemon.service.new_game([("a@example.com", None), ("b@example.com", None)], seed="t")
    daemon.sender.drain()  # the SMTP server is not there: a temporary failure
    runner = threading.Thread(target=daemon.run, daemon=True)
    runner.start()
    try:
        deadline = time.monotonic() + 20
        while True:
            with session_scope(db_engine) as session:
                names = {t.name: t for t in transport_states(session) if t.last_error}
            if INBOX in names:
                break
            assert time.monotonic() < deadline, "the inbox error was never recorded"
            time.sleep(0.1)
    finally:
        daemon.stop()
        runner.join(15)
    assert OUTBOX in names and "127.0.0.1" in (names[OUTBOX].last_error or "")
    assert "secret" not in (names[INBOX].last_error or "")  # the URL's password masked
    _, data = _status(cli_env(tmp_path, db_url))
    failing = {t["name"] for t in data["transports"] if t["failing"]}
    assert failing == {INBOX, OUTBOX}
