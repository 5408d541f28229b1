"""The Alembic migrations: from empty to head, and the models matching the head."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect, text
from sqlmodel import SQLModel

import pbem.store.models
from pbem.store import (
    SchemaNotCurrentError,
    check_schema,
    current_revision,
    head_revision,
    make_engine,
    migrate,
    schema_is_current,
)
from pbem.store.db import MIGRATIONS_DIR, alembic_config

TABLES = {
    "player",
    "game",
    "seat",
    "action_log",
    "inbound",
    "outbox",
    "inbound_raw",
    "outbox_raw",
    "error_throttle",
    "mailbox_cursor",
    "worker_lease",
    "transport_state",
    "invitation",
    "game_match",
    "talk",
    "watcher",
    "consent",
    "confirmation",
    "cut_mail",
    "commitment_log",
    "commitment_head",
    "rating",
    "rated_game",
    "rating_total",
    "event_count",
    "mail_name",
}


def test_migrate_creates_every_table_from_empty(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        assert current_revision(engine) is None
        assert not schema_is_current(engine)
        assert migrate(engine) == head_revision()
        assert set(inspect(engine).get_table_names()) == TABLES | {"alembic_version"}
        assert current_revision(engine) == head_revision()
        assert schema_is_current(engine)
        check_schema(engine)
    finally:
        engine.dispose()


def test_migrate_accepts_a_url_and_is_idempotent(db_url: str) -> None:
    assert migrate(db_url) == head_revision()
    assert migrate(db_url) == head_revision()
    assert current_revision(db_url) == head_revision()


def test_models_match_the_newest_migration(db_engine: Engine) -> None:
    """What `alembic check` does: autogenerate finds nothing to change."""
    with db_engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        differences = compare_metadata(context, SQLModel.metadata)
    assert differences == []


def test_downgrade_to_base_then_upgrade_again(db_engine: Engine) -> None:
    with db_engine.begin() as connection:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "base")
    assert set(inspect(db_engine).get_table_names()) <= {"alembic_version"}
    assert current_revision(db_engine) is None
    migrate(db_engine)
    assert set(inspect(db_engine).get_table_names()) == TABLES | {"alembic_version"}


def test_check_schema_asks_for_init_on_an_empty_database(db_url: str) -> None:
    with pytest.raises(SchemaNotCurrentError, match="run `pbem init`"):
        check_schema(db_url)


def test_check_schema_names_an_old_revision(db_engine: Engine) -> None:
    with db_engine.begin() as connection:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "base")
        command.stamp(config, head_revision())
    # A known revision that is not the head would say "upgrade"; with a single revision,
    # fake an older one by stamping an id the code does not know.
    with db_engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = 'ffff'"))
    with pytest.raises(SchemaNotCurrentError, match=r"ffff.*does not know"):
        check_schema(db_engine)
    assert not schema_is_current(db_engine)


def test_check_schema_asks_for_an_upgrade_from_an_older_revision(
    db_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    current = head_revision()
    monkeypatch.setattr("pbem.store.db.head_revision", lambda: "9999")
    with pytest.raises(SchemaNotCurrentError, match=f"at revision {current} but .* needs 9999"):
        check_schema(db_engine)


def test_concurrent_migrations_take_turns(db_url: str) -> None:
    """Two daemons running `pbem init` at once: both succeed, the schema is made once."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            migrate(db_url)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert current_revision(db_url) == head_revision()


def test_a_new_sqlite_file_opened_by_two_at_once(tmp_path: Path) -> None:
    """Two processes opening a new SQLite file together: turning WAL on needs the file to
    itself and SQLite refuses it at once ("database is locked") instead of waiting; each
    connection tries again within the busy timeout. Many rounds, as the race is narrow."""
    from pbem.store.db import make_engine

    for round_no in range(20):
        url = f"sqlite:///{tmp_path / f'new-{round_no}.db'}"
        errors: list[BaseException] = []
        gate = threading.Barrier(3)

        def open_and_write(
            url: str = url, errors: list[BaseException] = errors, gate: threading.Barrier = gate
        ) -> None:
            engine = make_engine(url)
            try:
                gate.wait()
                with engine.begin() as connection:
                    connection.execute(text("CREATE TABLE IF NOT EXISTS t (x INTEGER)"))
                    connection.execute(text("INSERT INTO t VALUES (1)"))
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)
            finally:
                engine.dispose()

        threads = [threading.Thread(target=open_and_write) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == [], f"round {round_no}"


def test_migrations_do_not_depend_on_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    result = subprocess.run(
        [sys.executable, "-c", f"from pbem.store import migrate; print(migrate({url!r}))"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == head_revision()


def test_migration_scripts_ship_as_package_files() -> None:
    """The migrations live inside the package, as packages setuptools will include."""
    assert MIGRATIONS_DIR.parent == Path(pbem.store.models.__file__).parent
    assert (MIGRATIONS_DIR / "__init__.py").is_file()
    assert (MIGRATIONS_DIR / "versions" / "__init__.py").is_file()
    assert (MIGRATIONS_DIR / "env.py").is_file()
    assert (MIGRATIONS_DIR.parent / "alembic.ini").is_file()


def test_migrations_run_from_a_built_package(tmp_path: Path) -> None:
    """Build the package as setuptools would install it, then migrate with that copy."""
    repo = Path(pbem.store.models.__file__).resolve().parents[2]
    source = tmp_path / "source"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("pbem", "engine"):
        shutil.copytree(repo / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(repo / name, source / name)
    built = tmp_path / "site"
    build = subprocess.run(
        [
            sys.executable,
            *("-c", "import setuptools; setuptools.setup()"),
            *("-q", "build_py", "--build-lib", str(built)),
        ],
        cwd=source,
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, build.stderr
    assert (built / "pbem/store/alembic.ini").is_file()
    assert list((built / "pbem/store/migrations/versions").glob("r*.py"))

    script = (
        "import pbem.store, sys; "
        f"assert pbem.store.__file__.startswith({str(built)!r}), pbem.store.__file__; "
        f"print(pbem.store.migrate({'sqlite:///' + str(tmp_path / 'built.db')!r}))"
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(built)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == head_revision()
