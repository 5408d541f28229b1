"""The daemon's share of keeping stored mail small (`pbem.store.retention`).

Once every `PRUNE_EVERY` (by the service's clock) a step deletes the raw bytes of mail
that is done with, `PRUNE_BATCHES` batches of `BATCH` rows at most, each batch a short
transaction of its own: on SQLite a move waits for one batch at most, never for the
whole backlog. When more is due it prunes again `CATCH_UP` later, so that a backlog
(a database from before pruning) costs each step little; ``pbem db prune`` empties a
backlog at once. A failure is logged and tried again later: pruning never stops the
daemon.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from pbem.service import Service
from pbem.store.retention import BATCH, Pruned, prune

log = logging.getLogger("pbem.daemon")

PRUNE_EVERY = timedelta(minutes=10)
PRUNE_BATCHES = 2
CATCH_UP = timedelta(seconds=5)


class Pruner:
    """Prunes a little at a time, when due."""

    def __init__(self, service: Service, *, batch: int = BATCH) -> None:
        self.service = service
        self.batch = batch
        self.due: datetime | None = None  # None: at the first step

    def step(self) -> Pruned:
        """Prune if it is due; what was emptied."""
        now = self.service.clock()
        if self.due is not None and now < self.due:
            return Pruned()
        settings = self.service.settings
        try:
            done = prune(
                self.service.db,
                now=now,
                keep=timedelta(days=settings.mail_retention_days),
                keep_after_game=timedelta(days=settings.game_mail_retention_days),
                limit=self.batch,
                max_batches=PRUNE_BATCHES,
            )
        except Exception as exc:  # the next try comes at the next period
            log.warning("pruning stored mail failed: %s", exc)
            self.due = now + PRUNE_EVERY
            return Pruned()
        more = done.batches >= PRUNE_BATCHES and (
            done.inbound >= self.batch or done.outbox >= self.batch
        )
        self.due = now + (CATCH_UP if more else PRUNE_EVERY)
        if done.rows:
            log.info(
                "pruned the raw bytes of %d received and %d sent mails (%d bytes)",
                done.inbound,
                done.outbox,
                done.inbound_bytes + done.outbox_bytes,
            )
        return done
