"""Players: normalised addresses, get-or-create, bounces."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from sqlmodel import Session, select

from pbem.store import Player
from pbem.store.queries import (
    get_or_create_player,
    get_player,
    get_player_by_email,
    normalize_email,
    record_bounce,
    reset_bounces,
)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("Ann@Example.ORG", "ann@example.org"),
        ("  bob@example.org\n", "bob@example.org"),
    ],
)
def test_normalize_email(given: str, expected: str) -> None:
    assert normalize_email(given) == expected


@pytest.mark.parametrize("bad", ["", "ann", "@example.org", "ann@", "a nn@example.org"])
def test_normalize_email_refuses_non_addresses(bad: str) -> None:
    with pytest.raises(ValueError, match="not an email address"):
        normalize_email(bad)


def test_get_or_create_player_creates_once(session: Session, now: datetime) -> None:
    first = get_or_create_player(session, "Ann@Example.org", "Ann", now=now)
    again = get_or_create_player(session, "ann@example.ORG", now=now + timedelta(days=1))
    session.commit()
    assert first.id == again.id
    assert again.email == "ann@example.org"
    assert again.display_name == "Ann"
    assert again.created_at == now
    assert again.bounce_count == 0
    assert len(session.exec(select(Player)).all()) == 1


def test_get_or_create_player_fills_a_missing_name_only(session: Session, now: datetime) -> None:
    player = get_or_create_player(session, "ann@example.org", now=now)
    assert player.display_name is None
    assert get_or_create_player(session, "ann@example.org", "Ann", now=now).display_name == "Ann"
    assert get_or_create_player(session, "ann@example.org", "Annie", now=now).display_name == "Ann"


def test_get_player_by_email_ignores_case(session: Session, now: datetime) -> None:
    player = get_or_create_player(session, "ann@example.org", now=now)
    assert get_player_by_email(session, "ANN@example.org") == player
    assert get_player_by_email(session, "bob@example.org") is None
    assert player.id is not None
    assert get_player(session, player.id) == player


def test_bounces_are_counted_and_reset(session: Session, now: datetime) -> None:
    get_or_create_player(session, "ann@example.org", now=now)
    record_bounce(session, "ann@example.org", "550 no such user", now=now)
    player = record_bounce(session, "Ann@example.org", "552 mailbox full", now=now)
    assert player is not None
    assert player.bounce_count == 2
    assert player.last_bounce_at == now
    assert player.last_bounce_reason == "552 mailbox full"
    reset_bounces(session, player)
    session.commit()
    session.expire_all()
    reloaded = get_player_by_email(session, "ann@example.org")
    assert reloaded is not None
    assert reloaded.bounce_count == 0
    assert reloaded.last_bounce_reason == "552 mailbox full"
    assert record_bounce(session, "nobody@example.org", "550", now=now) is None
