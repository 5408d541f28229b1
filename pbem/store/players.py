"""Queries on players."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam
from sqlmodel import Session, select

from pbem.names import NAME_LIMIT, clean_name
from pbem.store._sql import upsert
from pbem.store.models import Player
from pbem.store.text import REASON_MAX, db_text


def normalize_email(email: str) -> str:
    """The stored form of an address: stripped and lowercase.

    Raises ValueError if it is not of the form ``local@domain``.
    """
    normalized = email.strip().lower()
    local, at, domain = normalized.partition("@")
    if not at or not local or not domain or any(c.isspace() for c in normalized):
        raise ValueError(f"not an email address: {email!r}")
    return normalized


def get_player_by_email(session: Session, email: str) -> Player | None:
    """The player with this address (any case), or None."""
    return session.exec(_BY_EMAIL, params={"email": normalize_email(email)}).first()


_BY_EMAIL = select(Player).where(Player.email == bindparam("email"))


def get_player(session: Session, player_id: int) -> Player | None:
    """The player with this id, or None."""
    return session.get(Player, player_id)


def get_or_create_player(
    session: Session, email: str, display_name: str | None = None, *, now: datetime
) -> Player:
    """The player with this address, created if new.

    A display name fills in a missing one but never replaces an existing one; it is
    cleaned first (`pbem.names.clean_name`: one line of visible text, at most
    `pbem.names.NAME_LIMIT` characters), and one with nothing left is none. Safe
    against a concurrent creation of the same address.
    """
    normalized = normalize_email(email)
    display_name = clean_name(display_name or "", NAME_LIMIT) or None
    statement = (
        upsert(session, Player)
        .values(email=normalized, display_name=display_name, created_at=now, bounce_count=0)
        .on_conflict_do_nothing(index_elements=["email"])
    )
    session.exec(statement)
    player = session.exec(
        select(Player).where(Player.email == normalized).execution_options(populate_existing=True)
    ).one()
    if display_name and not player.display_name:
        player.display_name = display_name
        session.add(player)
        session.flush()
    return player


def record_bounce(session: Session, email: str, reason: str, *, now: datetime) -> Player | None:
    """Count a bounce for the player with this address; None if no such player."""
    player = get_player_by_email(session, email)
    if player is None:
        return None
    player.bounce_count += 1
    player.last_bounce_at = now
    player.last_bounce_reason = db_text(reason, REASON_MAX, multiline=True)
    session.add(player)
    session.flush()
    return player


def reset_bounces(session: Session, player: Player) -> Player:
    """Zero the bounce count of `player` (e.g. after mail from them got through).

    The time and reason of the last bounce are kept for the record.
    """
    player.bounce_count = 0
    session.add(player)
    session.flush()
    return player
