"""Backups of a SQLite installation, and their restore.

`backup_sqlite` copies a live SQLite database to a file with SQLite's online backup API:
the copy is one read transaction of the source, so it is consistent even while the daemon
writes (in WAL mode a reader never blocks a writer, nor the other way round). The copy is
written next to its destination, checked (``PRAGMA integrity_check`` and the schema
revision), then renamed into place, so a backup file is either whole or absent.

`restore_sqlite` checks a backup file the same way and copies it over the configured
database with the same API (the destination's open connections see the restored pages at
their next transaction). PostgreSQL has its own tools: `pg_dump` and `pg_restore`
(`PG_BACKUP_HINT`).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url

from pbem.store.errors import StoreError

PG_BACKUP_HINT = (
    "on PostgreSQL use its own tools, which are consistent while the daemon runs: "
    "pg_dump --format=custom --file=pbem.dump DATABASE_URL, and to restore "
    "pg_restore --clean --if-exists --no-owner --dbname=DATABASE_URL pbem.dump "
    "(pbem serve stopped)"
)


class BackupError(StoreError):
    """A backup or a restore that cannot be made (the message says why)."""


@dataclass(frozen=True)
class BackupInfo:
    """What a backup file holds: its size, schema revision and number of games."""

    path: Path
    size: int
    revision: str | None
    games: int


def sqlite_path(db_url: str) -> Path | None:
    """The file of a SQLite database URL, or None for any other database."""
    url = make_url(db_url) if "://" in db_url else None
    if url is None:
        return Path(db_url).expanduser()
    if not url.get_backend_name().startswith("sqlite"):
        return None
    if not url.database or url.database == ":memory:":
        raise BackupError("an in-memory database cannot be backed up")
    return Path(url.database)


def inspect_backup(path: Path) -> BackupInfo:
    """Check that ``path`` is a whole pbem database; BackupError saying what is wrong."""
    if not path.is_file():
        raise BackupError(f"{path} does not exist")
    try:
        # Read only, and immutable: a broken or foreign file is never written to.
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise BackupError(f"{path} cannot be opened: {exc}") from exc
    try:
        verdict = conn.execute("PRAGMA integrity_check").fetchone()
        if verdict is None or verdict[0] != "ok":
            raise BackupError(f"{path} is damaged: {verdict[0] if verdict else 'no answer'}")
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if "alembic_version" not in tables or "game" not in tables:
            raise BackupError(f"{path} is not a pbem database (no game table)")
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        games = conn.execute("SELECT count(*) FROM game").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{path} is not a SQLite database: {exc}") from exc
    finally:
        conn.close()
    return BackupInfo(path, path.stat().st_size, row[0] if row else None, int(games))


def backup_sqlite(db_url: str, dest: Path) -> BackupInfo:
    """Copy the SQLite database of ``db_url`` to ``dest`` (replaced if it exists), while
    other processes may be writing to it. BackupError when the source is not a SQLite
    file or the copy fails."""
    source = sqlite_path(db_url)
    if source is None:
        raise BackupError("pbem backup copies SQLite databases; " + PG_BACKUP_HINT)
    if not source.is_file():
        raise BackupError(f"the database {source} does not exist")
    dest = dest.expanduser()
    if dest.resolve() == source.resolve():
        raise BackupError("the backup file cannot be the database itself")
    if not dest.parent.is_dir():
        raise BackupError(f"cannot write {dest}: the folder {dest.parent} does not exist")
    partial = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    try:
        partial.unlink(missing_ok=True)
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
        try:
            dst = sqlite3.connect(partial)
            try:
                # All pages in one step: one read transaction, so one consistent moment.
                src.backup(dst)
                dst.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
            finally:
                dst.close()
        finally:
            src.close()
        info = inspect_backup(partial)
        os.replace(partial, dest)
    except sqlite3.Error as exc:
        raise BackupError(f"the backup to {dest} failed: {exc}") from exc
    except OSError as exc:
        raise BackupError(f"cannot write {dest}: {exc.strerror or exc}") from exc
    finally:
        partial.unlink(missing_ok=True)
    return BackupInfo(dest, info.size, info.revision, info.games)


def restore_sqlite(backup: Path, db_url: str) -> BackupInfo:
    """Replace the SQLite database of ``db_url`` by the backup file ``backup`` (checked
    first). The caller makes sure no daemon runs on it. BackupError when the file is not
    a whole pbem database or the database is not SQLite."""
    target = sqlite_path(db_url)
    if target is None:
        raise BackupError("pbem restore restores SQLite databases; " + PG_BACKUP_HINT)
    info = inspect_backup(backup.expanduser())
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        src = sqlite3.connect(f"file:{info.path}?mode=ro", uri=True)
        try:
            dst = sqlite3.connect(target, timeout=30)
            try:
                dst.execute("PRAGMA journal_mode = WAL")
                src.backup(dst)
            finally:
                dst.close()
        finally:
            src.close()
    except sqlite3.Error as exc:
        raise BackupError(f"the restore into {target} failed: {exc}") from exc
    return info
