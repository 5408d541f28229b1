"""``pbem serve`` as a real process on the real mail stack, and what to check afterwards.

- :func:`service_config` writes the TOML file a production install would have: the
  service's own Dovecot mailbox read over IMAP (IDLE), Postfix over SMTP with AUTH, a
  SQLite file or a PostgreSQL URL, reminders and timeouts off, quick outbox retries.
- :class:`ServeProcess` starts ``python -m pbem.cli --config FILE serve``, knows when it
  is up (on SQLite the daemon writes its pid into the lock file beside the database), and
  ends it with SIGKILL (a crash: no ``finally`` runs) or SIGINT (a clean stop).
- :func:`postfix`/:func:`flush_postfix_queue` stop and start Postfix without the stack
  script (which empties the queue on start), and ask Postfix to retry deferred mail now
  (after Dovecot was away, Postfix would otherwise wait its minimal backoff of minutes).
- The checks: :func:`action_logs`, :func:`inbound_statuses`, :func:`duplicate_ids`,
  :func:`in_flight_rows`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlmodel import Session, col, select

from pbem.store import models as m
from pbem.store.outbox import IN_FLIGHT
from tests.e2e.realstack_players import LogEntry, message_ids
from tests.fixtures.mailstack import MailStack, read_messages

REPO = Path(__file__).resolve().parents[2]


def service_config(
    path: Path,
    stack: MailStack,
    address: str,
    password: str,
    db_url: str,
    **overrides: Any,
) -> Path:
    """Write ``path``: the service ``address`` on ``stack`` with database ``db_url``."""
    local, domain = address.split("@", 1)
    values: dict[str, Any] = {
        "data_dir": str(path.parent / "data"),
        "database_url": db_url,
        "inbound_url": stack.imap_url(address, password),
        "outbound_url": stack.smtp_url(address, password),
        "domain": domain,
        "local_part": local,
        "reminder_hours": 0,
        "timeout_days": 0,
        "outbox_backoff_seconds": 0.5,
        "outbox_max_attempts": 40,
        "poll_seconds": 5,
        "max_per_sender_per_hour": 10_000,
    }
    values.update(overrides)
    lines = ["[pbem]"]
    for key, value in values.items():
        # JSON strings and numbers are TOML basic strings and numbers.
        lines.append(f"{key} = {json.dumps(value)}")
    path.write_text("\n".join(lines) + "\n")
    return path


@dataclass
class ServeProcess:
    """One ``pbem serve`` process (started again after each kill)."""

    config: Path
    log_path: Path
    db_url: str
    python_args: tuple[str, ...] = ()  # before "-m pbem.cli", e.g. a profiler's
    env: dict[str, str] = field(default_factory=dict)  # added to the environment
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0
    kills: int = 0
    _log: TextIO | None = field(default=None, repr=False)

    @property
    def lock_file(self) -> Path | None:
        url = make_url(self.db_url)
        if not url.get_backend_name().startswith("sqlite") or not url.database:
            return None
        return Path(url.database + ".lock")

    def start(self) -> None:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        if self._log is None:
            self._log = self.log_path.open("a")
        self._log.write(f"--- start {self.starts + 1} at {time.time():.3f}\n")
        self._log.flush()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
        env.update(self.env)
        self.proc = subprocess.Popen(
            [*self.command(), "serve"],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.starts += 1

    def command(self) -> list[str]:
        """``python [python_args] -m pbem.cli --config FILE`` (add the subcommand)."""
        return [sys.executable, *self.python_args, "-m", "pbem.cli", "--config", str(self.config)]

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_up(self, timeout: float = 30.0, ready: Callable[[], bool] | None = None) -> None:
        """Until the daemon runs its loop: ``ready()`` holds, or (SQLite) its pid is in the
        lock file."""
        lock = self.lock_file
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running():
                raise AssertionError(f"pbem serve exited early: {self.tail()}")
            if ready is not None:
                if ready():
                    return
                time.sleep(0.02)
                continue
            if lock is None:
                return
            try:
                if lock.read_text().strip() == str(self.pid):
                    return
            except FileNotFoundError:
                pass
            time.sleep(0.01)
        raise AssertionError(f"pbem serve did not come up in {timeout} s: {self.tail()}")

    def kill(self) -> None:
        """SIGKILL: the daemon dies wherever it is, as in a power cut."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.kills += 1

    def stop(self, timeout: float = 30.0) -> int:
        """SIGINT (a clean stop); SIGKILL if it does not end within ``timeout``."""
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        return self.proc.returncode

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        if self._log is not None:
            self._log.close()
            self._log = None

    def tail(self, lines: int = 30) -> str:
        if self._log is not None:
            self._log.flush()
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


