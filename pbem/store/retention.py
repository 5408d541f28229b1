"""Stored mail kept only as long as it is needed: the raw bytes of mail that is done
with are deleted, in small batches, each in a short transaction of its own.

A stored mail's raw bytes go (their row of ``inbound_raw`` or ``outbox_raw`` deleted,
`pbem.store.rawmail`; ``pruned_at`` set), its row staying with every column the service
and the audit read — the Message-ID (``inbound.message_key``
still deduplicates a mail delivered again, ``outbox.message_id`` still tells whom a bounce
answers), sender, recipient, subject, status, game, times — once

- a received mail has been processed (applied, rejected, ignored; or failed, which the
  admin reads, only by age) and no confirmation request still waits on it (the mail that
  asked is acted on when its sender confirms), and
- an outgoing mail was delivered ('sent') or will never be ('cancelled'): mail waiting to
  go ('pending', 'sending') or to be retried ('failed') keeps its bytes,

and either it is older than the retention period (``mail_retention_days``) or its game
has been over for ``game_mail_retention_days``: the game's archive, its action log and
its cut mails (``cut_mail``: every cut's text or SHA-256, its Message-ID) hold what it
proved. The deals still verify and the games still replay: neither ever reads a mail.

Deleting whole rows frees whole pages (SQLite: the pages of the deleted bytes go to
the free list; PostgreSQL: their TOAST storage, after autovacuum), which the mail stored
next reuses, so the database stops growing with the retention period's mail; ``pbem db
prune --vacuum`` also gives the space back to the file system (`vacuum`: on SQLite a few
thousand free pages at a time, or a whole ``VACUUM`` once for a file made before).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    and_,
    bindparam,
    delete,
    exists,
    func,
    or_,
    select,
    text,
    update,
)

from pbem.store.models import (
    Confirmation,
    ConfirmationStatus,
    Game,
    GameStatus,
    Inbound,
    InboundStatus,
    Outbox,
    OutboxStatus,
)
from pbem.store.rawmail import INBOUND_RAW, OUTBOX_RAW

__all__ = ["BATCH", "Pruned", "prune", "prune_batch"]

BATCH = 200
"""Rows emptied in one transaction (of each table)."""

STEP = 2000
"""Free pages a step of `vacuum` gives back, in one transaction (8 MB of 4 KB pages)."""

_IN = Inbound.__table__  # type: ignore[attr-defined]
_OUT = Outbox.__table__  # type: ignore[attr-defined]
_GAME = Game.__table__  # type: ignore[attr-defined]
_CONFIRMATION = Confirmation.__table__  # type: ignore[attr-defined]
_OVER = (GameStatus.FINISHED.value, GameStatus.ABORTED.value)


@dataclass
class Pruned:
    """What pruning emptied: rows of each table and the raw bytes they held."""

    inbound: int = 0
    outbox: int = 0
    inbound_bytes: int = 0
    outbox_bytes: int = 0
    batches: int = 0

    @property
    def rows(self) -> int:
        return self.inbound + self.outbox

    def add(self, other: Pruned) -> None:
        self.inbound += other.inbound
        self.outbox += other.outbox
        self.inbound_bytes += other.inbound_bytes
        self.outbox_bytes += other.outbox_bytes
        self.batches += other.batches


def _game_over_before(game_id: ColumnElement[int]) -> ColumnElement[bool]:
    """Whether the mail's game (``game_id``) has been over since before ``:ended``: a
    scalar subquery, so that each mail looks its game up by its key (a semi-join could
    read every game)."""
    ended = (
        select(_GAME.c.id)
        .where(
            _GAME.c.id == game_id,
            _GAME.c.status.in_(_OVER),
            func.coalesce(_GAME.c.finished_at, _GAME.c.updated_at) < bindparam("ended"),
        )
        .limit(1)
        .scalar_subquery()
    )
    return ended.is_not(None)


_DONE_IN = (
    InboundStatus.APPLIED.value,
    InboundStatus.REJECTED.value,
    InboundStatus.IGNORED.value,
)


def _size(table: Any, key: Any, mail_id: Any) -> Any:
    """The bytes a mail's raw bytes take (None: none kept), looked up by its key."""
    return select(func.length(table.c.raw)).where(key == mail_id).scalar_subquery()


