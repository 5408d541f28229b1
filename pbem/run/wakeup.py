"""Waking a running daemon at once when the command line queued work for it.

A daemon waits for mail (IMAP IDLE, or a Maildir poll) and for its next timer or outbox
retry. Mail the command line queues (``pbem game new``, ``game resend``, ``outbox retry``,
…) would otherwise wait for that; instead the daemon also listens here, and the command
line pokes it after its commit:

- PostgreSQL: ``LISTEN pbem_wake`` on a connection of the daemon's own. A trigger on the
  outbox (migration 0004) sends ``NOTIFY pbem_wake`` in the very transaction that queues
  mail or makes it due again, so the notification arrives exactly when that commits;
  :func:`poke` sends one for changes that queue nothing (a resumed game's clocks).

  A worker wakes only for work it can take. The trigger's notification from a
  transaction of a ``pbem serve`` worker (its connections are named `SERVE_NAME`) is
  that worker's own mail, which it sends itself right after: every worker lets it pass
  (whose it is, is asked of ``pg_stat_activity`` once for each connection, and kept for
  `NAMES_KEPT` seconds). An LMTP listener's notification says it stored mail that its
  own loop, busy, has not taken yet (`inbound_poke`): the other workers wake for it,
  its own loop does not (its listener woke it already). Anything else wakes everyone.
- SQLite: a FIFO beside the database (``pbem.sqlite.wake``), opened by the daemon for
  reading and writing (so it never sees end-of-file); :func:`poke` writes a byte to it
  if a daemon has it open, and does nothing otherwise.

Both are file descriptors the daemon's wait selects on together with the inbox.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from pbem.transport.readable import readable

log = logging.getLogger("pbem.wakeup")

CHANNEL = "pbem_wake"

SERVE_NAME = "pbem serve"
"""The ``application_name`` of a ``pbem serve`` worker's connections (unless its database
URL names them otherwise)."""

WAKE = "wake"
"""The payload of a plain poke: every worker wakes."""

NAMES_KEPT = 60.0
"""Seconds a connection's name, once asked, is taken as known."""

_INBOUND = "inbound "


def inbound_poke(worker: str) -> str:
    """The payload saying that ``worker``'s listener stored mail its loop has not taken."""
    return _INBOUND + worker


def fifo_path(db_url: str) -> Path | None:
    """The wake-up FIFO of a SQLite database; None for a server database."""
    url = make_url(db_url)
    if not url.get_backend_name().startswith("sqlite") or not url.database:
        return None
    return Path(url.database + ".wake")


def poke(db: Engine, payload: str = WAKE) -> bool:
    """Wake the daemon of ``db`` if one runs; True if the poke went somewhere (SQLite) or
    was sent (PostgreSQL, with ``payload``). Never raises: a daemon that is not running
    needs no wake-up."""
    try:
        if db.dialect.name == "postgresql":
            with db.begin() as connection:
                connection.execute(text("SELECT pg_notify(:c, :p)"), {"c": CHANNEL, "p": payload})
            return True
        path = fifo_path(str(db.url))
        if path is None:
            return False
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:  # no FIFO (ENOENT), or nobody reads it (ENXIO)
            if exc.errno not in (errno.ENOENT, errno.ENXIO):
                log.debug("cannot open the wake-up FIFO %s: %s", path, exc)
            return False
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                return False
            with contextlib.suppress(BlockingIOError):  # full: a wake-up is waiting already
                os.write(fd, b"!")
            return True
        finally:
            os.close(fd)
    except Exception as exc:
        log.debug("waking the daemon failed: %s", exc)
        return False


