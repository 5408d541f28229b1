"""Error-reply throttling: one reply of the same kind and content per address per window.

Identical answers are throttled (a player writing the same wrong thing ten times gets one
answer an hour), distinct ones are not: a player who got "Which game?" and then writes
``help`` gets the help, and a "Which game?" listing a game that has moved on since is
new too.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from sqlmodel import Session, col

from pbem.store._sql import upsert
from pbem.store.models import ErrorThrottle

DEFAULT_WINDOW = timedelta(hours=1)


def error_throttle_allows(
    session: Session,
    address: str,
    kind: str,
    now: datetime,
    window: timedelta = DEFAULT_WINDOW,
    *,
    content: str | None = None,
) -> bool:
    """Whether an error reply of `kind` (and `content`, when given) may go to `address` at
    `now`.

    True if no reply of that kind with that same content went out within `window` before
    `now`; the reply is then recorded as sent at `now`, in the same atomic statement, so
    concurrent callers cannot both be allowed. The address is compared case-insensitively.
    Each distinct content keeps its own small record (a few per player who writes to the
    plain address; nothing deletes them here, where a delete could deadlock with another
    worker's insert).
    """
    normalized = address.strip().lower()
    if content is not None:
        kind = f"{kind}:{hashlib.sha256(content.encode()).hexdigest()[:16]}"
    statement = (
        upsert(session, ErrorThrottle)
        .values(address=normalized, kind=kind, last_sent_at=now)
        .on_conflict_do_update(
            index_elements=["address", "kind"],
            set_={"last_sent_at": now},
            where=col(ErrorThrottle.last_sent_at) <= now - window,
        )
        .returning(col(ErrorThrottle.id))
    )
    return session.exec(statement).first() is not None
