"""What the monitoring counts across restarts: one row of ``event_count`` per counter,
added to in the transaction that did the thing counted (so a crash loses no count and
counts nothing that was rolled back), read by ``/metrics`` (`pbem.listen.metrics`) in
one query of a table of a few rows, however long the history.

Only what is rare is counted here — a failed delivery attempt, a reminder, a timeout,
an abort —, never a move or a delivered mail: the path of a move writes no counter row.
The counts are the installation's, the same read from every PostgreSQL worker.
"""

from __future__ import annotations

from sqlmodel import Session, col, select

from pbem.store._sql import upsert
from pbem.store.models import EventCount

DEFERRED = "delivery_deferred"
"""A delivery attempt refused for now (or the relay unreachable): tried again later."""
FAILED = "delivery_failed"
"""A delivery attempt after which the mail failed for good."""
BOUNCED = "delivery_bounced"
"""A delivery attempt refused at RCPT TO for good (the address does not exist)."""
REMINDERS = "reminders"
"""A game's players to move (or to cut) reminded, once per game and round."""
TIMEOUTS = "timeouts"
"""A game's deadline passed and the timeout rule applied (forfeit, autoplay, abort)."""
ABORTS = "games_aborted"
"""A game aborted, however (the admin, a cut deadline, nobody joined)."""

COUNTERS = (DEFERRED, FAILED, BOUNCED, REMINDERS, TIMEOUTS, ABORTS)


def count_event(session: Session, name: str, n: int = 1) -> None:
    """Add ``n`` to counter ``name`` in ``session``'s transaction."""
    if name not in COUNTERS:
        raise ValueError(f"no counter {name!r}")
    statement = (
        upsert(session, EventCount)
        .values(name=name, value=n)
        .on_conflict_do_update(index_elements=["name"], set_={"value": col(EventCount.value) + n})
    )
    session.exec(statement)


def event_counts(session: Session) -> dict[str, int]:
    """Every counter's value (0 for one never counted)."""
    counted = {row.name: int(row.value) for row in session.exec(select(EventCount))}
    return {name: counted.get(name, 0) for name in COUNTERS}
