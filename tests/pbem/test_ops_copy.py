"""``pbem db copy``: a SQLite installation with games in every state moved to a fresh
PostgreSQL database, row for row, every game replaying and verifying there, the service
going on on the target; and every way the copy refuses."""

from __future__ import annotations

import re
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select, text
from sqlalchemy.engine import URL

from pbem.store.copy import tables
from pbem.store.db import make_engine, migrate
from tests.e2e.helpers import ALICE, BOB, Harness, cli_env, run_cli
from tests.fixtures.db import _database_url, _pg_admin
from tests.pbem.ops_helpers import Installation

pytestmark = pytest.mark.postgres


@pytest.fixture
def installation(ops_installation: Installation) -> Installation:
    return ops_installation


@pytest.fixture
def source(installation: Installation, tmp_path: Path) -> str:
    """A copy of the installation's SQLite file for this test."""
    path = tmp_path / "source.db"
    shutil.copyfile(installation.harness.settings.db_url.removeprefix("sqlite:///"), path)
    return f"sqlite:///{path}"


@pytest.fixture
def target(pg_admin_url: URL) -> Iterator[str]:
    """A PostgreSQL database created for the test (no schema), dropped after it."""
    name = f"pbem_copy_{secrets.token_hex(6)}"
    _pg_admin(pg_admin_url, f'CREATE DATABASE "{name}" TEMPLATE template0')
    try:
        yield _database_url(pg_admin_url, name)
    finally:
        _pg_admin(pg_admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def rows_of(engine: Engine) -> dict[str, list[dict[str, Any]]]:
    with engine.connect() as conn:
        return {
            table.name: [
                dict(r._mapping)
                for r in conn.execute(select(table).order_by(*table.primary_key.columns))
            ]
            for table in tables()
        }


def test_a_sqlite_installation_moves_to_postgresql_whole(
    installation: Installation, source: str, target: str, tmp_path: Path
) -> None:
    result = run_cli(cli_env(tmp_path, source), "db", "copy", "--to", target)
    assert result.exit_code == 0, result.output
    src, dst = make_engine(source), make_engine(target)
    try:
        want, got = rows_of(src), rows_of(dst)
        assert got == want  # every row, every column, as the service reads it
        for name, rows in want.items():  # the counts printed per table
            assert f"{name:<16} {len(rows):>8} rows" in result.stdout
        total = sum(len(rows) for rows in want.values())
        assert f"copied {total} rows to postgresql+psycopg://postgres@" in result.stdout
        statuses = {row["status"] for row in want["game"]}
        assert statuses == {"finished", "cutting", "active", "paused", "aborted"}
        assert want["talk"] and want["inbound"] and want["outbox"] and want["consent"]
        assert want["inbound_raw"] and want["outbox_raw"]  # the mail's bytes, copied too
        # Every game replays on the target; the fair finished one's deals verify.
        assert re.search(
            r"\n5 games on the target: 4 replayed, 1 with \d+ deals verified\n", result.stdout
        )

        # The service goes on on the target: new rows get new ids (the sequences were
        # set past the copied ones), the copied games play on.
        harness = Harness.build(tmp_path / "on-pg", target, dst)
        try:
            game_id = harness.new_game([ALICE, BOB], seed="after-the-move")
            assert game_id == installation.aborted + 1
            harness.play_until(game_id, lambda g: len(g.actions) >= 3)
            harness.service.set_status(installation.paused, "active", "back")
            audit = harness.service.audit()
            assert audit.ok and audit.games == 6 and audit.verified_games == 1, audit.problems
        finally:
            harness.close()
    finally:
        src.dispose()
        dst.dispose()


def test_a_target_with_rows_is_refused_unless_replaced(
    source: str, target: str, tmp_path: Path
) -> None:
    env = cli_env(tmp_path, source)
    assert run_cli(env, "db", "copy", "--to", target).exit_code == 0
    result = run_cli(env, "db", "copy", "--to", target)
    assert result.exit_code == 1
    assert "the target database is not empty (" in result.stderr
    assert "give --replace" in result.stderr
    result = run_cli(env, "db", "copy", "--to", target, "--replace")
    assert result.exit_code == 0, result.output
    dst = make_engine(target)
    try:
        assert rows_of(dst)["game"][0]["id"] == 1
        assert len(rows_of(dst)["game"]) == 5
    finally:
        dst.dispose()


def test_a_game_that_does_not_replay_fails_the_copy(
    source: str, target: str, tmp_path: Path, installation: Installation
) -> None:
    src = make_engine(source)
    try:
        with src.begin() as conn:  # a move the game never allowed
            conn.execute(
                text(
                    "UPDATE action_log SET action = :bad WHERE game_id = :game AND seq = "
                    "(SELECT max(seq) FROM action_log WHERE game_id = :game)"
                ),
                {
                    "bad": '{"cards":["AS","2S"],"seat":0,"type":"discard"}',
                    "game": installation.active,
                },
            )
    finally:
        src.dispose()
    result = run_cli(cli_env(tmp_path, source), "db", "copy", "--to", target)
    assert result.exit_code == 1
    assert f"problem: game {installation.active} does not replay" in result.stdout
    assert "1 games do not check out on the target" in result.stderr


def test_the_copy_refuses_an_old_source_and_an_unreachable_target(
    tmp_path: Path, target: str
) -> None:
    old = f"sqlite:///{tmp_path / 'old.db'}"
    migrate(old, "0009_consent")
    env = cli_env(tmp_path, old)
    result = run_cli(env, "db", "copy", "--to", target)
    assert result.exit_code == 1 and "run `pbem init` to upgrade it" in result.stderr
    (tmp_path / "new").mkdir()
    env = cli_env(tmp_path / "new", f"sqlite:///{tmp_path / 'new' / 'pbem.db'}")
    assert run_cli(env, "init").exit_code == 0
    result = run_cli(env, "db", "copy", "--to", "postgresql://nobody@127.0.0.1:1/none")
    assert result.exit_code == 1
    failed = "the copy to postgresql://nobody@127.0.0.1:1/none failed, the target is unchanged"
    assert f"{failed}: connection" in result.stderr
    result = run_cli(env, "db", "copy", "--to", env["PBEM_DATABASE_URL"] or "")
    assert result.exit_code == 1 and "the same database" in result.stderr
