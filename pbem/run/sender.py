"""Drain the outbox through a transport: at least once, stable Message-IDs, retries.

Rows are claimed in one short transaction (marked 'sending' with a lease, so a
sender that dies leaves them to be claimed again, and noted "in flight"), sent outside
any transaction, and the per-recipient results of each lane are recorded together when
the lane is done, in one short transaction with one prepared statement for the
delivered rows: delivered, retried later with capped exponential backoff and jitter (a
temporary failure, for ``max_age``: 5 days by default, as Postfix), or failed
(permanent, or temporary for that long).

A turn mail to a player to move starts their clock when it is delivered, and one that
fails for good makes the game wait for that seat (see ``pbem.store.delivery``): both
are recorded with the delivery, in its transaction.

A batch goes out over a few connections at once ("lanes", 3 by default), so the
server's round trips for one message overlap another's; all mail to one recipient
takes one lane, in order. (A sink that reports results only at the end of a batch
gets the batch whole, over one connection.)

Recording a lane's results together costs one commit per lane rather than one per mail,
and bounds what a crash can send twice to the one batch on the wire: its rows carry
the "in flight" note from the claim on, so after a crash the messages that may have
reached the server are known (see ``pbem.store.outbox``) and go out again with the same
Message-IDs. SMTP has no way to ask a server whether it already accepted a message, so
that window cannot be closed from this side: the stable Message-ID lets the recipient's
mail system drop the copy.

After a crash the rows a dead sender left 'sending' are made due again by
:meth:`OutboxSender.recover_interrupted` (the daemon calls it), rather than
waiting out their lease.

A sender made with ``keep_connections`` (the daemon's) runs every drain on one event
loop of its own and lets a sink that can (SMTP) keep its connections open between
drains, so a move's answer does not wait for a new connection; :meth:`OutboxSender.close`
closes them (``QUIT``), and a connection left unused for a while is closed by the next
drain after :meth:`OutboxSender.seconds_until_idle_close` (the daemon wakes for it).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import Connection, Engine, create_engine, text
from sqlalchemy.pool import NullPool
from sqlmodel import Session

from pbem.logsetup import mask_address
from pbem.metrics import METRICS
from pbem.store import models as m
from pbem.store.claim import claim_due
from pbem.store.counts import BOUNCED, DEFERRED, FAILED, count_event
from pbem.store.db import session_scope
from pbem.store.delivery import (
    CLOCK_SLACK,
    clear_failed,
    failed_seats,
    hold_for_mail,
    start_clock,
)
from pbem.store.health import OUTBOX, record_transport_error, record_transport_ok
from pbem.store.outbox import (
    DEFAULT_LEASE,
    DEFAULT_MAX_AGE,
    DEFAULT_MAX_BACKOFF,
    mark_failed,
    record_sent_many,
    release_interrupted,
)
from pbem.store.players import record_bounce
from pbem.transport.base import DeliveryResult, OutboundSink, OutgoingMail, reports_each_result

log = logging.getLogger("pbem.outbox")

_FAILURE_COUNTERS = {"deferred": DEFERRED, "failed": FAILED, "bounced": BOUNCED}

# A batch opens one more connection (lane) for every this many messages, up to ``lanes``
# (a sender that keeps its connections open: one for every message).
LANE_MIN = 4


class OutboxSender:
    """Sends what is due.  ``drain`` returns how many rows were delivered."""

    def __init__(
        self,
        db: Engine,
        sink: OutboundSink,
        clock: Callable[[], datetime],
        *,
        max_age: timedelta = DEFAULT_MAX_AGE,
        max_attempts: int | None = None,
        backoff: timedelta = timedelta(seconds=30),
        max_backoff: timedelta = DEFAULT_MAX_BACKOFF,
        batch: int = 50,
        lease: timedelta = DEFAULT_LEASE,
        lanes: int = 3,
        keep_connections: bool = False,
    ) -> None:
        self.db = db
        self._keep = keep_connections
        self.sink = sink
        self.clock = clock
        self.max_age = max_age
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.batch = batch
        self.lease = lease
        self.lanes = lanes
        self._postgres = db.dialect.name == "postgresql"
        self._lock_engine: Engine | None = None
        self._lock_conn: Connection | None = None
        # Claimed rows: outbox id → (game id, attempt number), for the delivery log.
        self._claimed: dict[int, tuple[int | None, int]] = {}
        # Claimed turn mails that start a clock: outbox id → (game id, when queued).
        self._clocks: dict[int, tuple[int, datetime]] = {}
        # (game id, address) of the claimed rows' seats whose mail had failed for good.
        self._held: set[tuple[int, str]] = set()
        # Whether the outbox transport is failing, as last recorded; None: not known
        # yet in this process (the record may say failing from before a restart), so
        # the first success records that it works.
        self._transport_failing: bool | None = None
        self._runner: asyncio.Runner | None = None
        # Delivery results of the current drain, by result ("sent", "deferred", ...).
        self._tally: Counter[str] = Counter()

    @property
    def sink(self) -> OutboundSink:
        return self._sink

    @sink.setter
    def sink(self, sink: OutboundSink) -> None:
        self._sink = sink
        # Asked once here rather than at every drain (it inspects a signature).
        self._reporting = reports_each_result(sink)
        if self._keep and hasattr(sink, "keep_open"):
            sink.keep_open = True

    @property
    def keep_connections(self) -> bool:
        """Whether the sink keeps its connections open between drains."""
        return self._keep and bool(getattr(self._sink, "keep_open", False))

    def drain(self, max_batches: int = 100) -> int:
        if not self.keep_connections:
            return asyncio.run(self.adrain(max_batches))
        if self._runner is None:
            self._runner = asyncio.Runner()
        return self._runner.run(self.adrain(max_batches))

    def seconds_until_idle_close(self) -> float | None:
        """Seconds until a connection kept open is due to be closed (by a drain), or None."""
        due = getattr(self.sink, "seconds_until_idle_close", None)
        return due() if self.keep_connections and due is not None else None

    async def adrain(self, max_batches: int = 100) -> int:
        """Send what is due, in up to ``max_batches`` batches; one log line says how many
        went out (each delivery is logged at debug level, each failure as a warning)."""
        self._tally.clear()
        try:
            return await self._drain(max_batches)
        finally:
            if self._tally:
                counts = ", ".join(f"{n} {result}" for result, n in sorted(self._tally.items()))
                log.info("outbox: %s", counts, extra={"deliveries": dict(self._tally)})

    async def _drain(self, max_batches: int) -> int:
        delivered = 0
        close_idle = getattr(self.sink, "close_idle", None)
        if self.keep_connections and close_idle is not None:
            await close_idle()
        for _ in range(max_batches):
            items = self._claim()
            if not items:
                break
            try:
                sent, trouble = await self._send(items)
            finally:
                self._release_locks()
            delivered += sent
            # A batch short of full took every row due: asking again finds none.
            if trouble or len(items) < self.batch:
                break
        return delivered

    # -- one batch ---------------------------------------------------------------------

    async def _send(self, items: list[OutgoingMail]) -> tuple[int, bool]:
        """Send one claimed batch over its lanes; each lane's results are recorded
        together, in one transaction, once the lane is done.

        Returns (delivered, whether a temporary failure says to stop for now).
        """
        reporting = self._reporting
        delivered = 0
        trouble = False

        async def send_lane(lane: list[OutgoingMail]) -> None:
            nonlocal delivered, trouble
            got: dict[int, DeliveryResult] = {}

            def keep(result: DeliveryResult) -> None:
                got.setdefault(int(result.id), result)

            missing = "no result"
            try:
                if reporting:
                    results = await self.sink.send_batch(lane, on_result=keep)  # type: ignore[call-arg]
                else:
                    results = await self.sink.send_batch(lane)
            except Exception as exc:
                log.warning("sending a batch failed: %s", exc)
                missing = f"{type(exc).__name__}: {exc}"
                self._note_transport(missing)
                results = []
            for result in results:
                keep(result)
            for item in lane:
                if int(item.id) not in got:
                    keep(DeliveryResult(item.id, item.recipients[0], False, True, missing))
            sent, stop = self._record(list(got.values()))
            delivered += sent
            trouble = trouble or stop

        await asyncio.gather(*(send_lane(lane) for lane in self._lanes(items)))
        return delivered, trouble

    def _record(self, results: list[DeliveryResult]) -> tuple[int, bool]:
        """Record one lane's results in one transaction: the delivered rows with one
        prepared statement (`record_sent_many`), each failure with its backoff. Returns
        (delivered, whether a temporary failure says to stop for now)."""
        now = self.clock()
        sent = [r for r in results if r.ok]
        failures = [r for r in results if not r.ok]
        outcomes: list[tuple[DeliveryResult, str]] = []
        if not failures:
            with self.db.begin() as connection:
                self._record_sent(connection, sent, now)
        else:
            with session_scope(self.db) as session:
                self._record_sent(session.connection(), sent, now)
                for result in failures:
                    outcomes.append((result, self._record_failure(session, result, now)))
        if sent and self._transport_failing is not False:
            # (None: not known in this process; the record may say failing from before.)
            self._note_transport(None)
        for result in sent:
            self._log_delivery(int(result.id), result.recipient, "sent")
        trouble = False
        for result, outcome in outcomes:
            trouble = trouble or result.temporary
            if result.temporary and not self._transport_failing:
                self._note_transport(result.error or "delivery failed")
            error = result.error or "delivery failed"
            self._log_delivery(int(result.id), result.recipient, outcome, error)
        return len(sent), trouble

    def _record_sent(
        self, connection: Connection, sent: list[DeliveryResult], now: datetime
    ) -> None:
        record_sent_many(connection, [int(result.id) for result in sent], now=now)
        for result in sent:
            row_id = int(result.id)
            clock = self._clocks.pop(row_id, None)
            if clock is not None and now - clock[1] > CLOCK_SLACK:
                start_clock(connection, clock[0], clock[1], now)
            game_id = self._claimed.get(row_id, (None, 0))[0]
            held = (game_id, result.recipient.lower())
            if game_id is not None and held in self._held:
                clear_failed(connection, game_id, result.recipient)
                self._held.discard(held)

    def _record_failure(self, session: Session, result: DeliveryResult, now: datetime) -> str:
        """Record a failed delivery in ``session``; what became of it (for the log)."""
        failed = mark_failed(
            session,
            int(result.id),
            result.error or "delivery failed",
            temporary=result.temporary,
            now=now,
            max_age=self.max_age,
            max_attempts=self.max_attempts,
            backoff=self.backoff,
            max_backoff=self.max_backoff,
        )
        if failed.status == m.OutboxStatus.FAILED.value:
            # A turn mail failed for good: the game waits for its seat.
            hold_for_mail(session, failed, now)
        if result.address_refused:
            # Refused at RCPT TO, so no bounce will come back: this is the bounce.
            record_bounce(session, result.recipient, result.error or "address refused", now=now)
            outcome = "bounced"
        else:
            outcome = "deferred" if failed.status == m.OutboxStatus.PENDING.value else "failed"
        # Counted with the attempt's record, for /metrics across restarts.
        count_event(session, _FAILURE_COUNTERS[outcome])
        return outcome

    def _note_transport(self, error: str | None) -> None:
        """Record the outbox transport's error (or that it works again) for
        ``pbem status``; a temporary failure is the transport's, a refused address not."""
        self._transport_failing = error is not None
        if error is not None:
            METRICS.transport_error("outbox")
        try:
            if error is None:
                record_transport_ok(self.db, OUTBOX, now=self.clock())
            else:
                record_transport_error(self.db, OUTBOX, error, now=self.clock())
        except Exception as exc:  # the record is for the operator: never stop for it
            log.warning("cannot record the outbox's state: %s", exc)

    def _log_delivery(
        self, row_id: int, recipient: str, result: str, error: str | None = None
    ) -> None:
        """One line per delivery attempt: recipient, game, result, attempt number (a
        delivery at debug level: the drain logs how many went out)."""
        METRICS.delivery(result)
        self._tally[result] += 1
        game_id, attempt = self._claimed.pop(row_id, (None, 0))
        to = mask_address(recipient)
        text = f"outbox {row_id} to {to}, game {game_id if game_id is not None else '-'}: "
        text += f"{result} (attempt {attempt})"
        if error:
            text += f": {error}"
        log.log(
            logging.DEBUG if result == "sent" else logging.WARNING,
            "%s",
            text,
            extra={
                "outbox": row_id,
                "recipient": to,
                "game": game_id,
                "result": result,
                "attempt": attempt,
                "error": error,
            },
        )

    def _lanes(self, items: list[OutgoingMail]) -> list[list[OutgoingMail]]:
        """``items`` split into up to ``lanes`` lists, one recipient's mail all in one (in
        order), the recipients dealt to the lanes in turn. A lane is worth a new
        connection from ``LANE_MIN`` messages on, and one kept open from the first (a
        move's two answers go out side by side); one list unless the sink reports each
        result as it goes."""
        if not items:
            return []
        per_lane = 1 if self.keep_connections else LANE_MIN
        count = min(self.lanes, len(items) // per_lane)
        if count <= 1 or not self._reporting:
            return [items]
        split: list[list[OutgoingMail]] = [[] for _ in range(count)]
        lane_of: dict[str, int] = {}
        for item in items:
            key = lane_of.setdefault(item.recipients[0].lower(), len(lane_of) % count)
            split[key].append(item)
        return [lane for lane in split if lane]

    def _claim(self) -> list[OutgoingMail]:
        """Claim up to ``batch`` due rows, each noted in flight (in the claim's transaction).

        On PostgreSQL the claim runs on this sender's own connection, which holds each
        claimed row's advisory lock until :meth:`_release_locks` (so another worker can
        tell that this sender is alive).
        """
        now = self.clock()
        if self._postgres:
            connection = self._locks()
            with connection.begin():
                return self._claim_in(connection, now, lock_rows=True)
        with self.db.begin() as connection:
            return self._claim_in(connection, now, lock_rows=False)

    def _claim_in(
        self, connection: Connection, now: datetime, *, lock_rows: bool
    ) -> list[OutgoingMail]:
        rows = claim_due(
            connection, now, self.batch, lease=self.lease, lock_rows=lock_rows, in_flight=True
        )
        self._claimed = {r.id: (r.game_id, r.attempts) for r in rows}
        self._clocks = {
            r.id: (r.game_id, r.created_at)
            for r in rows
            if r.starts_clock and r.game_id is not None
        }
        games = [r.game_id for r in rows if r.game_id is not None]
        self._held = failed_seats(connection, games) if games else set()
        return [
            OutgoingMail(id=str(r.id), sender=r.sender, recipients=[r.recipient], raw=r.raw)
            for r in rows
        ]

    # -- PostgreSQL row locks and recovery -----------------------------------------------

    def _locks(self) -> Connection:
        """This sender's own connection (not pooled: when it goes, so do its locks)."""
        if self._lock_conn is None:
            if self._lock_engine is None:
                self._lock_engine = create_engine(self.db.url, poolclass=NullPool)
            self._lock_conn = self._lock_engine.connect()
        return self._lock_conn

    def _release_locks(self) -> None:
        conn = self._lock_conn
        if conn is None:
            return
        try:
            conn.execute(text("SELECT pg_advisory_unlock_all()"))
            conn.commit()
        except Exception as exc:
            # A broken connection has lost its locks with it; start afresh next time.
            log.warning("releasing the outbox row locks failed: %s", exc)
            self._close_locks()

    def _close_locks(self) -> None:
        conn, self._lock_conn = self._lock_conn, None
        if conn is not None:
            try:
                conn.invalidate()
                conn.close()
            except Exception:
                log.debug("closing the outbox lock connection failed", exc_info=True)

    def recover_interrupted(self) -> list[int]:
        """Make rows a dead sender left 'sending' due now; returns their ids.

        Call it when the daemon starts (on SQLite only the daemon sends, so every such
        row is a dead one's) and now and then with PostgreSQL workers (a row whose
        advisory lock nobody holds belongs to a dead worker).
        """
        with session_scope(self.db) as session:
            ids = release_interrupted(session, now=self.clock())
        if ids:
            log.warning("outbox rows %s were interrupted by a crash; due again", ids)
        return ids

    def close(self) -> None:
        """Close the connections kept open (``QUIT``) and the lock connection
        (PostgreSQL); the sender may be used again."""
        runner, self._runner = self._runner, None
        if runner is not None:
            aclose = getattr(self.sink, "aclose", None)
            try:
                if aclose is not None:
                    runner.run(aclose())
            except Exception as exc:  # stopping goes on: the server times the session out
                log.warning("closing the outbox connections failed: %s", exc)
            finally:
                runner.close()
        self._close_locks()
        if self._lock_engine is not None:
            self._lock_engine.dispose()
            self._lock_engine = None
