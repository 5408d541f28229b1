"""Drain the outbox through a transport: at least once, stable Message-IDs, retries.

Rows are claimed in one short transaction (marked 'sending' with a lease, so a
sender that dies leaves them to be claimed again), sent outside any transaction
through one connection for the whole batch, and the per-recipient results are
recorded in another: delivered, retried later with backoff and jitter
(temporary failure), or failed (permanent, or out of attempts).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import Engine

from pbem.store.db import session_scope
from pbem.store.outbox import claim_due_outbox, mark_failed, mark_sent
from pbem.transport.base import OutboundSink, OutgoingMail

log = logging.getLogger("pbem.outbox")


class OutboxSender:
    """Sends what is due.  ``drain`` returns how many rows were delivered."""

    def __init__(
        self,
        db: Engine,
        sink: OutboundSink,
        clock: Callable[[], datetime],
        *,
        max_attempts: int = 8,
        backoff: timedelta = timedelta(seconds=30),
        batch: int = 50,
    ) -> None:
        self.db = db
        self.sink = sink
        self.clock = clock
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.batch = batch

    def drain(self, max_batches: int = 100) -> int:
        return asyncio.run(self.adrain(max_batches))

    async def adrain(self, max_batches: int = 100) -> int:
        delivered = 0
        for _ in range(max_batches):
            with session_scope(self.db) as session:
                rows = claim_due_outbox(session, self.clock(), self.batch)
                items = [
                    OutgoingMail(id=str(r.id), sender=r.sender, recipients=[r.recipient], raw=r.raw)
                    for r in rows
                ]
            if not items:
                break
            try:
                results = await self.sink.send_batch(items)
            except Exception as exc:
                log.warning("sending a batch failed: %s", exc)
                with session_scope(self.db) as session:
                    for item in items:
                        mark_failed(
                            session,
                            int(item.id),
                            f"{type(exc).__name__}: {exc}",
                            temporary=True,
                            now=self.clock(),
                            max_attempts=self.max_attempts,
                            backoff=self.backoff,
                        )
                break
            by_id = {r.id: r for r in results}
            temporary_trouble = False
            with session_scope(self.db) as session:
                for item in items:
                    result = by_id.get(item.id)
                    if result is not None and result.ok:
                        mark_sent(session, int(item.id), now=self.clock())
                        delivered += 1
                        continue
                    error = result.error if result is not None else "no result from transport"
                    temporary = result.temporary if result is not None else True
                    temporary_trouble = temporary_trouble or temporary
                    mark_failed(
                        session,
                        int(item.id),
                        error or "delivery failed",
                        temporary=temporary,
                        now=self.clock(),
                        max_attempts=self.max_attempts,
                        backoff=self.backoff,
                    )
                    log.warning(
                        "delivery of outbox %s to %s failed (%s): %s",
                        item.id,
                        item.recipients[0],
                        "temporary" if temporary else "permanent",
                        error,
                    )
            if temporary_trouble:
                break
        return delivered
