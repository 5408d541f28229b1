"""Inbound mail: stored first, deduplicated, claimed, marked."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

import pytest
from sqlmodel import Session, select

from pbem.store import Inbound, InboundStatus
from pbem.store.queries import (
    claim_pending_inbound,
    get_inbound,
    list_inbound,
    mark_inbound,
    message_key,
    store_inbound,
)

RAW = b"Message-ID: <m1@example.org>\r\nSubject: play 5h\r\n\r\nplay 5h\r\n"


def test_message_key_prefers_the_message_id() -> None:
    assert message_key(RAW, " <m1@example.org> ") == "<m1@example.org>"


@pytest.mark.parametrize("missing", [None, "", "   ", "<>"])
def test_message_key_falls_back_to_sha256(missing: str | None) -> None:
    assert message_key(RAW, missing) == "sha256:" + hashlib.sha256(RAW).hexdigest()


def test_store_inbound_creates_a_pending_row(session: Session, now: datetime) -> None:
    row, created = store_inbound(
        session, RAW, "maildir", "<m1@example.org>", now=now, sender="ann@example.org"
    )
    session.commit()
    assert created
    assert row.id is not None
    assert (row.message_key, row.raw, row.source) == ("<m1@example.org>", RAW, "maildir")
    assert (row.status, row.attempts, row.received_at) == ("pending", 0, now)
    assert row.sender == "ann@example.org"
    assert row.processed_at is None
    assert get_inbound(session, row.id) == row


def test_a_redelivery_with_the_same_message_id_is_not_stored_again(
    session: Session, now: datetime
) -> None:
    first, created = store_inbound(session, RAW, "maildir", "<m1@example.org>", now=now)
    mark_inbound(session, first, "applied", now=now)
    session.commit()
    redelivered = RAW.replace(b"play 5h\r\n\r\n", b"play 5h\r\nX-Dup: 1\r\n\r\n")
    again, created_again = store_inbound(
        session, redelivered, "imap", "<m1@example.org>", now=now + timedelta(hours=1)
    )
    session.commit()
    assert created and not created_again
    assert again.id == first.id
    assert (again.raw, again.source, again.status) == (RAW, "maildir", "applied")
    assert len(session.exec(select(Inbound)).all()) == 1


def test_messages_without_an_id_are_deduplicated_by_content(
    session: Session, now: datetime
) -> None:
    one, created_one = store_inbound(session, b"no id, body one", "cli", now=now)
    dup, created_dup = store_inbound(session, b"no id, body one", "cli", now=now)
    two, created_two = store_inbound(session, b"no id, body two", "cli", now=now)
    assert (created_one, created_dup, created_two) == (True, False, True)
    assert one.id == dup.id != two.id
    assert one.message_key == "sha256:" + hashlib.sha256(b"no id, body one").hexdigest()


def test_claim_pending_inbound_oldest_first(session: Session, now: datetime) -> None:
    rows = [store_inbound(session, b"m%d" % n, "cli", now=now)[0] for n in range(4)]
    mark_inbound(session, rows[1], "ignored", "auto-reply", now=now)
    assert claim_pending_inbound(session, limit=2) == [rows[0], rows[2]]
    assert claim_pending_inbound(session) == [rows[0], rows[2], rows[3]]


def test_mark_inbound(session: Session, now: datetime) -> None:
    row, _ = store_inbound(session, RAW, "cli", now=now)
    mark_inbound(session, row, InboundStatus.PENDING, "database busy", now=now)
    assert (row.status, row.attempts, row.processed_at) == ("pending", 1, None)
    later = now + timedelta(minutes=1)
    mark_inbound(session, row, "rejected", "not your turn", None, now=later, subject="play 5h")
    session.commit()
    session.expire_all()
    reloaded = get_inbound(session, row.id or 0)
    assert reloaded is not None
    assert (reloaded.status, reloaded.reason, reloaded.attempts) == (
        "rejected",
        "not your turn",
        2,
    )
    assert reloaded.processed_at == later
    assert reloaded.subject == "play 5h"
    with pytest.raises(ValueError, match="unknown inbound status 'done'"):
        mark_inbound(session, row, "done", now=now)


def test_list_inbound_newest_first(session: Session, now: datetime) -> None:
    rows = [store_inbound(session, b"m%d" % n, "cli", now=now)[0] for n in range(3)]
    mark_inbound(session, rows[0], "failed", "boom", now=now)
    assert list_inbound(session) == rows[::-1]
    assert list_inbound(session, "failed") == [rows[0]]
    assert list_inbound(session, limit=1) == [rows[2]]
