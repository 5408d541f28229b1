"""Error-reply throttling: at most one error reply per address and kind per window."""

from __future__ import annotations

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
) -> bool:
    """Whether an error reply of `kind` may go to `address` at `now`.

    True if none went out within `window` before `now`; the reply is then recorded as sent
    at `now`, in the same atomic statement, so concurrent callers cannot both be allowed.
    The address is compared case-insensitively.
    """
    normalized = address.strip().lower()
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
