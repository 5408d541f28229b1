"""Small helpers for statements that differ between PostgreSQL and SQLite."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session


def dialect_name(session: Session) -> str:
    """'postgresql' or 'sqlite': the backend `session` talks to."""
    return session.get_bind().dialect.name


def upsert(session: Session, table: Any) -> postgresql.Insert | sqlite.Insert:
    """An INSERT for `table` that supports ``ON CONFLICT`` on the session's backend."""
    if dialect_name(session) == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def is_postgresql(session: Session) -> bool:
    """Whether the session talks to PostgreSQL (row locks, SKIP LOCKED)."""
    return dialect_name(session) == "postgresql"
