"""Fixtures of the red-team suite: a harness built with the settings an attack needs, on
SQLite and on PostgreSQL (the ``db_url`` / ``db_engine`` fixtures), closed after the test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from tests.abuse.helpers import TIMERS
from tests.e2e.helpers import Harness

Build = Callable[..., Harness]
Record = Callable[[str, object], None]
"""pytest's ``record_property``: a count measured, kept in the JUnit XML report."""


@pytest.fixture
def build(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Build]:
    """``build(**settings)``: the service with the timers on (`TIMERS`) and ``settings``."""
    made: list[Harness] = []

    def make(**overrides: Any) -> Harness:
        assert not made, "one harness a test"
        harness = Harness.build(tmp_path, db_url, db_engine, **{**TIMERS, **overrides})
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()
