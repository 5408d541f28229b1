"""Engines, sessions and the column types."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import IntegrityError, StatementError
from sqlmodel import Session, select

from pbem.store import Game, Player, make_engine, migrate, normalize_url, session_scope
from pbem.store.queries import create_game, get_or_create_player


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("postgres://u:p@h:5433/db", "postgresql+psycopg://u:p@h:5433/db"),
        ("postgresql://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgresql+psycopg2://u@h/db", "postgresql+psycopg2://u@h/db"),
        ("sqlite:////var/lib/pbem/pbem.db", "sqlite:////var/lib/pbem/pbem.db"),
        ("/var/lib/pbem/pbem.db", "sqlite:////var/lib/pbem/pbem.db"),
    ],
)
def test_normalize_url_picks_psycopg3_and_reads_bare_paths(given: str, expected: str) -> None:
    assert normalize_url(given).render_as_string(hide_password=False) == expected


def test_normalize_url_keeps_special_characters_in_passwords() -> None:
    url = normalize_url("postgres://pbem:p%40ss%2Fw@db.example:5432/pbem")
    assert url.password == "p@ss/w"
    assert url.drivername == "postgresql+psycopg"


def test_sqlite_connections_use_wal_busy_timeout_and_foreign_keys(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'p.db'}")
    try:
        with engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
    finally:
        engine.dispose()


def test_sqlite_transactions_take_the_write_lock_up_front(tmp_path: Path) -> None:
    path = tmp_path / "lock.db"
    immediate = make_engine(f"sqlite:///{path}")
    migrate(immediate)
    deferred = make_engine(f"sqlite:///{path}", sqlite_immediate=False)
    try:
        with immediate.connect() as holder:
            holder.execute(text("SELECT 1"))  # a read-only transaction, left open
            with deferred.connect() as reader:  # a deferred reader does not wait
                assert reader.execute(text("SELECT count(*) FROM player")).scalar() == 0
            other = sqlite3.connect(path, timeout=0.1)  # a writer has to wait
            try:
                with pytest.raises(sqlite3.OperationalError, match="locked"):
                    other.execute("BEGIN IMMEDIATE")
            finally:
                other.close()
    finally:
        immediate.dispose()
        deferred.dispose()


def test_sqlite_enforces_foreign_keys(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'fk.db'}")
    migrate(engine)
    try:
        with pytest.raises(IntegrityError, match="FOREIGN KEY"), engine.begin() as connection:
            connection.exec_driver_sql(  # a seat for a game and player that do not exist
                "INSERT INTO seat (game_id, seat, player_id, token) VALUES (99, 0, 99, 't')"
            )
    finally:
        engine.dispose()


def test_session_scope_commits_on_success(db_engine: Engine, now: datetime) -> None:
    with session_scope(db_engine) as session:
        get_or_create_player(session, "ann@example.org", now=now)
    with session_scope(db_engine) as session:
        assert session.exec(select(Player)).one().email == "ann@example.org"


def test_session_scope_rolls_back_on_error(db_engine: Engine, now: datetime) -> None:
    with pytest.raises(RuntimeError), session_scope(db_engine) as session:
        get_or_create_player(session, "ann@example.org", now=now)
        raise RuntimeError("boom")
    with session_scope(db_engine) as session:
        assert session.exec(select(Player)).all() == []


def test_objects_stay_readable_after_the_scope(db_engine: Engine, now: datetime) -> None:
    with session_scope(db_engine) as session:
        player = get_or_create_player(session, "ann@example.org", now=now)
    assert player.email == "ann@example.org"
    assert player.id is not None


def test_datetimes_come_back_aware_utc(db_engine: Engine) -> None:
    plus_two = timezone(timedelta(hours=2))
    created = datetime(2026, 3, 1, 14, 30, 15, 123456, tzinfo=plus_two)
    with session_scope(db_engine) as session:
        player = get_or_create_player(session, "ann@example.org", now=created)
        player_id = player.id
    with session_scope(db_engine) as session:
        stored = session.get(Player, player_id)
        assert stored is not None
        assert stored.created_at == created
        assert stored.created_at.tzinfo is not None
        assert stored.created_at.utcoffset() == timedelta(0)
        assert stored.created_at == datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=UTC)


def test_sqlite_stores_naive_utc_text(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'dt.db'}")
    migrate(engine)
    try:
        plus_two = timezone(timedelta(hours=2))
        with session_scope(engine) as session:
            get_or_create_player(
                session, "ann@example.org", now=datetime(2026, 3, 1, 14, 0, tzinfo=plus_two)
            )
        with engine.connect() as connection:
            raw = connection.exec_driver_sql("SELECT created_at FROM player").scalar()
        assert raw == "2026-03-01 12:00:00.000000"
    finally:
        engine.dispose()


def test_naive_datetimes_are_refused(db_engine: Engine) -> None:
    with pytest.raises(StatementError, match="naive datetime"), session_scope(db_engine) as s:
        get_or_create_player(s, "ann@example.org", now=datetime(2026, 3, 1, 12, 0))


def test_json_columns_are_canonical_text(db_engine: Engine, now: datetime) -> None:
    with session_scope(db_engine) as session:
        player = get_or_create_player(session, "ann@example.org", now=now)
        bob = get_or_create_player(session, "bob@example.org", now=now)
        game = create_game(
            session, {"target": 121, "muggins": False}, "s", [player, bob], ["t1", "t2"], now=now
        )
        game_id = game.id
    with db_engine.connect() as connection:
        raw = connection.execute(
            text("SELECT settings FROM game WHERE id = :id"), {"id": game_id}
        ).scalar()
    assert raw == '{"muggins":false,"target":121}'
    with session_scope(db_engine) as session:
        loaded = session.get(Game, game_id)
        assert loaded is not None
        assert loaded.settings == {"target": 121, "muggins": False}


def test_concurrent_read_modify_write_loses_no_update(db_engine: Engine, now: datetime) -> None:
    """Two threads each read a counter and write it back, 15 times: none is lost.

    On SQLite every transaction takes the write lock up front (BEGIN IMMEDIATE); on
    PostgreSQL the row lock of FOR UPDATE does the same.
    """
    with session_scope(db_engine) as session:
        player = get_or_create_player(session, "ann@example.org", now=now)
        player_id = player.id
    errors: list[BaseException] = []

    def bump() -> None:
        try:
            for _ in range(15):
                with session_scope(db_engine) as session:
                    row = _locked_player(session, player_id)
                    row.bounce_count += 1
                    session.add(row)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=bump) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with session_scope(db_engine) as session:
        final = session.get(Player, player_id)
        assert final is not None
        assert final.bounce_count == 30


def _locked_player(session: Session, player_id: int | None) -> Player:
    statement = select(Player).where(Player.id == player_id).with_for_update()
    return session.exec(statement).one()
