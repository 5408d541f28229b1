"""The schema check every command and every daemon start makes reads the revisions
without Alembic (from the migration files and the ``alembic_version`` table), and must
agree with Alembic on every database and every set of migration files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Engine, text

from pbem.store import SchemaNotCurrentError, check_schema, current_revision, head_revision
from pbem.store.db import MIGRATIONS_DIR, _file_heads, alembic_config


def _alembic_head() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def test_the_head_read_from_the_files_is_alembics() -> None:
    assert _file_heads() == [head_revision()]
    assert head_revision() == _alembic_head()


def test_the_current_revision_is_the_one_alembic_reads(db_engine: Engine) -> None:
    with db_engine.connect() as connection:
        expected = MigrationContext.configure(connection).get_current_revision()
    assert current_revision(db_engine) == expected == head_revision()
    check_schema(db_engine)


def test_a_database_at_two_revisions_at_once_is_refused(db_engine: Engine) -> None:
    with db_engine.begin() as connection:
        connection.execute(text("INSERT INTO alembic_version (version_num) VALUES ('0001')"))
    with pytest.raises(SchemaNotCurrentError, match=r"several revisions at once: 0001, "):
        check_schema(db_engine)


def test_an_empty_version_table_is_no_schema(db_engine: Engine) -> None:
    with db_engine.begin() as connection:
        connection.execute(text("DELETE FROM alembic_version"))
    assert current_revision(db_engine) is None
    with pytest.raises(SchemaNotCurrentError, match="run `pbem init`"):
        check_schema(db_engine)


@pytest.fixture
def migrations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the shipped migrations that the store reads instead (its versions/)."""
    copy = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr("pbem.store.db.MIGRATIONS_DIR", copy)
    return copy / "versions"


def _add(versions: Path, name: str, body: str) -> None:
    (versions / name).write_text(body + "\n\ndef upgrade() -> None:\n    pass\n", encoding="utf-8")


def test_a_head_written_some_other_way_is_left_to_alembic(migrations: Path) -> None:
    head = head_revision()
    _add(migrations, "r9998_odd.py", f'revision = "9998_" + "odd"\ndown_revision = "{head}"')
    assert _file_heads() == []
    assert head_revision() == _alembic_head() == "9998_odd"


def test_two_heads_are_left_to_alembic_which_refuses_them(migrations: Path) -> None:
    head = head_revision()
    _add(migrations, "r9998_a.py", f'revision = "9998_a"\ndown_revision = "{head}"')
    _add(migrations, "r9998_b.py", f'revision = "9998_b"\ndown_revision = "{head}"')
    assert _file_heads() == ["9998_a", "9998_b"]
    with pytest.raises(CommandError):
        head_revision()


def test_a_merge_revision_joins_two_heads(migrations: Path) -> None:
    head = head_revision()
    _add(migrations, "r9998_a.py", f'revision = "9998_a"\ndown_revision = "{head}"')
    _add(migrations, "r9998_b.py", f'revision = "9998_b"\ndown_revision = "{head}"')
    _add(migrations, "r9999_merge.py", 'revision = "9999"\ndown_revision = ("9998_a", "9998_b")')
    assert _file_heads() == ["9999"]
    assert head_revision() == _alembic_head() == "9999"
