"""The loop: receive → process → send, and the timers (reminders, timeouts).

One ``step`` fetches what the inbox holds, stores each message raw (committed),
processes every pending message (ten to a transaction, each ending as it would alone;
the outbox is drained after each transaction, so the first moves of a long batch go
out early), and only then acks the fetched messages to the inbox
(Maildir: flagged seen; IMAP: \\Seen or moved).
Then it drains the outbox if a retry is due, runs the timers if one is due (both
known from one query, `pbem.run.due`, kept until something may have changed them: an
idle step costs nothing when nothing is due) and, when due, empties the raw bytes of a
few batches of stored mail that is done with (`pbem.run.pruner`).  ``run`` repeats
steps until stopped, waiting in between until mail arrives (IMAP IDLE, which it stays in
while nothing happens, or a Maildir poll), until the next outbox retry or timer is due,
or until the command line wakes it because it queued mail (see ``pbem.run.wakeup``).  Fed over LMTP,
the inbox is the listener's (``pbem.listen.lmtp``): the listener has stored each message
before the step, and its "stored" ends the wait at once.  Each message
processed is logged on one line, the deliveries of a drain on one.

On SQLite only one daemon may run per database: a second one is refused with a
clear message (an exclusive lock file beside the database: `pbem.run.lock`).
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from dataclasses import dataclass

from sqlalchemy import Connection, text
from sqlmodel import Session, col, select

from pbem.logsetup import mask_address
from pbem.metrics import METRICS
from pbem.run.due import Dues, ask
from pbem.run.lock import DaemonError, lock_for
from pbem.run.pruner import Pruner
from pbem.run.sender import OutboxSender
from pbem.run.wakeup import Wakeup
from pbem.service import ALREADY_PROCESSED, Outcome, Service
from pbem.store import models as m
from pbem.store.db import session_scope
from pbem.store.health import INBOX, record_transport_error, record_transport_ok
from pbem.transport.base import InboundSource, TransportError

log = logging.getLogger("pbem.daemon")

# How often a PostgreSQL worker looks for outbox rows left 'sending' by a dead worker.
RECOVER_SECONDS = 2.0
# A step processes up to PROCESS_LIMIT pending messages, sending the mail of every
# PROCESS_CHUNK of them before going on.
PROCESS_LIMIT = 100
PROCESS_CHUNK = 10
# Fetched messages are stored RECEIVE_CHUNK to a transaction.
RECEIVE_CHUNK = 50
# The longest wait on an inbox that pushes (IMAP IDLE renews itself within it anyway).
IDLE_WAIT_SECONDS = 25 * 60.0
# The longest wait of a PostgreSQL worker: it does not wake for another worker's own
# mail, so it looks now and then for what a worker that died left (its rows 'sending',
# its retries).
SHARED_WAIT_SECONDS = 60.0


@dataclass
class StepStats:
    fetched: int = 0
    new: int = 0
    processed: int = 0
    sent: int = 0
    timers: int = 0
    pruned: int = 0  # stored mails whose raw bytes were emptied (not work to wait for)

    @property
    def busy(self) -> bool:
        return bool(self.fetched or self.processed or self.sent or self.timers)


class Daemon:
    def __init__(
        self,
        service: Service,
        inbox: InboundSource,
        sender: OutboxSender,
        *,
        source: str = "inbox",
        poll_seconds: float = 5.0,
    ) -> None:
        self.service = service
        self.inbox = inbox
        self.sender = sender
        self.source = source
        self.poll_seconds = poll_seconds
        self.stop_event = threading.Event()
        self._lock = lock_for(service.settings.db_url)
        self._reader_conn: Connection | None = None
        self._reader = False
        self.wakeup = Wakeup(service.db, worker=str(getattr(inbox, "worker", "")))
        METRICS.started(service.clock().timestamp())
        # The next outbox retry and timer (`pbem.run.due`), or None when they must be asked.
        self._dues: Dues | None = None
        # Whether stored mail may wait that nobody handed over (`_process`): asked then.
        self._look = True
        self.pruner = Pruner(service)
        # Waits that ended for work (mail, a poke), and the steps after them that found
        # none (another worker took it first): work a worker woke for but could not take.
        self.wakes = 0
        self.empty_wakes = 0

    def claim(self) -> None:
        """Take the database for this daemon (SQLite: the lock file; a no-op on PostgreSQL,
        where workers share it). ``run`` does it too.

        Raises:
            DaemonError: another daemon runs on this SQLite database.
        """
        if self._lock is not None:
            self._lock.acquire()

    def is_reader(self) -> bool:
        """Whether this worker reads the inbox now.

        With SQLite there is one daemon, so always.  With PostgreSQL several
        workers share the work, and exactly one reads the inbox: the holder of a
        session advisory lock named after the inbox, which the server frees the
        moment its holder's connection dies, so another worker takes over.
        """
        db = self.service.db
        if db.dialect.name != "postgresql":
            return True
        key = zlib.crc32(self.service.settings.inbound.encode()) & 0x7FFFFFFF
        try:
            if self._reader_conn is None:
                self._reader_conn = db.connect()
            if self._reader:
                self._reader_conn.execute(text("SELECT 1"))
                return True
            got = self._reader_conn.execute(
                text("SELECT pg_try_advisory_lock(:k)"), {"k": key}
            ).scalar()
            self._reader_conn.commit()
            self._reader = bool(got)
        except Exception as exc:
            log.warning("inbox reader lock lost: %s", exc)
            self._drop_reader()
        return self._reader

    def _drop_reader(self) -> None:
        held, self._reader = self._reader, False
        if self._reader_conn is not None:
            if held:
                try:
                    # Let go of the lock now: a closed socket frees it only when the
                    # server's backend notices and exits, and a new worker asking in the
                    # meantime would not read the inbox.
                    self._reader_conn.execute(text("SELECT pg_advisory_unlock_all()"))
                    self._reader_conn.commit()
                except Exception:
                    log.debug("letting go of the reader lock failed", exc_info=True)
            try:
                # Invalidate, not just close: a closed connection goes back to the pool
                # still holding the session advisory lock, and no worker could read.
                self._reader_conn.invalidate()
                self._reader_conn.close()
            except Exception:
                log.debug("closing the reader connection failed", exc_info=True)
            self._reader_conn = None

    def step(self, *, fetch: bool = True) -> StepStats:
        """Receive (unless ``fetch`` is False: a wake-up that was not about the inbox),
        process what is pending, send what is due and run the timers that are due."""
        self._dues = None  # asked afresh: the database may have changed since
        self._look = True
        return self._step(fetch)

    def _step(self, fetch: bool) -> StepStats:
        stats = StepStats()
        fetched = self.inbox.fetch() if fetch and (self._listens or self.is_reader()) else []
        stats.fetched = len(fetched)
        stored: list[tuple[str, int]] = []
        for start in range(0, len(fetched), RECEIVE_CHUNK):
            chunk = fetched[start : start + RECEIVE_CHUNK]
            received = self.service.receive_many(
                [(message.raw, message.oversize) for message in chunk], self.source
            )
            for message, (inbound_id, created) in zip(chunk, received, strict=True):
                stats.new += int(created)
                stored.append((message.key, inbound_id))
        self._process(stats)
        if stored:
            done: list[str] = []
            with session_scope(self.service.db) as session:
                for key, inbound_id in stored:
                    row = session.get(m.Inbound, inbound_id)
                    if row is not None and row.status != m.InboundStatus.PENDING.value:
                        done.append(key)
            # Acknowledge outside that transaction: an IMAP ack saves the inbox cursor in a
            # transaction of its own, which on SQLite would wait for this one's write lock.
            ack_many = getattr(self.inbox, "ack_many", None)
            if ack_many is not None and done:
                ack_many(done)  # one command for the whole batch
            else:
                for key in done:
                    self.inbox.ack(key)
        dues = self._known_dues()
        now = self.service.clock()  # (read after: what the query found due now is due)
        if dues.outbox_due(now):
            self._dues = None
            stats.sent += self.sender.drain()
            # A mail that failed for good holds its seat: the others are told this step.
            dues = self._known_dues()
            now = self.service.clock()
        if dues.timers_due(now):
            self._dues = None
            stats.timers = self.service.run_timers()
            if stats.timers:
                stats.sent += self.sender.drain()
        # Mail done with loses its raw bytes, a few short batches at a time.
        stats.pruned = self.pruner.step().rows
        return stats

    def _process(self, stats: StepStats) -> None:
        """Process the pending messages in chunks, sending each chunk's mail before the
        next: the first moves of a long batch are not held back until the whole batch is
        processed. The messages are those the listener handed over (`LmtpInbound.taken`)
        when nothing else may wait; otherwise they are asked of the database."""
        handed = self.inbox.taken() if self._listens else None  # type: ignore[attr-defined]
        look = self._look or handed is None
        self._look = False
        queue = handed or []
        for _ in range(PROCESS_LIMIT // PROCESS_CHUNK):
            if look:
                ids = self.service.pending_ids(PROCESS_CHUNK)
            else:
                ids, queue = queue[:PROCESS_CHUNK], queue[PROCESS_CHUNK:]
            if not ids:
                return
            outcomes = self.service.process_many(ids)
            self._log_outcomes(ids, outcomes)
            # Messages another worker holds are not work done here: counting them would
            # keep this worker stepping in a tight loop until that worker commits.
            done_here = sum(1 for outcome in outcomes if outcome != ALREADY_PROCESSED)
            stats.processed += done_here
            if any(outcome.status == m.InboundStatus.PENDING.value for outcome in outcomes):
                self._look = True  # left pending (a game that kept changing): asked again
            if done_here:
                self._dues = None  # a move sets clocks; its intake may hold a seat
                stats.sent += self.sender.drain()
            if look and (len(outcomes) < PROCESS_CHUNK or not done_here):
                return
        self._look = True  # the step's limit: more may wait

    def _known_dues(self) -> Dues:
        """The next outbox retry and timer, asked unless known (on PostgreSQL known for
        ``RECOVER_SECONDS`` at most: other workers change them too)."""
        dues = self._dues
        if dues is None or (self._shared and time.monotonic() - dues.asked > RECOVER_SECONDS):
            settings = self.service.settings
            now = self.service.clock()
            dues = self._dues = ask(self.service.db, settings.digest_hour, now, time.monotonic())
        return dues

    def _log_outcomes(self, ids: list[int], outcomes: list[Outcome]) -> None:
        """One INFO line per message processed here: id, sender, game, outcome, reason
        (what the outcome does not say of its message is asked of the database)."""
        mine = [(i, o) for i, o in zip(ids, outcomes, strict=True) if o is not ALREADY_PROCESSED]
        if not mine:
            return
        senders: dict[int, str | None] = {}
        waits: dict[int, float] = {}
        for i, o in mine:
            if o.logged is not None:
                senders[i] = o.logged[0]
                if o.logged[1] is not None:
                    waits[i] = o.logged[1]
        unknown = [i for i, o in mine if o.logged is None]
        if unknown:
            with Session(self.service.db) as session:
                rows = session.exec(
                    select(
                        m.Inbound.id,
                        m.Inbound.sender,
                        m.Inbound.received_at,
                        m.Inbound.processed_at,
                    ).where(col(m.Inbound.id).in_(unknown))
                ).all()
            for row_id, sender, received_at, processed_at in rows:
                senders[int(row_id or 0)] = sender
                if received_at and processed_at:
                    waits[int(row_id or 0)] = (processed_at - received_at).total_seconds()
        for inbound_id, outcome in mine:
            moves = len(outcome.applied) if outcome.status == m.InboundStatus.APPLIED else 0
            METRICS.message(outcome.status, moves, waits.get(inbound_id))
        if not log.isEnabledFor(logging.INFO):
            return
        for inbound_id, outcome in mine:
            sender = mask_address(senders.get(inbound_id)) or "-"
            game = outcome.game_id if outcome.game_id is not None else "-"
            log.info(
                "inbound %s from %s, game %s: %s (%s)",
                inbound_id,
                sender,
                game,
                outcome.status,
                outcome.reason,
                extra={
                    "inbound": inbound_id,
                    "sender": sender,
                    "game": outcome.game_id,
                    "outcome": outcome.status,
                    "reason": outcome.reason,
                },
            )

    def run(self, *, once: bool = False) -> None:
        """Run until ``stop()`` (or, with ``once``, until nothing is left to do)."""
        self.claim()
        try:
            # Listen for wake-ups before the first step looks for work: a poke sent between
            # that look and the first wait (a listener's, another worker's) is not lost.
            self.wakeup.open()
            # Rows a crashed sender left 'sending' are due now, not when their lease ends.
            self.sender.recover_interrupted()
            recovered_at = time.monotonic()
            failures = 0
            fetch = True
            woken = False
            while not self.stop_event.is_set():
                if self._shared and time.monotonic() - recovered_at >= RECOVER_SECONDS:
                    if self.sender.recover_interrupted():  # another worker may have died
                        self._dues = None
                    recovered_at = time.monotonic()
                try:
                    stats = self._step(fetch)
                    if failures:
                        self._note_transport(None)
                    failures = 0
                except TransportError as exc:
                    self._note_transport(str(exc))
                    if once:
                        raise DaemonError(f"the mail transport failed: {exc}") from exc
                    failures += 1
                    delay = min(60.0, 0.5 * 2 ** min(failures, 7))
                    log.warning("mail transport failed (%s); retrying in %.1f s", exc, delay)
                    self.wakeup.wait(delay)
                    fetch = True
                    woken = False
                    continue
                fetch = True
                if stats.busy:
                    log.debug(
                        "step: %d fetched (%d new), %d processed, %d sent, %d timers",
                        stats.fetched,
                        stats.new,
                        stats.processed,
                        stats.sent,
                        stats.timers,
                    )
                if once and not stats.busy:
                    break
                if woken and not stats.busy:
                    self.empty_wakes += 1
                    log.debug("woken for work another worker took (%d so far)", self.empty_wakes)
                woken = False
                if self.stop_event.is_set() or (stats.busy and not self._settled(stats)):
                    continue
                fetch, woken = self._wait()
        finally:
            self.close()

    def close(self) -> None:
        """Let go of the inbox, the sender, the wake-up and the database lock."""
        self._drop_reader()
        self.wakeup.close()
        self.inbox.close()
        self.sender.close()
        if self._lock is not None:
            self._lock.release()

    def _note_transport(self, error: str | None) -> None:
        """Record the inbox's error (or that it works again) for ``pbem status``."""
        try:
            now = self.service.clock()
            if error is None:
                record_transport_ok(self.service.db, INBOX, now=now)
            else:
                METRICS.transport_error("inbox")
                record_transport_error(self.service.db, INBOX, error, now=now)
        except Exception as exc:  # the record is for the operator: never stop for it
            log.warning("cannot record the inbox's state: %s", exc)

    def _wait(self) -> tuple[bool, bool]:
        """Wait for mail, a wake-up (mail the command line queued, a stop) or the next
        timer or outbox retry, whichever comes first. Returns whether the inbox should be
        read, and whether the wait ended for work (mail, a poke) rather than the time.

        An inbox that pushes (IMAP IDLE) is read only when it said something came: a
        wait that ends for another reason sends no command to the server. An inbox that
        is polled is read after every wait. A notification that is no work for this
        worker (`pbem.run.wakeup`: another worker's own mail) does not end the wait."""
        pushes = bool(getattr(self.inbox, "pushes", False))
        if self._reader or not self._shared or self._listens:
            longest = IDLE_WAIT_SECONDS if pushes else self.poll_seconds
            if self._shared:
                longest = min(longest, SHARED_WAIT_SECONDS)
            timeout = self._wait_seconds(longest)
            log.debug("waiting up to %.1f s", timeout)
            deadline = time.monotonic() + timeout
            while True:
                news = self.inbox.wait(timeout, self.wakeup.fds())
                poked = self.wakeup.check()
                timeout = deadline - time.monotonic()
                if news or poked or self.stop_event.is_set() or timeout <= 0:
                    break
            woke = news or poked
        else:
            self.wakeup.wait(self._wait_seconds(min(self.poll_seconds, 1.0)))
            news = True  # (the shared inbox's reader stores it: looked for every time)
            poked = woke = self.wakeup.check()
        if poked:
            log.debug("woken up: mail was queued")
            self._dues = None  # the command line queued mail or changed clocks
        if poked or not news:
            # A poke may be about stored mail; the time may be a waiting mail's.
            self._look = True
        if woke:
            self.wakes += 1
        return news or not pushes, woke

    def _settled(self, stats: StepStats) -> bool:
        """Whether a busy step leaves nothing that the wait would not announce, so the
        loop may wait at once instead of stepping again to look. True only for an inbox
        fed by a listener (LMTP): every message stored after the step looked wakes the
        wait (the listener's "stored", another worker's NOTIFY), so only a step that
        stopped at its limit, or ran timers (which may have made more to do), leaves
        work behind. (An inbox that is read must be read again: mail may have come.)"""
        return self._listens and stats.processed < PROCESS_LIMIT and not stats.timers

    @property
    def _listens(self) -> bool:
        """Whether this worker's inbox is its own listener's (LMTP): every worker waits on
        it, and none needs the reader lock of a shared inbox."""
        return bool(getattr(self.inbox, "listens", False))

    @property
    def _shared(self) -> bool:
        """Whether several workers may share the database (PostgreSQL)."""
        return self.service.db.dialect.name == "postgresql"

    def _wait_seconds(self, longest: float) -> float:
        """How long to wait for mail: ``longest``, or less when an outbox retry or a timer
        (a reminder, a timeout) is due sooner: a delivery that failed for a moment is
        retried on time, and a reminder goes out on time, not at the next poll."""
        dues = self._known_dues()
        now = self.service.clock()
        until: list[float | None] = [
            (t - now).total_seconds()
            for t in (dues.outbox, dues.timers, dues.waiting)
            if t is not None
        ]
        until.append(self.sender.seconds_until_idle_close())
        due = min((max(0.0, d) for d in until if d is not None), default=None)
        if due is None:
            return longest
        return max(0.05, min(longest, due))

    def stop(self) -> None:
        """Stop after the step under way; a wait ends at once (safe from a signal handler)."""
        self.stop_event.set()
        self.wakeup.stop()
