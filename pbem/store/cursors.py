"""Mailbox cursors (how far an IMAP folder has been read) and worker leases."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, or_
from sqlmodel import Session, col, select

from pbem.store._sql import upsert
from pbem.store.models import MailboxCursor, WorkerLease


def load_cursor(session: Session, name: str) -> MailboxCursor | None:
    """The saved cursor of mailbox `name`, or None if it was never read."""
    statement = (
        select(MailboxCursor)
        .where(MailboxCursor.name == name)
        .execution_options(populate_existing=True)
    )
    return session.exec(statement).first()


def save_cursor(
    session: Session, name: str, uidvalidity: int, last_uid: int, *, now: datetime
) -> MailboxCursor:
    """Create or replace the cursor of mailbox `name`."""
    statement = (
        upsert(session, MailboxCursor)
        .values(name=name, uidvalidity=uidvalidity, last_uid=last_uid, updated_at=now)
        .on_conflict_do_update(
            index_elements=["name"],
            set_={"uidvalidity": uidvalidity, "last_uid": last_uid, "updated_at": now},
        )
    )
    session.exec(statement)
    cursor = load_cursor(session, name)
    assert cursor is not None
    return cursor


def acquire_lease(
    session: Session, name: str, holder: str, *, now: datetime, ttl: timedelta
) -> bool:
    """Take or renew the lease `name` for `holder` until `now + ttl`.

    Succeeds if the lease is free, expired, or already held by `holder`; atomic, so two
    workers cannot both hold it.
    """
    expires_at = now + ttl
    statement = (
        upsert(session, WorkerLease)
        .values(name=name, holder=holder, expires_at=expires_at)
        .on_conflict_do_update(
            index_elements=["name"],
            set_={"holder": holder, "expires_at": expires_at},
            where=or_(col(WorkerLease.expires_at) <= now, col(WorkerLease.holder) == holder),
        )
        .returning(col(WorkerLease.id))
    )
    return session.exec(statement).first() is not None


def release_lease(session: Session, name: str, holder: str) -> bool:
    """Give up the lease `name` if `holder` holds it; returns whether it did."""
    statement = delete(WorkerLease).where(
        col(WorkerLease.name) == name, col(WorkerLease.holder) == holder
    )
    return session.exec(statement).rowcount > 0
