"""The transaction: stored messages through the stages (`pbem.service.flow`), one at a
time or a batch at once with its writes held back, committed together; a batch that
fails is processed again one message at a time."""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, or_
from sqlmodel import Session, col, select

from engine import Game
from pbem.config import Settings
from pbem.mail.reading import IncomingMail, read_received
from pbem.render import MailContext, Notice
from pbem.render.mailmaker import MailMaker
from pbem.render.turnmail import PendingMail
from pbem.service import admin, intake, timers, unsubscribe
from pbem.service.context import (
    ALREADY_PROCESSED,
    Context,
    GameCache,
    InjectedFault,
    Outcome,
    ReadAhead,
    Seated,
    load_game,
    log,
    seats_of,
    utcnow,
)
from pbem.service.flow import handle
from pbem.service.ops import start
from pbem.service.send import turns
from pbem.store import models as m
from pbem.store._sql import hold_writes, release_writes
from pbem.store.db import session_scope
from pbem.store.errors import ConcurrentUpdateError
from pbem.store.inbound import (
    insert_inbound_many,
    lock_pending_inbound,
    lock_pending_inbound_many,
    mark_inbound,
    message_key,
)
from pbem.store.outbox import queue_mails

if TYPE_CHECKING:
    from pbem.service.audit import Audit
    from pbem.service.forget import Forgotten


