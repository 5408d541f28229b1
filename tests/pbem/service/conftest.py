"""Each stage of the service alone: a `Context` on the test database (both backends)
and a plain Session."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from pbem.config import Settings
from pbem.service.context import Context, GameCache
from tests.pbem.service.desk import NOW, Desk


@pytest.fixture
def desk(tmp_path: Path, db_url: str, db_engine: Engine) -> Desk:
    steps: list[str] = []
    settings = Settings(
        data_dir=tmp_path, database_url=db_url, domain="stage.example", render_processes=0
    )
    ctx = Context(settings, db_engine, lambda: NOW, steps.append, GameCache())
    return Desk(ctx, steps)
