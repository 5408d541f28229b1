"""Turn mails made — rendered and composed — in this process or in helper processes.

After a move every player gets a mail, and rendering it (two Jinja2 templates) and
composing it (MIME) is about a third of the work of a move. A batch of moves
(`Service.process_many`) hands each turn mail to a `MailMaker` as soon as the move is
applied; with helper processes the mail is made there while this process goes on with the
batch's next message, and `MailMaker.finish` collects every mail before the batch's writes
go out, inside the same transaction. So a second core does the rendering and nothing about
what is committed, or when, changes.

A helper runs the same pure function this process would (`make_turn_mail`), so a mail is
byte for byte the same wherever it was made. A helper that fails on a mail, dies or stops
answering is replaced by doing the work here; if the work fails here too, its error is the
batch's, exactly as without helpers. One batch at a time uses the helpers (a second thread
running a batch meanwhile makes its mail itself), and they are started on first use and
shared by every service in the process.

A helper is a process of its own, ``python -m pbem.run.renderer FD`` (`pbem.run.renderer`:
its loop, which only calls `make_turn_mail`); this module is the service's side of the
pipe: starting the helpers, handing them jobs, collecting the mails. Nothing here
imports the run room: the helper is named by its module path, as a command line.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import socket
import subprocess
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path

from pbem.render.turnmail import PendingMail, TurnMailJob, make_turn_mail

log = logging.getLogger("pbem.renderer")  # the name operators filter on

# How long `finish` waits for a helper's mail before making the rest here.
ANSWER_TIMEOUT = 30.0
# Mails a helper has in hand at a time (the rest wait in this process, which makes them
# itself at the end of a batch if the helpers have not taken them by then).
WINDOW = 2
# Helpers in a row that may end before they are ready before no more are started.
STILLBORN_LIMIT = 3
# The helper process's program (`pbem.run.renderer`), run as ``python -m HELPER_MODULE FD``.
HELPER_MODULE = "pbem.run.renderer"


# -- the helpers, seen from the service ---------------------------------------------


@dataclass(eq=False)
class _Helper:
    process: subprocess.Popen[bytes]
    conn: Connection
    # The mails it is making, by job number (at most WINDOW at a time).
    waiting: dict[int, PendingMail] = field(default_factory=dict)
    # Whether it has said it is ready (until then batches make their mail themselves).
    ready: bool = False

    @classmethod
    def start(cls) -> _Helper:
        """A helper: ``python -m pbem.run.renderer FD``, talking over a socket pair."""
        mine, theirs = socket.socketpair()
        # The helper imports this very package, wherever it was imported from here.
        root = str(Path(__file__).resolve().parents[2])
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{path}" if path else root}
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", HELPER_MODULE, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                env=env,
            )
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        return cls(process, Connection(mine.detach()))

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.close()
        try:
            self.process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)


class _Pool:
    """The process's helpers: started on first use, one batch at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.helpers: list[_Helper] = []
        self.disabled = False
        self.seq = 0
        self.stillborn = 0  # helpers in a row that ended before they were ready

    def ensure(self, count: int) -> list[_Helper]:
        """``count`` live helpers (fewer if they cannot be started). Caller holds `lock`."""
        for helper in [h for h in self.helpers if not h.alive()]:
            self.drop(helper)
            log.warning("a mail-rendering helper process ended; starting another")
        while len(self.helpers) > count:
            self.helpers.pop().stop()
        while len(self.helpers) < count and not self.disabled:
            try:
                self.helpers.append(_Helper.start())
            except (OSError, subprocess.SubprocessError) as exc:
                self.disable(f"cannot start a mail-rendering helper ({exc})")
        return list(self.helpers)

    def drop(self, helper: _Helper) -> None:
        """A helper that failed or ended: stopped and forgotten. Helpers that keep ending
        before they are ready (they cannot import the service, say) are not started
        again."""
        helper.stop()
        if helper in self.helpers:
            self.helpers.remove(helper)
        if helper.ready:
            self.stillborn = 0
            return
        self.stillborn += 1
        if self.stillborn >= STILLBORN_LIMIT:
            self.disable(f"{self.stillborn} mail-rendering helpers ended before they started")

    def disable(self, why: str) -> None:
        log.warning("%s; mail is rendered in-process from now on", why)
        self.disabled = True
        for helper in self.helpers:
            helper.stop()
        self.helpers.clear()

    def shutdown(self) -> None:
        held = self.lock.acquire(timeout=5)  # a batch still running: stop them anyway
        try:
            for helper in self.helpers:
                helper.stop()
            self.helpers.clear()
        finally:
            if held:
                self.lock.release()


_POOL = _Pool()
atexit.register(_POOL.shutdown)


