"""``pbem serve`` as a real program with a TOML configuration pointing at the real Postfix
and Dovecot: it sends the first mails, applies a player's reply that arrives over SMTP, and
stops cleanly — exit status 0, nothing half done — on SIGTERM (systemd) and on SIGINT."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from pbem.store import models as m
from pbem.store.db import make_engine
from tests.cli_process import start_pbem
from tests.e2e.helpers import CliResult, fresh_env, run_cli
from tests.fixtures.mailstack import MailStack
from tests.fixtures.realmail import SQLITE_ONLY, new_player, real_settings

STOP_WITHIN = 15.0


def write_config(path: Path, stack: MailStack, address: str, password: str, db_url: str) -> None:
    """A pbem.toml for the service's mailbox ``address``, as an admin would write it."""
    settings = real_settings(stack, address, password, path.parent / "data", db_url)
    keys = ("data_dir", "database_url", "inbound_url", "outbound_url", "domain", "local_part")
    lines = ["[pbem]"]
    for key in keys:
        value = str(getattr(settings, key)).replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f'{key} = "{value}"')
    lines.append(f"outbox_backoff_seconds = {settings.outbox_backoff_seconds}")
    path.write_text("\n".join(lines) + "\n")


def pbem(config: Path, *args: str) -> CliResult:
    """``pbem --config CONFIG ARGS``, in this process (only ``serve`` runs as a program)."""
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("PBEM_")}
    env["PBEM_FAIR_DEALS"] = "false"  # the tests' default (tests/conftest.py)
    result = run_cli(env, "--config", str(config), *args)
    assert result.exit_code == 0, result.output
    return result


def serve(config: Path) -> subprocess.Popen[str]:
    return start_pbem("--config", str(config), "serve", env=fresh_env(), cwd=config.parent)


def stop(proc: subprocess.Popen[str], how: signal.Signals) -> tuple[float, str, str]:
    """Send ``how``; the seconds until it ended, and its output."""
    assert proc.poll() is None, proc.communicate()
    started = time.monotonic()
    proc.send_signal(how)
    try:
        out, err = proc.communicate(timeout=STOP_WITHIN + 15)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"pbem serve did not stop on {how.name}:\n{err}") from None
    return time.monotonic() - started, out, err


def wait_until(condition: object, proc: subprocess.Popen[str], timeout: float = 30.0) -> None:
    assert callable(condition)
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"pbem serve exited {proc.returncode}:\n{proc.communicate()}")
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def statuses(db: Engine) -> list[str]:
    """What became of each received message, in order."""
    with Session(db) as session:
        rows = session.exec(select(m.Inbound).order_by(col(m.Inbound.id))).all()
        return [r.status for r in rows]


@SQLITE_ONLY
def test_serve_processes_a_reply_and_stops_on_sigterm_and_sigint(
    mailstack: MailStack, db_url: str, tmp_path: Path
) -> None:
    address, password = mailstack.new_user("svc")
    config = tmp_path / "pbem.toml"
    write_config(config, mailstack, address, password, db_url)
    alice = new_player(mailstack, "alice", "Alice")
    bob = new_player(mailstack, "bob", "Bob", seed=1)
    db = make_engine(db_url)
    try:
        pbem(config, "init")
        pbem(
            config,
            "game",
            "new",
            f"Alice={alice.address}",
            f"Bob={bob.address}",
            "--to",
            "61",
            "--seed",
            "serve",
        )
        # Bob is told of every move (one discard alone is otherwise news to nobody).
        pbem(config, "players", "--mail-all", bob.address)

        # SIGTERM, as systemd stops the service.
        proc = serve(config)
        try:
            alice.wait_for(1, timeout=30)
            bob.wait_for(1, timeout=30)
            alice.answer()
            wait_until(lambda: statuses(db) == ["applied"], proc)
            bob.wait_for(2, timeout=30)  # Alice's discard, told to Bob
            seconds, _out, err = stop(proc, signal.SIGTERM)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 0, err
        assert "Traceback" not in err
        assert "INFO pbem.serve: stopped" in err
        assert seconds < STOP_WITHIN, seconds

        # SIGINT (Ctrl-C), with a reply waiting to be read when it starts.
        bob.answer()
        proc = serve(config)
        try:
            wait_until(lambda: statuses(db) == ["applied", "applied"], proc)
            seconds, _out, err = stop(proc, signal.SIGINT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 0, err
        assert "Traceback" not in err
        assert seconds < STOP_WITHIN, seconds

        # Nothing was left half done, and the next daemon starts (the lock was let go).
        pbem(config, "serve", "--once")
        assert statuses(db) == ["applied", "applied"]
        with Session(db) as session:
            outbox = session.exec(select(m.Outbox)).all()
            assert outbox and all(row.status == "sent" for row in outbox)
    finally:
        db.dispose()
        alice.close()
        bob.close()


@SQLITE_ONLY
def test_a_signal_stops_a_wait_at_once(mailstack: MailStack, db_url: str, tmp_path: Path) -> None:
    """A signal arriving while the daemon idles in IMAP IDLE ends the wait at once (it
    wakes the wait, which selects on a stop pipe beside the IDLE socket)."""
    address, password = mailstack.new_user("svc")
    config = tmp_path / "pbem.toml"
    write_config(config, mailstack, address, password, db_url)
    alice = new_player(mailstack, "alice", "Alice")
    try:
        pbem(config, "init")
        pbem(config, "game", "new", alice.address, "--computer", "--to", "61")
        proc = serve(config)
        try:
            alice.wait_for(1, timeout=30)
            time.sleep(1.0)  # sent, nothing more to do: waiting in IDLE
            seconds, _out, err = stop(proc, signal.SIGINT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 0, err
        assert "Traceback" not in err and "INFO pbem.serve: stopped" in err
        assert seconds < 3.0, seconds
    finally:
        alice.close()
