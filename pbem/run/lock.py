"""One daemon per SQLite database: the lock file beside it, held for the daemon's life.

A second ``pbem serve`` on the same SQLite database is refused with a clear message
(`DaemonError`); on PostgreSQL there is no lock file and workers share the work.
``pbem status`` reads the same lock to tell whether a daemon runs.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO, Literal

from sqlalchemy.engine import make_url


class DaemonError(RuntimeError):
    """The daemon cannot run (another one holds the database, a bad transport)."""


_RUNNING = "another pbem serve is already running on this SQLite database (pid {pid})"
_REFUSALS = {
    # A second daemon: several processes serving one installation need PostgreSQL.
    "serve": _RUNNING + "; stop it first, or use PostgreSQL to run several workers",
    # A restore would replace the database under the running daemon.
    "restore": _RUNNING + ": stop it first (systemctl stop pbem, or end pbem serve), then "
    "run pbem restore again",
}


class SingleProcessLock:
    """An exclusive, non-blocking lock on ``path`` held for the daemon's life."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[str] | None = None

    def acquire(self, doing: Literal["serve", "restore"] = "serve") -> None:
        """Hold the lock, for ``doing`` (``"serve"``: the daemon; ``"restore"``: a
        restore, which must not replace the database under a daemon). Raises
        `DaemonError`, worded for ``doing``, when another process holds it."""
        if self._fh is not None:
            return  # held already
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = self.path.open("a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise DaemonError(_REFUSALS[doing].format(pid=holder)) from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        if self._fh is not None:
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


def lock_for(db_url: str) -> SingleProcessLock | None:
    """The lock file for a SQLite database; None for a server database."""
    url = make_url(db_url)
    if not url.get_backend_name().startswith("sqlite") or not url.database:
        return None
    return SingleProcessLock(Path(url.database + ".lock"))