def start_helpers(count: int, timeout: float | None = None) -> int:
    """Start ``count`` helpers now rather than with the first batch; with a ``timeout``,
    wait until they say they are ready. Returns how many are ready."""
    if count <= 0 or not _POOL.lock.acquire(timeout=-1 if timeout is None else timeout):
        return 0
    try:
        helpers = _POOL.ensure(count)
        for helper in helpers:
            if helper.ready:
                continue
            try:
                if timeout is not None and helper.conn.poll(timeout):
                    helper.ready = helper.conn.recv() == "ready"
            except (OSError, EOFError):
                continue
        return sum(helper.ready for helper in helpers)
    finally:
        _POOL.lock.release()


def shutdown_helpers() -> None:
    """Stop this process's helper processes (they are started again when needed)."""
    _POOL.shutdown()


# -- the service's side -----------------------------------------------------------------


class MailMaker:
    """Makes the turn mails of one batch: with ``processes`` helpers when they are free,
    else here. Use as a context manager around the batch; call `finish` before the mails
    are needed.

    Each helper has at most `WINDOW` mails in hand; the rest wait here. While the batch
    runs, the helpers make mail; at `finish` this process makes the waiting mails too,
    from the back of the line while the helpers take from the front, so both cores work
    until the last mail is made.
    """

    def __init__(self, processes: int, *, only_game_over: bool = False) -> None:
        # ``only_game_over``: hand a helper only the game-over mails (their review and
        # replay page are the costly part); make the rest here at once.
        self._only_game_over = only_game_over
        self._helpers: list[_Helper] = []
        self._held = False
        self._line: deque[PendingMail] = deque()
        self.made_by_helpers = 0
        self.made_here = 0
        if processes > 0 and _POOL.lock.acquire(blocking=False):
            self._held = True
            self._helpers = _POOL.ensure(processes)

    def __enter__(self) -> MailMaker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def uses_helpers(self) -> bool:
        return bool(self._helpers)

    def submit(self, job: TurnMailJob) -> PendingMail:
        """Start making a mail; its bytes are in ``raw`` after `finish` (or at once)."""
        pending = PendingMail(job)
        if not self._helpers or (self._only_game_over and job.over is None):
            pending.raw = make_turn_mail(job)
            self.made_here += 1
            return pending
        self._line.append(pending)
        self._pump()
        return pending

    def finish(self) -> None:
        """Every submitted mail made: by a helper, or here."""
        while True:
            self._pump()
            if self._line:
                pending = self._line.pop()
                pending.raw = make_turn_mail(pending.job)
                self.made_here += 1
                continue
            busy = [helper for helper in self._helpers if helper.waiting]
            if not busy:
                return
            if not wait([helper.conn for helper in busy], ANSWER_TIMEOUT):
                for helper in busy:
                    self._lose(helper, f"no answer in {ANSWER_TIMEOUT:.0f} s")

    def close(self) -> None:
        """Done with the helpers: what they still make for this batch is dropped."""
        try:
            self._line.clear()
            for helper in list(self._helpers):
                while helper.waiting:
                    if not helper.conn.poll(ANSWER_TIMEOUT):
                        self._lose(helper, f"no answer in {ANSWER_TIMEOUT:.0f} s")
                        break
                    self._take(helper)
        except (OSError, EOFError, ValueError) as exc:
            for helper in list(self._helpers):
                self._lose(helper, str(exc))
        finally:
            self._line.clear()
            self._helpers = []
            if self._held:
                self._held = False
                _POOL.lock.release()

    def _pump(self) -> None:
        """Take what the helpers have made; hand them mail up to `WINDOW` each."""
        for helper in list(self._helpers):
            try:
                if not helper.ready:
                    if not helper.conn.poll(0):
                        continue
                    if helper.conn.recv() != "ready":
                        raise ValueError("unexpected first message")
                    helper.ready = True
                while helper.waiting and helper.conn.poll(0):
                    self._take(helper)
                while len(helper.waiting) < WINDOW and self._line:
                    pending = self._line.popleft()
                    _POOL.seq += 1
                    helper.waiting[_POOL.seq] = pending
                    helper.conn.send((_POOL.seq, pending.job))
            except (OSError, EOFError, ValueError) as exc:
                self._lose(helper, str(exc) or type(exc).__name__)

    def _take(self, helper: _Helper) -> None:
        seq, raw = helper.conn.recv()
        pending = helper.waiting.pop(seq, None)
        if pending is None:
            return
        if raw is None:
            self._line.append(pending)  # it failed there: made here, where the error shows
        else:
            pending.raw = raw
            self.made_by_helpers += 1

    def _lose(self, helper: _Helper, why: str) -> None:
        """A helper that failed: stopped (another starts with the next batch); the mail it
        had is made here."""
        log.warning("a mail-rendering helper failed (%s); making its mail here", why)
        self._line.extend(helper.waiting.values())
        helper.waiting.clear()
        if helper in self._helpers:
            self._helpers.remove(helper)
        _POOL.drop(helper)
