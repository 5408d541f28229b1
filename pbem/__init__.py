"""The play-by-email service around the Cribbage engine (`engine`).

Its rooms, each importing only from the floors below it (never one above, never in a
circle):

1. the basic modules here: `pbem.config` (settings), `pbem.names` (names as shown),
   `pbem.commands` (reply text → commands), `pbem.repeats` (a move sent again),
   `pbem.ratings` (the standings' arithmetic), `pbem.metrics` (the process's counters),
   `pbem.logsetup` (log lines); beside them `pbem.transport` (mail bytes in and out) and
   `pbem.mail` (reading and composing mail);
2. `pbem.store` (the database) and `pbem.render` (views → mails, and turn mails made in
   helper processes);
3. `pbem.service` (one inbound message, one transaction);
4. `pbem.run` (the daemon's loop, the outbox sender, the wake-up, the rendering helper
   process, ``pbem status``);
5. `pbem.listen` (the LMTP and HTTP listeners beside the loop);
6. `pbem.demo` (``pbem demo`` and its built-in players);
7. `pbem.cli` (the command line), which imports what a command uses when it runs.
"""

from __future__ import annotations

from functools import cache

DISTRIBUTION = "pbem-cribbage"
"""The installed distribution that holds the service and its engine."""


@cache
def engine_digest() -> str:
    """The engine named by its content: the SHA-256 (hex) of every module of the
    ``engine`` package — the computer's strategy code and the tables it holds — each as
    its path (UTF-8), a zero byte, its length (8 bytes, big-endian) and its bytes, in
    path order. An archive's ``computer`` entries carry it (``engine_sha256``)."""
    import hashlib
    from importlib.resources import files

    root = files("engine")
    blob = hashlib.sha256()
    for item in sorted(root.iterdir(), key=lambda i: i.name):
        if item.is_file() and item.name.endswith(".py"):
            data = item.read_bytes()
            blob.update(item.name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    return blob.hexdigest()


def engine_version() -> str:
    """The installed version of this distribution, whose engine plays the computer seats
    (an archive names it); "unknown" when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"
