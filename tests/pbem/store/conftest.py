"""Shared fixtures of the store tests: a fixed clock and a session on `db_engine`."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine
from sqlmodel import Session

from pbem.store import new_session


@pytest.fixture
def now() -> datetime:
    """The fixed time of a test."""
    return datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def session(db_engine: Engine) -> Iterator[Session]:
    """A session on the migrated test database; the test commits when it needs to."""
    with new_session(db_engine) as session:
        yield session
