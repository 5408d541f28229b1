"""Error throttling, mailbox cursors and worker leases."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlmodel import Session, select

from pbem.store.models import ErrorThrottle
from pbem.store.queries import (
    acquire_lease,
    error_throttle_allows,
    load_cursor,
    release_lease,
    save_cursor,
)

MINUTE = timedelta(minutes=1)


def test_one_error_reply_per_address_and_kind_per_hour(session: Session, now: datetime) -> None:
    assert error_throttle_allows(session, "ann@example.org", "unknown-command", now=now)
    assert not error_throttle_allows(session, "ANN@example.org", "unknown-command", now=now)
    assert error_throttle_allows(session, "ann@example.org", "not-your-turn", now=now)
    assert error_throttle_allows(session, "bob@example.org", "unknown-command", now=now)
    almost = now + 59 * MINUTE
    assert not error_throttle_allows(session, "ann@example.org", "unknown-command", now=almost)
    hour = now + 60 * MINUTE
    assert error_throttle_allows(session, "ann@example.org", "unknown-command", now=hour)
    # The allowed reply restarted the window.
    assert not error_throttle_allows(
        session, "ann@example.org", "unknown-command", now=hour + 30 * MINUTE
    )


def test_the_throttle_window_can_be_chosen(session: Session, now: datetime) -> None:
    window = timedelta(minutes=5)
    assert error_throttle_allows(session, "a@x.org", "k", now=now, window=window)
    assert not error_throttle_allows(session, "a@x.org", "k", now=now + MINUTE, window=window)
    assert error_throttle_allows(session, "a@x.org", "k", now=now + window, window=window)


def test_identical_answers_are_throttled_distinct_ones_are_not(
    session: Session, now: datetime
) -> None:
    ann = "ann@example.org"
    assert error_throttle_allows(session, ann, "no-game", now=now, content="games 1, 2")
    assert not error_throttle_allows(session, ann, "no-game", now=now, content="games 1, 2")
    # A different answer (a game moved on, or help asked for) goes out at once.
    assert error_throttle_allows(session, ann, "no-game", now=now, content="games 1, 2, 3")
    assert error_throttle_allows(session, ann, "help", now=now, content="games 1, 2")
    later = now + 61 * MINUTE
    assert error_throttle_allows(session, ann, "no-game", now=later, content="games 1, 2")
    # One record per distinct answer, keyed by the kind and a digest of the content.
    session.flush()
    kinds = session.exec(select(ErrorThrottle.kind).where(ErrorThrottle.address == ann)).all()
    assert sorted(k.split(":")[0] for k in kinds) == ["help", "no-game", "no-game"]


def test_cursor_save_and_load(session: Session, now: datetime) -> None:
    assert load_cursor(session, "INBOX") is None
    saved = save_cursor(session, "INBOX", 1_700_000_000, 41, now=now)
    assert (saved.uidvalidity, saved.last_uid, saved.updated_at) == (1_700_000_000, 41, now)
    big = 2**40
    save_cursor(session, "INBOX", big, big + 1, now=now + MINUTE)
    session.commit()
    loaded = load_cursor(session, "INBOX")
    assert loaded is not None
    assert (loaded.uidvalidity, loaded.last_uid, loaded.updated_at) == (big, big + 1, now + MINUTE)
    assert loaded.id == saved.id
    assert load_cursor(session, "Archive") is None


def test_a_lease_has_one_holder_until_it_expires(session: Session, now: datetime) -> None:
    ttl = timedelta(minutes=2)
    assert acquire_lease(session, "sender", "worker-1", now=now, ttl=ttl)
    assert not acquire_lease(session, "sender", "worker-2", now=now + MINUTE, ttl=ttl)
    assert acquire_lease(session, "sender", "worker-1", now=now + MINUTE, ttl=ttl)  # renewal
    assert not acquire_lease(session, "sender", "worker-2", now=now + 2 * MINUTE, ttl=ttl)
    assert acquire_lease(session, "sender", "worker-2", now=now + 3 * MINUTE, ttl=ttl)
    assert acquire_lease(session, "receiver", "worker-1", now=now, ttl=ttl)


def test_release_lease(session: Session, now: datetime) -> None:
    ttl = timedelta(minutes=2)
    acquire_lease(session, "sender", "worker-1", now=now, ttl=ttl)
    assert not release_lease(session, "sender", "worker-2")
    assert release_lease(session, "sender", "worker-1")
    assert acquire_lease(session, "sender", "worker-2", now=now, ttl=ttl)
