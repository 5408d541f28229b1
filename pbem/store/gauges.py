"""What the monitoring reads from the database at each scrape (``/metrics``, see
`pbem.listen.metrics`): the outbox's queue, the inbound messages waiting and the
transports' state, each one query that reads live rows only (by the status indexes; the
transports' table has one row per transport)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlmodel import Session, col, func, select

from pbem.store.health import failing
from pbem.store.models import Inbound, InboundStatus, Outbox, OutboxStatus, TransportState


@dataclass(frozen=True)
class Queues:
    """The outbox rows waiting to go (pending, deferred or being sent), the seconds the
    oldest one that is due has been due (0: none is), the seconds since the oldest one
    was queued (or queued again by ``pbem outbox retry``; 0: none waits), the inbound
    messages pending, and whether each transport is failing (its last error later than
    its last success)."""

    outbox_depth: int
    oldest_due_seconds: float
    inbound_pending: int
    oldest_queued_seconds: float = 0.0
    failing: dict[str, bool] = field(default_factory=dict)


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
    # Undelivered mail by when it was queued: a mail deferred again and again is never
    # due for long, but it has waited since then (the outbox's status index finds the
    # rows waiting, the live ones only).
    queued = session.exec(
        select(func.min(func.coalesce(Outbox.retried_at, Outbox.created_at))).where(
            col(Outbox.status).in_(waiting)
        )
    ).one()
    pending = session.exec(
        select(func.count())
        .select_from(Inbound)
        .where(Inbound.status == InboundStatus.PENDING.value)
    ).one()
    due = (now - oldest).total_seconds() if oldest is not None else 0.0
    waited = (now - queued).total_seconds() if queued is not None else 0.0
    states = session.exec(select(TransportState))
    failing_now = {state.name: failing(state) for state in states}
    return Queues(int(depth), max(0.0, due), int(pending), max(0.0, waited), failing_now)
