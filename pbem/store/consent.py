"""Queries on ``consent``: one row a mailbox, read and changed under a row lock.

The policy (`pbem.service.policy`) decides; this module only reads and writes rows. A row
is locked before it is read for a decision (``FOR UPDATE`` on PostgreSQL; SQLite's write
transactions are serial already), so two workers deciding about one mailbox at once
decide one after the other, and a batch's later messages see its earlier ones' counts.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import or_
from sqlmodel import Session, col, select

from pbem.store._sql import upsert
from pbem.store.models import Consent


def locked_consent(session: Session, mailbox: str) -> Consent:
    """The consent row of ``mailbox``, created if new, locked for the transaction."""
    session.exec(
        upsert(session, Consent)
        .values(mailbox=mailbox)
        .on_conflict_do_nothing(index_elements=["mailbox"])
    )
    return session.exec(
        select(Consent)
        .where(Consent.mailbox == mailbox)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).one()


def find_consent(session: Session, mailbox: str) -> Consent | None:
    """The consent row of ``mailbox`` without locking it (None: nothing known of it)."""
    return session.exec(select(Consent).where(Consent.mailbox == mailbox)).first()


def confirm_mailboxes(session: Session, mailboxes: list[str], now: datetime) -> None:
    """Record that each of ``mailboxes`` reads the service's mail (first time kept)."""
    for mailbox in sorted(set(mailboxes)):
        session.exec(
            upsert(session, Consent)
            .values(mailbox=mailbox, confirmed_at=now)
            .on_conflict_do_nothing(index_elements=["mailbox"])
        )
    rows = session.exec(
        select(Consent).where(
            col(Consent.mailbox).in_(mailboxes),
            or_(col(Consent.confirmed_at).is_(None), col(Consent.unjoined_since).is_not(None)),
        )
    ).all()
    for row in rows:
        row.confirmed_at = row.confirmed_at or now
        # Its player answered: the games that waited for them are theirs.
        row.unjoined_since, row.unjoined_games = None, 0
        session.add(row)
    if rows:
        session.flush()