@dataclass
class Service:
    """The turn service.  ``clock`` and ``fault`` are injectable for tests."""

    settings: Settings
    db: Engine
    clock: Callable[[], datetime] = utcnow
    fault: Callable[[str], None] = field(default=lambda step: None)
    cache_size: int = 2000
    _cache: GameCache = field(init=False, repr=False)
    _read_ahead: ReadAhead = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._cache = GameCache(self.cache_size)
        self._read_ahead = ReadAhead()

    def _ctx(self) -> Context:
        """A context for one transaction (the settings and hooks as they are now)."""
        ctx = Context(self.settings, self.db, self.clock, self.fault, self._cache)
        ctx.read_ahead = self._read_ahead
        return ctx

    # -- receiving -----------------------------------------------------------------

    @property
    def render_processes(self) -> int:
        """Helper processes making a batch's mail (`Settings.render_processes`; by default
        one on SQLite, whose one writer leaves the other cores idle, when there are
        others, and none on PostgreSQL, where several workers share the cores)."""
        if self.settings.render_processes is not None:
            return self.settings.render_processes
        if self.db.dialect.name == "postgresql" or (os.cpu_count() or 1) < 2:
            return 0
        return 1

    def receive(self, raw: bytes, source: str, *, oversize: bool = False) -> tuple[int, bool]:
        """Store a raw message (first, before anything else). Returns (inbound id, is new).

        ``oversize``: only the header section was fetched; processing answers "too large".
        """
        return self.receive_many([(raw, oversize)], source)[0]

    def pending_ids(self, limit: int = 100) -> list[int]:
        """The oldest messages to process now (not a proven mail that waits for the
        hourly volume: the daemon wakes for it, `pbem.run.due`)."""
        waits = col(m.Inbound.not_before)
        with Session(self.db) as session:
            rows = session.exec(
                select(m.Inbound.id)
                .where(
                    m.Inbound.status == m.InboundStatus.PENDING.value,
                    or_(waits.is_(None), waits <= self.clock()),
                )
                .order_by(m.Inbound.id)  # type: ignore[arg-type]
                .limit(limit)
            ).all()
        return [r for r in rows if r is not None]

    def receive_many(
        self, messages: Sequence[tuple[bytes, bool]], source: str
    ) -> list[tuple[int, bool]]:
        """Store several raw messages ``(raw, oversize)`` in one transaction, as `receive`
        would one by one. Returns (inbound id, is new) for each, in order.

        Each whole message is parsed once, here (`read_received`): what it is stored
        with, what the index of stored mail lists, and the mail as intake reads it, kept
        for its processing (`ReadAhead`)."""
        now = self.clock()
        rows = []
        mails: list[IncomingMail | None] = []
        settings = self.settings
        for raw, oversize in messages:
            first = None
            if not oversize:
                first = read_received(
                    raw, our_addresses={settings.address}, loop_value=settings.loop_value
                )
            where = f"{source}:oversize" if oversize else source
            if first is None:
                sender, subject, msg_id = intake.peek_headers(raw)
                rows.append((raw, where, message_key(raw, msg_id), sender, subject))
            else:
                key = message_key(raw, first.message_id)
                rows.append((first.raw, where, key, first.sender, first.subject))
            mails.append(None if first is None else first.mail)
        with session_scope(self.db) as session:
            stored = insert_inbound_many(session, rows, now=now, own=[settings.address])
        for (inbound_id, created), mail in zip(stored, mails, strict=True):
            if created and mail is not None:
                self._read_ahead.put(inbound_id, mail)
        return stored

    # -- processing ----------------------------------------------------------------

    def process_pending(self, limit: int = 100) -> list[Outcome]:
        return self.process_many(self.pending_ids(limit))

    def process_many(self, inbound_ids: Sequence[int]) -> list[Outcome]:
        """Process several stored messages in one transaction (a group commit).

        Each message ends exactly as `process` would end it in a transaction of its own.
        The batch's writes are held back and sent together before the commit (one
        statement per kind of write: the moves logged, the games, seats and messages
        updated, the mail queued), so processing a message writes nothing until then. A
        message whose game another worker holds (PostgreSQL) drops what it held back and
        is processed alone after the commit. Anything unexpected — a message that fails,
        a database error, held-back writes that find a game moved on — rolls the whole
        batch back and each message is processed alone, where a failing one is recorded
        as failed and the others are applied. Nothing is done until the commit: a crash
        before it leaves every message pending, to be processed again, never twice.
        The batch's turn mails are rendered by a helper process while the batch goes on
        (`render_processes`, see `pbem.render.mailmaker`) and collected before the commit.
        """
        if len(inbound_ids) < 2:
            return [self.process(inbound_id) for inbound_id in inbound_ids]
        outcomes: dict[int, Outcome] = {}
        again: list[int] = []
        ctx = self._ctx()
        ctx.deferred = []
        try:
            with MailMaker(self.render_processes) as maker, session_scope(self.db) as session:
                ctx.maker = maker
                behind = hold_writes(session)
                rows = lock_pending_inbound_many(session, inbound_ids)
                ctx.recent = intake.recent_counts(ctx, session, list(rows.values()))
                intake.prefetch(ctx, session, list(rows.values()))
                for inbound_id in inbound_ids:
                    row = rows.get(inbound_id)
                    if row is None:
                        outcomes[inbound_id] = ALREADY_PROCESSED
                        continue
                    staged = dict(ctx.staged)
                    deferred = len(ctx.deferred)
                    point = behind.mark()
                    try:
                        outcomes[inbound_id] = handle(ctx, session, row)
                    except ConcurrentUpdateError:
                        # Another worker has the game: this message goes alone after the
                        # commit, waiting for the game if need be.
                        ctx.staged = staged
                        del ctx.deferred[deferred:]
                        behind.rewind(point)
                        again.append(inbound_id)
                behind.flush(session)
                release_writes(session)
                queue_made(ctx, session, maker)
                self.fault("before-commit")
        except InjectedFault:
            raise
        except Exception as exc:
            # Nothing was committed: each message alone, as `process` would do it.
            log.warning("a batch was rolled back (%s); processing its messages one by one", exc)
            return [self.process(inbound_id) for inbound_id in inbound_ids]
        self._cache.remember(ctx.staged)
        for inbound_id in again:
            outcomes[inbound_id] = self.process(inbound_id)
        return [outcomes[inbound_id] for inbound_id in inbound_ids]

    def _failed(self, session: Session, row: m.Inbound | None, exc: Exception) -> Outcome:
        """Record an unexpected error on a message whose processing was rolled back."""
        log.exception("processing inbound %s failed", row.id if row else "?")
        detail = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}"
        if row is not None and row.status == m.InboundStatus.PENDING.value:
            mark_inbound(session, row, "failed", detail[:4000], now=self.clock())
        return Outcome("failed", str(exc))

    def process(self, inbound_id: int) -> Outcome:
        """Process one stored message in one transaction (retried on a concurrent move)."""
        for _attempt in range(5):
            try:
                ctx = self._ctx()
                # A game-over mail (its review and replay page: the costly part of a mail)
                # is made by a helper process when there is one, the service's process
                # waiting for it without holding the interpreter; other mail is made here.
                with (
                    MailMaker(self.render_processes, only_game_over=True) as maker,
                    session_scope(self.db) as session,
                ):
                    if maker.uses_helpers:
                        ctx.maker, ctx.deferred = maker, []
                    row = lock_pending_inbound(session, inbound_id)
                    if row is None:
                        return ALREADY_PROCESSED
                    outcome = handle(ctx, session, row)
                    if ctx.deferred is not None:
                        queue_made(ctx, session, maker)
                    self.fault("before-commit")
                self._cache.remember(ctx.staged)
                return outcome
            except ConcurrentUpdateError:
                continue
            except InjectedFault:
                raise
            except Exception as exc:
                with session_scope(self.db) as session:
                    return self._failed(session, session.get(m.Inbound, inbound_id), exc)
        return Outcome("pending", "the game kept changing under this message; will retry")

    # -- games, timers: each a transaction of its own (see pbem.service.admin, .timers) --

    def load_game(self, session: Session, game_row: m.Game) -> Game:
        """The engine game of ``game_row`` (from the cache when it is current)."""
        return load_game(self._ctx(), session, game_row)

    def get_game(self, session: Session, game_id: int) -> m.Game:
        return start.get_game(self._ctx(), session, game_id)

    def new_game(
        self,
        players: Sequence[tuple[str, str | None]],
        *,
        target: int = 121,
        muggins: bool = False,
        skunk: str = "skunk",
        seed: str | None = None,
        computer: Sequence[int] = (),
        first_dealer: int | None = None,
        level: str | None = None,
    ) -> int:
        """Create a game for (email, display name) pairs and mail everyone their hand
        (the computer's seats play at ``level``)."""
        return admin.new_game(
            self._ctx(),
            players,
            target=target,
            muggins=muggins,
            skunk=skunk,
            seed=seed,
            computer=computer,
            first_dealer=first_dealer,
            level=level,
        )

    def rematch(self, game_id: int) -> int:
        return admin.rematch(self._ctx(), game_id)

    def resend(self, game_id: int) -> int:
        return admin.resend(self._ctx(), game_id)

    def set_status(self, game_id: int, status: str, reason: str | None = None) -> m.Game:
        return admin.set_status(self._ctx(), game_id, status, reason)

    def export(self, game_id: int) -> dict[str, Any]:
        return admin.export(self._ctx(), game_id)

    def import_archive(self, data: dict[str, Any]) -> int:
        return admin.import_archive(self._ctx(), data)

    def audit(self, game_ids: Sequence[int] | None = None) -> Audit:
        """Replay every game (or ``game_ids``) and verify its deals (`pbem.service.audit`)."""
        from pbem.service.audit import audit_games

        return audit_games(self._ctx(), game_ids)

    def forget(
        self, address: str, *, abort_games: bool = False, compact: bool = False
    ) -> Forgotten:
        """Forget the player of ``address`` (`pbem.service.forget`)."""
        from pbem.service.forget import forget

        return forget(self._ctx(), address, abort_games=abort_games, compact=compact)

    def mailbox(self, address: str) -> list[tuple[str, str]]:
        """What the service holds about ``address``'s mailbox: its consent state and why
        (`pbem.service.mailbox`)."""
        from pbem.service import mailbox

        return mailbox.show(self._ctx(), address).lines

    def unsuppress(self, address: str) -> bool:
        """Take ``address``'s mailbox off the suppression list; whether it was on it."""
        from pbem.service import mailbox

        return mailbox.unsuppress(self._ctx(), address)

    def run_timers(self) -> int:
        return timers.run_timers(self._ctx())

    def unsubscribe(self, token: str) -> bool:
        """RFC 8058's one-click: stop the player of the seat with ``token`` as the mail
        command ``stop`` does; False for an unknown token."""
        return unsubscribe.unsubscribe(self._ctx(), token)

    # Used by the CLI to draw a game as its players see it.
    def _seats(self, session: Session, game_id: int) -> list[Seated]:
        return seats_of(session, game_id)

    def _context(
        self,
        game_row: m.Game,
        seats: list[Seated],
        seat: int,
        notices: Sequence[Notice],
        since: int,
    ) -> MailContext:
        return turns.mail_context(game_row, seats, seat, notices, since)


def queue_made(ctx: Context, session: Session, maker: MailMaker) -> None:
    """The mail a transaction deferred (``ctx.deferred``) put in the outbox, in the order
    it was queued, once `maker` has made every mail handed to it."""
    assert ctx.deferred is not None
    mail, ctx.deferred = ctx.deferred, None
    maker.finish()
    for queued in mail:
        if isinstance(queued["raw"], PendingMail):
            queued["raw"] = queued["raw"].raw
    queue_mails(session, mail)
