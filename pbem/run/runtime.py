"""Wiring: settings → database, transports, service, outbox sender, daemon."""

from __future__ import annotations

import gc
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import Engine

from pbem.config import Settings
from pbem.run.daemon import Daemon
from pbem.run.sender import OutboxSender
from pbem.service import Service, utcnow
from pbem.store.cursors import load_cursor, save_cursor
from pbem.store.db import session_scope
from pbem.transport.opening import open_inbound, open_outbound


class DbCursorStore:
    """Where an IMAP inbox remembers UIDVALIDITY and the last UID it read: the database."""

    def __init__(self, db: Engine, clock: Callable[[], datetime] = utcnow) -> None:
        self.db = db
        self.clock = clock

    def load(self, mailbox_name: str) -> tuple[int, int] | None:
        with session_scope(self.db) as session:
            row = load_cursor(session, mailbox_name)
            return None if row is None else (row.uidvalidity, row.last_uid)

    def save(self, mailbox_name: str, uidvalidity: int, last_uid: int) -> None:
        with session_scope(self.db) as session:
            save_cursor(session, mailbox_name, uidvalidity, last_uid, now=self.clock())


def freeze_startup_objects(*, collect: bool = True) -> None:
    """Take what is alive once a long-running process has started (modules, compiled
    queries and templates: about 100,000 objects that never die) out of the cyclic garbage
    collector's scans, and turn the collector on (again). Otherwise every full collection
    walks them all again, tens of milliseconds each time, in the middle of whatever batch
    is running.

    ``collect=False`` when the collector was off while the process started (`pbem
    serve`): the imports leave a few hundred cyclic objects behind, not worth the 50 ms
    of a full collection over 100,000 live ones before the daemon is ready.
    """
    if collect:
        gc.collect()
    gc.freeze()
    gc.enable()


def build_daemon(
    settings: Settings, db: Engine, *, clock: Callable[[], datetime] = utcnow
) -> Daemon:
    """A daemon for ``settings``; raises ValueError for a bad transport URL."""
    service = Service(settings, db, clock=clock)
    inbox = open_inbound(settings.inbound, cursor_store=DbCursorStore(db, clock))
    sink = open_outbound(settings.outbound)
    sender = OutboxSender(
        db,
        sink,
        clock,
        max_age=timedelta(days=settings.outbox_max_age),
        max_attempts=settings.outbox_max_attempts,
        backoff=timedelta(seconds=settings.outbox_backoff_seconds),
        keep_connections=True,
    )
    source = settings.inbound.split(":", 1)[0]
    return Daemon(service, inbox, sender, source=source, poll_seconds=settings.poll_seconds)