# -- Postfix ----------------------------------------------------------------------------


def postfix_running() -> bool:
    return subprocess.run(["postfix", "status"], capture_output=True, check=False).returncode == 0


def postfix(command: str) -> None:
    """``postfix stop`` or ``postfix start`` (the queue is kept, unlike the stack script's
    start, which empties it). Stopping a stopped Postfix, or starting a running one (say,
    another test session's fixture started it meanwhile), is not an error."""
    if (command == "start") == postfix_running():
        return
    done = subprocess.run(
        ["postfix", command], capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0 and (command == "start") != postfix_running():
        raise AssertionError(f"postfix {command} failed: {done.stderr or done.stdout}")


def flush_postfix_queue() -> None:
    """Ask Postfix to deliver deferred mail now (``postqueue -f``)."""
    subprocess.run(["postqueue", "-f"], capture_output=True, timeout=60, check=False)


def heal_postfix(stack: MailStack) -> None:
    """After Dovecot restarted: Postfix's smtpd fails to start while Dovecot's SASL socket
    is away ("no SASL authentication mechanisms"), and Postfix then stops starting smtpd
    for a minute; a reload, as an operator would do, lets it start them again at once."""
    for _ in range(3):
        try:
            wait_smtp(stack, timeout=3.0 if _ == 0 else 10.0)
            return
        except OSError:
            subprocess.run(["postfix", "reload"], capture_output=True, timeout=60, check=False)
    # Still no banner (another test session may be restarting the servers too): the
    # players and the daemon retry on their own, and the checks at the end will tell.


def wait_smtp(stack: MailStack, timeout: float = 30.0) -> None:
    """Until Postfix answers on its SMTP port."""
    import smtplib

    deadline = time.monotonic() + timeout
    while True:
        try:
            with smtplib.SMTP(stack.smtp_host, stack.smtp_port, timeout=2) as smtp:
                smtp.noop()
            return
        except (OSError, smtplib.SMTPException):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


# -- checks -----------------------------------------------------------------------------


def action_logs(db: Engine, game_ids: Iterable[int]) -> dict[int, list[LogEntry]]:
    """Each game's action log, in seq order; asserts seq runs 0, 1, 2, … without a gap."""
    out: dict[int, list[LogEntry]] = {}
    with Session(db) as session:
        for game_id in game_ids:
            rows = session.exec(
                select(m.ActionLog)
                .where(m.ActionLog.game_id == game_id)
                .order_by(col(m.ActionLog.seq))
            ).all()
            seqs = [row.seq for row in rows]
            assert seqs == list(range(len(rows))), f"game {game_id}: seq not contiguous: {seqs}"
            out[game_id] = [(row.seat, row.action, row.auto) for row in rows]
    return out


def moves_applied_once(db: Engine) -> None:
    """Every player move (not automatic) came from a different inbound message."""
    with Session(db) as session:
        sources = session.exec(
            select(m.ActionLog.inbound_id).where(col(m.ActionLog.auto).is_(False))
        ).all()
    twice = [key for key, n in Counter(sources).items() if n > 1]
    assert not twice, f"inbound messages applied more than once: {twice}"


def inbound_statuses(db: Engine) -> dict[str, str]:
    """Message key → status of every inbound message."""
    with Session(db) as session:
        return {row.message_key: row.status for row in session.exec(select(m.Inbound)).all()}


def outbox_rows(db: Engine) -> list[m.Outbox]:
    with Session(db) as session:
        return list(session.exec(select(m.Outbox).order_by(col(m.Outbox.id))).all())


def in_flight_rows(db: Engine) -> set[str]:
    """Message-IDs of outbox rows a crash left in flight (the server may have them)."""
    with Session(db) as session:
        rows = session.exec(
            select(m.Outbox).where(m.Outbox.status == m.OutboxStatus.SENDING.value)
        ).all()
    return {row.message_id for row in rows if (row.last_error or "").startswith(IN_FLIGHT)}


def mailbox_ids(stack: MailStack, address: str, password: str) -> list[str]:
    """The Message-ID of every message in a mailbox, in arrival order."""
    return message_ids(read_messages(stack, address, password))


def duplicate_ids(ids: Iterable[str]) -> dict[str, int]:
    return {key: n for key, n in Counter(ids).items() if n > 1}
