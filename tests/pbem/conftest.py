"""Fixtures of the tests of the operator's tools (backup, db copy, forget)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pbem.ops_helpers import Installation, populate, sqlite_harness


@pytest.fixture(scope="session")
def ops_installation(
    tmp_path_factory: pytest.TempPathFactory, _sqlite_template: Path
) -> Iterator[Installation]:
    """A SQLite installation with games in every state, played by mail once per session;
    tests use a copy (`tests.pbem.ops_helpers.clone`), never this one."""
    made = populate(sqlite_harness(tmp_path_factory.mktemp("installation"), _sqlite_template))
    made.harness.close()
    made.harness.db.dispose()  # the last connection checkpoints the WAL into the file
    yield made
