"""When the daemon next has work besides incoming mail, asked in one query.

The daemon waits for mail, and for the next outbox retry or timer (a reminder, a
timeout, an invitation's expiry, the day's digests, players to tell that a game waits
for a seat whose mail failed). :func:`ask` reads both times in one statement of scalar
subqueries; the daemon keeps the answer (:class:`Dues`) until something it did, or a
wake-up, may have changed it, so an idle step runs neither the timers nor a drain that
could not claim anything, and a wait asks nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, and_, bindparam, func, literal, or_, select, true

from pbem.service.send.digest import digest_due
from pbem.store import models as m

_GAME = m.Game.__table__  # type: ignore[attr-defined]
_SEAT = m.Seat.__table__  # type: ignore[attr-defined]
_OUTBOX = m.Outbox.__table__  # type: ignore[attr-defined]
_INVITATION = m.Invitation.__table__  # type: ignore[attr-defined]
_PLAYER = m.Player.__table__  # type: ignore[attr-defined]
_INBOUND = m.Inbound.__table__  # type: ignore[attr-defined]

_TIMED = _GAME.c.status.in_((m.GameStatus.ACTIVE.value, m.GameStatus.CUTTING.value))
_IN_PROGRESS = _GAME.c.status.in_((m.GameStatus.ACTIVE.value, m.GameStatus.PAUSED.value))

# Each part is read from the rows it is about (games on the clock, invitations pending,
# players who take a digest, seats of games in progress, mail pending) through the
# index of their state, never through the history: the forms below (``id IN (SELECT id
# … WHERE state)``, ``… LIMIT 1``) keep SQLite on those indexes once it holds statistics
# (``ANALYZE``), which say a state column has few values and would have it read every
# row (`tests/pbem/store/test_query_plans.py`).


def _pending(table: Any, column: Any, pending: Any) -> Any:
    """The least ``column`` of the rows of ``table`` whose state is ``pending``."""
    ids = select(table.c.id).where(pending)
    return select(func.min(column)).where(table.c.id.in_(ids)).scalar_subquery()


def _one(statement: Any) -> Any:
    """1 when ``statement`` finds a row, else NULL (an EXISTS SQLite may scan for)."""
    return statement.limit(1).scalar_subquery()


# One statement: the next outbox retry, the next reminder and deadline of a game on the
# clock, the next invitation to lapse, whether anyone takes a digest and whether one has
# not had the digest of the day ``:day`` (as `send_digests` selects them), and whether a seat
# of a game in progress has a failed (or restored) mail its fellow players were not told
# of (as `pbem.service.timers.tell_waiting` selects them).
_DUES = select(
    # (A 'sending' row is due again when its lease ends: its sender died, as
    # `claim_due_outbox` takes it.)
    select(func.min(_OUTBOX.c.next_attempt_at))
    .where(_OUTBOX.c.status.in_((m.OutboxStatus.PENDING.value, m.OutboxStatus.SENDING.value)))
    .scalar_subquery(),
    _pending(_GAME, _GAME.c.next_reminder_at, _TIMED),
    _pending(_GAME, _GAME.c.deadline_at, _TIMED),
    _pending(
        _INVITATION,
        _INVITATION.c.expires_at,
        _INVITATION.c.status == m.InvitationStatus.PENDING.value,
    ),
    _one(select(literal(1)).where(_PLAYER.c.digest == true())),
    _one(
        select(literal(1)).where(
            _PLAYER.c.digest == true(),
            or_(_PLAYER.c.digest_day.is_(None), _PLAYER.c.digest_day < bindparam("day")),
        )
    ),
    _one(
        select(literal(1))
        .select_from(_SEAT.join(_GAME, _GAME.c.id == _SEAT.c.game_id))
        .where(
            _IN_PROGRESS,
            or_(
                and_(_SEAT.c.mail_failed_at.is_not(None), _SEAT.c.mail_failed_told.is_(None)),
                and_(_SEAT.c.mail_failed_told.is_(True), _SEAT.c.mail_failed_at.is_(None)),
            ),
        )
    ),
    # A proven mail that waits for the hourly volume (`pbem.service.intake.rules.delay`).
    _pending(_INBOUND, _INBOUND.c.not_before, _INBOUND.c.status == m.InboundStatus.PENDING.value),
)


@dataclass(frozen=True)
class Dues:
    """The next outbox retry, the next timer and the next stored mail that waits (None:
    none), asked at ``asked``."""

    outbox: datetime | None
    timers: datetime | None
    asked: float  # time.monotonic() when asked
    waiting: datetime | None = None

    def outbox_due(self, now: datetime) -> bool:
        return self.outbox is not None and self.outbox <= now

    def timers_due(self, now: datetime) -> bool:
        return self.timers is not None and self.timers <= now


def ask(db: Engine, digest_hour: int, now: datetime, monotonic: float) -> Dues:
    """The next outbox retry and timer of ``db`` as of ``now``, in one query."""
    with db.connect() as connection:
        row = connection.execute(_DUES, {"day": now.date().isoformat()}).one()
    outbox, reminder, deadline, lapse, digests, undigested, untold, waiting = row
    times = [t for t in (reminder, deadline, lapse) if t is not None]
    if digests:
        times.append(digest_due(digest_hour, now))
    if undigested and now.hour >= digest_hour:  # today's digests are due and not all sent
        times.append(now)
    if untold:
        times.append(now)
    return Dues(outbox=outbox, timers=min(times, default=None), asked=monotonic, waiting=waiting)