class Wakeup:
    """What the daemon's wait selects on besides the inbox: the command line's pokes (a
    FIFO or LISTEN) and its own stop request (a pipe).

    ``fds()`` are the descriptors to select on; ``check()`` says whether any poke came
    for this worker (``worker``: its listener's name in `inbound_poke`), and clears them;
    ``passed`` counts the notifications that were not (see the module's doc).
    """

    def __init__(self, db: Engine, worker: str = "") -> None:
        self.db = db
        self.worker = worker
        self.passed = 0
        # Connections (backend pid) known to be a serve worker's, or not, until when.
        self._serving: dict[int, tuple[bool, float]] = {}
        self._stop_r, self._stop_w = os.pipe()
        os.set_blocking(self._stop_r, False)
        os.set_blocking(self._stop_w, False)
        self._closed = False
        self._fifo: int | None = None
        self._pg: Any = None  # a psycopg connection in LISTEN
        self._postgres = db.dialect.name == "postgresql"

    def open(self) -> None:
        """Start listening (idempotent; a failure is logged and retried later)."""
        if self._closed:
            self._stop_r, self._stop_w = os.pipe()
            os.set_blocking(self._stop_r, False)
            os.set_blocking(self._stop_w, False)
            self._closed = False
        if self._postgres:
            self._listen()
            return
        if self._fifo is not None:
            return
        path = fifo_path(str(self.db.url))
        if path is None:
            return
        try:
            if path.exists() and not stat.S_ISFIFO(path.stat().st_mode):
                path.unlink()
            if not path.exists():
                os.mkfifo(path, 0o600)
            self._fifo = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        except OSError as exc:
            log.warning("no wake-up FIFO at %s (%s); queued mail waits for the poll", path, exc)

    def _listen(self) -> None:
        if self._pg is not None:
            return
        import psycopg

        conninfo = self.db.url.set(drivername="postgresql").render_as_string(hide_password=False)
        try:
            self._pg = psycopg.connect(conninfo, autocommit=True, connect_timeout=10)
            self._pg.execute(f"LISTEN {CHANNEL}")
        except Exception as exc:
            log.warning("cannot LISTEN for wake-ups (%s); queued mail waits for the poll", exc)
            self._close_pg()

    def fds(self) -> list[int]:
        self.open()
        fds = [self._stop_r]
        if self._fifo is not None:
            fds.append(self._fifo)
        if self._pg is not None:
            fds.append(self._pg.fileno())
        return fds

    def check(self) -> bool:
        """Whether a poke for this worker came since the last check (each one is
        consumed)."""
        poked = False
        with contextlib.suppress(BlockingIOError, OSError):
            while os.read(self._stop_r, 512):
                pass
        if self._fifo is not None:
            with contextlib.suppress(BlockingIOError):
                while os.read(self._fifo, 512):
                    poked = True
        if self._pg is not None:
            notes: list[tuple[int, str]] = []
            try:
                pgconn = self._pg.pgconn
                pgconn.consume_input()
                while (note := pgconn.notifies()) is not None:
                    notes.append((note.be_pid, note.extra.decode("utf-8", "replace")))
            except Exception as exc:
                log.warning("the wake-up connection was lost (%s); listening again", exc)
                self._close_pg()
                poked = True  # a poke may have been lost with it
            if notes:
                served = self._served([pid for pid, payload in notes if payload == ""])
                mine = [note for note in notes if self._for_me(*note, served)]
                self.passed += len(notes) - len(mine)
                poked = poked or bool(mine)
        return poked

    def _for_me(self, pid: int, payload: str, served: set[int]) -> bool:
        """Whether a notification (from backend ``pid``) is work this worker can take."""
        if payload.startswith(_INBOUND):
            return payload[len(_INBOUND) :] != self.worker
        if payload == "":  # the outbox's trigger: a serve worker sends its own mail
            return pid not in served
        return True

    def _served(self, pids: Sequence[int]) -> set[int]:
        """Which of the backends ``pids`` are a serve worker's (asked once a while)."""
        now = time.monotonic()
        unknown = {p for p in pids if self._serving.get(p, (False, 0.0))[1] <= now}
        if unknown:
            try:
                with self.db.connect() as connection:
                    named: dict[int, str] = dict(
                        connection.execute(
                            text(
                                "SELECT pid, application_name FROM pg_stat_activity "
                                "WHERE pid = ANY(:pids)"
                            ),
                            {"pids": sorted(unknown)},
                        ).all()
                    )
            except Exception as exc:  # not known: such a notification wakes the worker
                log.debug("cannot ask whose the connections %s are: %s", sorted(unknown), exc)
                named = {}
            for pid in unknown:
                self._serving[pid] = (named.get(pid) == SERVE_NAME, now + NAMES_KEPT)
            if len(self._serving) > 1000:
                self._serving = {p: v for p, v in self._serving.items() if v[1] > now}
        return {p for p in pids if self._serving.get(p, (False, 0.0))[0]}

    def wait(self, timeout: float, also: Sequence[int] = ()) -> bool:
        """Block until a poke, a stop or ``timeout``; True if woken."""
        return bool(readable([*self.fds(), *also], timeout))

    def stop(self) -> None:
        """Make every wait return at once (safe from a signal handler)."""
        with contextlib.suppress(OSError):
            os.write(self._stop_w, b"!")

    def _close_pg(self) -> None:
        conn, self._pg = self._pg, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def close(self) -> None:
        self._close_pg()
        if self._fifo is not None:
            with contextlib.suppress(OSError):
                os.close(self._fifo)
            self._fifo = None
        if not self._closed:
            for fd in (self._stop_r, self._stop_w):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._closed = True
