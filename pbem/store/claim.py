"""The sender's claim of due outbox rows, in plain statements built once.

`claim_due` does what `pbem.store.outbox.claim_due_outbox` does — up to ``limit`` rows
due at ``now``, oldest due first, marked 'sending' for a lease with one more attempt
counted (and noted in flight), on PostgreSQL skipping rows another transaction holds and
taking each claimed row's advisory lock — without the ORM: the daemon claims at every
step that sends, and an ORM query and unit of work cost more than the claim itself. It
returns what the sender needs of each row (`Claimed`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import NamedTuple

from sqlalchemy import Connection, LargeBinary, bindparam, func, literal, select, text, update

from pbem.store.models import Outbox, OutboxStatus
from pbem.store.outbox import DEFAULT_LEASE, in_flight_note, outbox_lock_key
from pbem.store.rawmail import OUTBOX_RAW

__all__ = ["Claimed", "claim_due"]

_OUTBOX = Outbox.__table__  # type: ignore[attr-defined]
_SENDING = OutboxStatus.SENDING.value
# A row's bytes, from the table of raw bytes (`pbem.store.rawmail`; b"" once pruned).
_RAW = func.coalesce(
    select(OUTBOX_RAW.c.raw)
    .where(OUTBOX_RAW.c.outbox_id == _OUTBOX.c.id)
    .correlate_except(OUTBOX_RAW)
    .scalar_subquery(),
    literal(b"", LargeBinary),
)


class Claimed(NamedTuple):
    """What the sender needs of a claimed row (its attempts counting this one)."""

    id: int
    game_id: int | None
    attempts: int
    created_at: datetime
    starts_clock: bool
    sender: str
    recipient: str
    raw: bytes
    status: str  # as it was before the claim ('pending', or 'sending' past its lease)


_DUE = (
    select(
        _OUTBOX.c.id,
        _OUTBOX.c.game_id,
        _OUTBOX.c.attempts,
        _OUTBOX.c.created_at,
        _OUTBOX.c.starts_clock,
        _OUTBOX.c.sender,
        _OUTBOX.c.recipient,
        _RAW,
        _OUTBOX.c.status,
    )
    .where(
        _OUTBOX.c.status.in_((OutboxStatus.PENDING.value, _SENDING)),
        _OUTBOX.c.next_attempt_at <= bindparam("now"),
    )
    .order_by(_OUTBOX.c.next_attempt_at, _OUTBOX.c.id)
    .limit(bindparam("limit"))
)
_DUE_SKIP_LOCKED = _DUE.with_for_update(skip_locked=True)
_MARK = update(_OUTBOX).where(_OUTBOX.c.id.in_(bindparam("ids", expanding=True)))
_MARK_SENDING = _MARK.values(
    status=_SENDING, attempts=_OUTBOX.c.attempts + 1, next_attempt_at=bindparam("until")
)
_MARK_IN_FLIGHT = _MARK.values(
    status=_SENDING,
    attempts=_OUTBOX.c.attempts + 1,
    next_attempt_at=bindparam("until"),
    last_error=bindparam("note"),
)
_LOCKS = text("SELECT k, pg_try_advisory_lock(k) FROM unnest(CAST(:keys AS bigint[])) AS k")


def claim_due(
    connection: Connection,
    now: datetime,
    limit: int = 20,
    *,
    lease: timedelta = DEFAULT_LEASE,
    lock_rows: bool = False,
    in_flight: bool = False,
) -> list[Claimed]:
    """Claim up to ``limit`` due rows in ``connection``'s transaction, as
    `pbem.store.outbox.claim_due_outbox` does (see there)."""
    postgres = connection.dialect.name == "postgresql"
    statement = _DUE_SKIP_LOCKED if postgres else _DUE
    rows = [Claimed(*row) for row in connection.execute(statement, {"now": now, "limit": limit})]
    if lock_rows and rows and postgres:
        keys = [outbox_lock_key(row.id) for row in rows]
        got = {int(k) for k, locked in connection.execute(_LOCKS, {"keys": keys}) if locked}
        # A row another sender holds is being delivered by it right now; a 'sending' row
        # whose lease ran out is taken over even then.
        rows = [r for r in rows if outbox_lock_key(r.id) in got or r.status == _SENDING]
    if not rows:
        return rows
    values = {"ids": [row.id for row in rows], "until": now + lease}
    if in_flight:
        connection.execute(_MARK_IN_FLIGHT, {**values, "note": in_flight_note(now)})
    else:
        connection.execute(_MARK_SENDING, values)
    return [row._replace(attempts=row.attempts + 1) for row in rows]