# Read from the mail not pruned yet (its ids by the index of ``pruned_at``, which SQLite
# keeps to with statistics too, `pbem.run.due`), never from the history's pruned mail.
_INBOUND_DUE = (
    select(_IN.c.id, _size(INBOUND_RAW, INBOUND_RAW.c.inbound_id, _IN.c.id))
    .where(
        _IN.c.id.in_(select(_IN.c.id).where(_IN.c.pruned_at.is_(None))),
        _IN.c.pruned_at.is_(None),
        or_(
            and_(
                _IN.c.status.in_([*_DONE_IN, InboundStatus.FAILED.value]),
                _IN.c.received_at < bindparam("before"),
            ),
            and_(_IN.c.status.in_(_DONE_IN), _game_over_before(_IN.c.game_id)),
        ),
        ~exists().where(
            _CONFIRMATION.c.inbound_id == _IN.c.id,
            _CONFIRMATION.c.status == ConfirmationStatus.PENDING.value,
        ),
    )
    .order_by(_IN.c.id)
    .limit(bindparam("limit"))
)
_OUTBOX_DUE = (
    select(_OUT.c.id, _size(OUTBOX_RAW, OUTBOX_RAW.c.outbox_id, _OUT.c.id))
    .where(
        _OUT.c.id.in_(select(_OUT.c.id).where(_OUT.c.pruned_at.is_(None))),
        _OUT.c.pruned_at.is_(None),
        _OUT.c.status.in_([OutboxStatus.SENT.value, OutboxStatus.CANCELLED.value]),
        or_(_OUT.c.created_at < bindparam("before"), _game_over_before(_OUT.c.game_id)),
    )
    .order_by(_OUT.c.id)
    .limit(bindparam("limit"))
)
_INBOUND_DUE_LOCKED = _INBOUND_DUE.with_for_update(skip_locked=True, of=_IN)
_OUTBOX_DUE_LOCKED = _OUTBOX_DUE.with_for_update(skip_locked=True, of=_OUT)
# The status is checked again as the row is marked: a mail queued again meanwhile
# (``pbem outbox retry``) keeps its bytes. The bytes of the rows marked are deleted.
_EMPTY_IN = (
    update(_IN)
    .where(_IN.c.id.in_(bindparam("ids", expanding=True)), _IN.c.status != "pending")
    .values(pruned_at=bindparam("now"))
    .returning(_IN.c.id)
)
_EMPTY_OUT = (
    update(_OUT)
    .where(
        _OUT.c.id.in_(bindparam("ids", expanding=True)),
        _OUT.c.status.in_([OutboxStatus.SENT.value, OutboxStatus.CANCELLED.value]),
    )
    .values(pruned_at=bindparam("now"))
    .returning(_OUT.c.id)
)
_DROP_IN = delete(INBOUND_RAW).where(INBOUND_RAW.c.inbound_id.in_(bindparam("ids", expanding=True)))
_DROP_OUT = delete(OUTBOX_RAW).where(OUTBOX_RAW.c.outbox_id.in_(bindparam("ids", expanding=True)))


def _empty(
    connection: Connection, mark: Any, drop: Any, due: Sequence[Any], now: datetime
) -> tuple[int, int]:
    """Mark the ``due`` mails ``(id, bytes)`` pruned and delete their bytes: how many
    were, and the bytes they held."""
    size = {int(r[0]): int(r[1] or 0) for r in due}
    marked = [int(i) for (i,) in connection.execute(mark, {"ids": list(size), "now": now})]
    if marked:
        connection.execute(drop, {"ids": marked})
    return len(marked), sum(size[i] for i in marked)


def prune_batch(
    db: Engine, *, now: datetime, keep: timedelta, keep_after_game: timedelta, limit: int = BATCH
) -> Pruned:
    """Empty up to ``limit`` received and ``limit`` outgoing mails that are done with (see
    the module's docstring), in one short transaction; what it emptied."""
    params = {"before": now - keep, "ended": now - keep_after_game, "limit": limit}
    done = Pruned(batches=1)
    with db.begin() as connection:
        postgres = connection.dialect.name == "postgresql"
        # Several workers prune side by side: each skips the rows another holds.
        inbound_due = _INBOUND_DUE_LOCKED if postgres else _INBOUND_DUE
        outbox_due = _OUTBOX_DUE_LOCKED if postgres else _OUTBOX_DUE
        due_in = connection.execute(inbound_due, params).all()
        if due_in:
            done.inbound, done.inbound_bytes = _empty(connection, _EMPTY_IN, _DROP_IN, due_in, now)
        due_out = connection.execute(outbox_due, params).all()
        if due_out:
            done.outbox, done.outbox_bytes = _empty(connection, _EMPTY_OUT, _DROP_OUT, due_out, now)
    return done


def prune(
    db: Engine,
    *,
    now: datetime,
    keep: timedelta,
    keep_after_game: timedelta,
    limit: int = BATCH,
    max_batches: int | None = None,
) -> Pruned:
    """`prune_batch` until nothing is left to empty (or ``max_batches`` ran): each batch
    its own transaction, so a daemon's moves go on between them."""
    total = Pruned()
    while max_batches is None or total.batches < max_batches:
        done = prune_batch(db, now=now, keep=keep, keep_after_game=keep_after_game, limit=limit)
        total.add(done)
        if done.inbound < limit and done.outbox < limit:
            break
    return total


def vacuum(db: Engine) -> tuple[int, int]:
    """Give the space that pruning freed back to the file system; the database's bytes
    before and after. SQLite: a file in incremental vacuum mode (every file made since
    the raw bytes moved to tables of their own) gives its free pages back `STEP` at a
    time, each step a short transaction (``PRAGMA incremental_vacuum``); an older file is
    compacted whole once (``VACUUM``: the database is held while it runs, and the file is
    left in incremental mode); then the write-ahead log is emptied. PostgreSQL:
    ``VACUUM`` of the mail tables, which runs beside the workers."""
    with db.connect() as connection:
        if connection.dialect.name == "sqlite":
            raw = connection.connection.driver_connection
            assert raw is not None

            def pragma(name: str) -> int:
                return int(raw.execute(f"PRAGMA {name}").fetchone()[0])

            before = pragma("page_size") * pragma("page_count")
            if pragma("auto_vacuum") == 2:
                free = pragma("freelist_count")
                while free:
                    raw.execute(f"PRAGMA incremental_vacuum({STEP})").fetchall()
                    free, left = pragma("freelist_count"), free
                    if free >= left:
                        break  # others free pages as fast: what is left waits
            else:
                raw.execute("PRAGMA auto_vacuum = INCREMENTAL")
                raw.execute("VACUUM")
            raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return before, pragma("page_size") * pragma("page_count")
        auto = connection.execution_options(isolation_level="AUTOCOMMIT")
        query = text("SELECT pg_database_size(current_database())")
        before = int(auto.execute(query).scalar_one())
        for table in ("inbound", "outbox", "inbound_raw", "outbox_raw", "mail_name"):
            auto.execute(text(f'VACUUM "{table}"'))
        return before, int(auto.execute(query).scalar_one())
