"""On SQLite, pruning a mail deletes the whole row of its raw bytes (`pbem.store.rawmail`):
the pages those bytes took go to the free list, whole, to be reused by the next mail or
given back to the file system a few thousand at a time (``pbem db prune --vacuum``, no
whole VACUUM); and secure deletion overwrites them, so a pruned mail's words are no
longer in the file or its write-ahead log."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine
from sqlmodel import Session

from pbem.store.db import make_engine
from pbem.store.inbound import store_inbound
from pbem.store.outbox import outbox_row, queue_mails
from pbem.store.retention import prune, vacuum

NOW = datetime(2026, 11, 29, tzinfo=UTC)
SECRET = b"purple-elephant-"
MAILS = 60


def _engine(tmp_path: Path, template: Path) -> tuple[Engine, Path]:
    path = tmp_path / "pbem.db"
    shutil.copyfile(template, path)
    return make_engine(f"sqlite:///{path}"), path


def _pragma(db: Engine, name: str) -> int:
    with db.connect() as connection:
        return int(connection.exec_driver_sql(f"PRAGMA {name}").scalar_one())


def _store(db: Engine) -> int:
    """``MAILS`` received and as many outgoing mails of 20 KB each, done with long ago;
    the raw bytes stored."""
    body = SECRET * 1250  # 20 KB
    old = NOW - timedelta(days=90)
    with Session(db) as session:
        for n in range(MAILS):
            raw = f"Subject: move {n}\r\n\r\n".encode() + body
            row, _ = store_inbound(session, raw, "test", f"<in{n}@example.com>", now=old)
            row.status, row.processed_at = "applied", old
            session.add(row)
        queue_mails(
            session,
            [
                {
                    **outbox_row(
                        f"<out{n}@pbem.test>",
                        "a@example.com",
                        "p@pbem.test",
                        "turn",
                        f"Subject: turn {n}\r\n\r\n".encode() + body,
                        now=old,
                    ),
                    "status": "sent",
                }
                for n in range(MAILS)
            ],
        )
        session.commit()
    return 2 * MAILS * len(body)


def test_pruning_frees_whole_pages_and_overwrites_them(
    tmp_path: Path, _sqlite_template: Path
) -> None:
    db, path = _engine(tmp_path, _sqlite_template)
    try:
        stored = _store(db)
        page = _pragma(db, "page_size")
        assert _pragma(db, "freelist_count") * page < stored // 10
        done = prune(db, now=NOW, keep=timedelta(days=30), keep_after_game=timedelta(days=1))
        assert (done.inbound, done.outbox) == (MAILS, MAILS)
        # The bytes' pages are free, whole: at least 90 % of what the bytes took.
        assert _pragma(db, "freelist_count") * page >= stored * 9 // 10
        with db.connect() as connection:
            driver = connection.connection.driver_connection
            assert driver is not None
            driver.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for name in (path.name, path.name + "-wal"):
            file = path.with_name(name)
            assert not file.exists() or SECRET not in file.read_bytes(), name
        # Given back to the file system without a whole VACUUM: the file in incremental
        # mode loses its free pages, and is smaller than what the mail took.
        assert _pragma(db, "auto_vacuum") == 2
        before, after = vacuum(db)
        assert _pragma(db, "freelist_count") == 0
        assert before - after >= stored * 9 // 10
    finally:
        db.dispose()


def test_a_file_made_before_takes_incremental_vacuum_at_its_first_vacuum(
    tmp_path: Path, _sqlite_template: Path
) -> None:
    """A file made by an earlier version keeps no pointer maps: ``pbem db prune
    --vacuum`` compacts it whole once (``VACUUM``), and leaves it in incremental mode."""
    db, _ = _engine(tmp_path, _sqlite_template)
    try:
        with db.connect() as connection:
            driver = connection.connection.driver_connection
            assert driver is not None
            driver.execute("PRAGMA auto_vacuum = NONE")
            driver.execute("VACUUM")  # as an earlier version made it
        assert _pragma(db, "auto_vacuum") == 0
        _store(db)
        prune(db, now=NOW, keep=timedelta(days=30), keep_after_game=timedelta(days=1))
        assert _pragma(db, "freelist_count") > 0
        before, after = vacuum(db)
        assert after < before and _pragma(db, "freelist_count") == 0
        assert _pragma(db, "auto_vacuum") == 2
    finally:
        db.dispose()
