"""What the monitoring reads from the database at each scrape (``/metrics``, see
`pbem.listen.metrics`): the outbox's queue and the inbound messages waiting, each one
indexed query."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, func, select

from pbem.store.models import Inbound, InboundStatus, Outbox, OutboxStatus


@dataclass(frozen=True)
class Queues:
    """The outbox rows waiting to go (pending, deferred or being sent), the seconds the
    oldest one that is due has been due (0: none is), and the inbound messages pending."""

    outbox_depth: int
    oldest_due_seconds: float
    inbound_pending: int


def queues(session: Session, now: datetime) -> Queues:
    """The queues at ``now``."""
    waiting = [OutboxStatus.PENDING.value, OutboxStatus.SENDING.value]
    depth = session.exec(
        select(func.count()).select_from(Outbox).where(col(Outbox.status).in_(waiting))
    ).one()
    oldest = session.exec(
        select(func.min(Outbox.next_attempt_at)).where(
            Outbox.status == OutboxStatus.PENDING.value, col(Outbox.next_attempt_at) <= now
        )
    ).one()
    pending = session.exec(
        select(func.count())
        .select_from(Inbound)
        .where(Inbound.status == InboundStatus.PENDING.value)
    ).one()
    due = (now - oldest).total_seconds() if oldest is not None else 0.0
    return Queues(int(depth), max(0.0, due), int(pending))
