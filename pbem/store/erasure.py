"""Rows rewritten for good: what is left of their old versions in the database's files,
and how it goes (``pbem player forget``, `pbem.service.forget`).

SQLite. Every connection deletes securely (``PRAGMA secure_delete = ON``,
`pbem.store.db`): a row deleted or rewritten is overwritten with zeros where it was, in
its page, and a page freed (a pruned mail's bytes, an old version's overflow) is zeroed
as it goes to the free list. So once the rewrite has committed, the file holds no old
version; the write-ahead log still does (its frames are the pages as they were written
before), until a checkpoint copies the newest pages into the file and the log is
truncated to nothing (`erase`). A file made before secure deletion may still hold old
bytes in the space freed back then: such a file is told by its ``auto_vacuum`` mode (a
file made since, or compacted since, keeps pointer maps: ``INCREMENTAL``), and is
compacted once (``VACUUM``: the whole file written again, which holds the database
while it runs, and leaves it in the new mode). ``compact=True`` compacts in any case.

PostgreSQL. A rewritten row's old version is a dead tuple until ``VACUUM`` marks its
space free for reuse; its bytes stay in the page until that space is reused, and in the
server's write-ahead log segments until they are recycled. `erase` runs ``VACUUM`` on
the tables rewritten (beside the workers: no table is held); ``compact=True`` runs
``VACUUM FULL`` instead, which writes each table again without its dead versions but
holds it while it runs (a quiet hour's job). Backups made before keep everything.
"""

from __future__ import annotations

from sqlalchemy import Engine, text

from pbem.store.db import SQLITE_BUSY_TIMEOUT_S

__all__ = ["COMPACTED", "LOG_NOT_EMPTIED", "compact", "erase"]

LOG_NOT_EMPTIED = "the write-ahead log could not be emptied"

CHECKPOINT_WAIT_S = 10.0
"""How long one checkpoint waits for the readers of older pages to finish."""
TRIES = 3
"""Checkpoints tried before giving up."""


def erase(db: Engine, tables: tuple[str, ...], *, compact: bool = False) -> str:
    """Let go of what is left of the old versions of rows rewritten in ``tables`` (see
    the module's docstring); what was done, in words. On SQLite a write-ahead log that
    readers kept from being emptied makes the words start with `LOG_NOT_EMPTIED`."""
    with db.connect() as connection:
        if connection.dialect.name != "sqlite":
            auto = connection.execution_options(isolation_level="AUTOCOMMIT")
            verb = "VACUUM FULL" if compact else "VACUUM"
            for table in tables:
                auto.execute(text(f'{verb} "{table}"'))
            return f"{verb} of {', '.join(tables)}"
        driver = connection.connection.driver_connection
        assert driver is not None
        done = []
        mode = int(driver.execute("PRAGMA auto_vacuum").fetchone()[0])
        if compact or mode != 2:
            driver.execute("PRAGMA auto_vacuum = INCREMENTAL")
            driver.execute("VACUUM")
            done.append("VACUUM (the whole file written again)")
        driver.execute(f"PRAGMA busy_timeout = {int(CHECKPOINT_WAIT_S * 1000)}")
        try:
            for _ in range(TRIES):
                busy = int(driver.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0])
                if not busy:
                    done.append("the write-ahead log emptied")
                    return "; ".join(done)
        finally:
            driver.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        return (
            f"{LOG_NOT_EMPTIED} (others kept reading it): stop pbem serve and run "
            "`pbem db prune --vacuum`, which empties it"
        )


COMPACTED = (
    "player",
    "inbound",
    "outbox",
    "inbound_raw",
    "outbox_raw",
    "mail_name",
    "game",
    "cut_mail",
    "rating",
    "talk",
    "consent",
    "invitation",
)
"""The tables a forgetting rewrites."""


def compact(db: Engine) -> str:
    """`erase` with ``compact``: the tables forgetting rewrites written again whole."""
    return erase(db, COMPACTED, compact=True)
