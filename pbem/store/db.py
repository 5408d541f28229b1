"""Engines, sessions and schema migrations.

`make_engine` opens SQLite files (WAL, busy timeout, foreign keys, write transactions that
take the lock up front) and PostgreSQL through psycopg 3. `migrate` brings a database to the
newest Alembic revision; `check_schema` refuses to run on any other revision.

Alembic itself is imported only to migrate (or to explain a schema that is not
current): every command and every daemon start checks the schema, and reads the revisions
for it straight from the migration files and the ``alembic_version`` table.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import URL, make_url

from pbem.store.errors import SchemaNotCurrentError

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlmodel import Session

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_TIMEOUT_S = 30.0
# Serialises concurrent `migrate` calls on one PostgreSQL database ("pbem" in ASCII).
_PG_MIGRATE_LOCK_KEY = 0x7062656D


def normalize_url(url: str | URL) -> URL:
    """Parse a database URL, choosing psycopg 3 for PostgreSQL.

    ``postgres://`` and ``postgresql://`` become ``postgresql+psycopg://``; an explicit
    driver is kept. A string without ``://`` is taken as the path of a SQLite file.
    """
    if isinstance(url, str) and "://" not in url:
        return URL.create("sqlite", database=str(Path(url).expanduser()))
    parsed = make_url(url)
    if parsed.drivername in ("postgres", "postgresql"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def make_engine(
    url: str | URL,
    *,
    echo: bool = False,
    sqlite_immediate: bool = True,
    application_name: str | None = None,
) -> Engine:
    """Create an engine for `url` (see `normalize_url`).

    SQLite connections get WAL journaling, a 30 s busy timeout, foreign keys and secure
    deletion (a new file also incremental vacuum: see `_configure_sqlite`). With
    `sqlite_immediate` (the default) every transaction starts with ``BEGIN IMMEDIATE``, so
    a transaction that reads and then writes never fails half-way because another one
    wrote in between: writers queue up instead. The price is that any open transaction,
    even a read-only one, keeps other writers waiting, so close sessions promptly.
    PostgreSQL connections are pooled and checked before use, and named
    ``application_name`` unless the URL names them.
    """
    parsed = normalize_url(url)
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(parsed, echo=echo, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})
        _configure_sqlite(engine, "BEGIN IMMEDIATE" if sqlite_immediate else "BEGIN")
        return engine
    return create_engine(
        parsed,
        echo=echo,
        pool_size=5,
        max_overflow=10,
        pool_pre_ping=True,
        pool_recycle=1800,
        connect_args={"connect_timeout": 10}
        | (
            {"application_name": application_name}
            if application_name and "application_name" not in parsed.query
            else {}
        ),
    )


def _wal(cursor: Any) -> None:
    """Put the file in WAL mode (a setting kept in the file). Turning WAL on needs the
    file to itself, and SQLite answers "database is locked" at once, without waiting
    for the busy timeout, while another connection holds it (two processes opening a new
    file together): try again until the busy timeout has passed."""
    import sqlite3
    import time

    give_up = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= give_up:
                raise
            time.sleep(0.02)


def _configure_sqlite(engine: Engine, begin: str) -> None:
    """Set the pragmas on each new connection and take over transaction control."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Autocommit at the driver level; the "begin" hook below issues BEGIN itself.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
            # A new file keeps pointer maps, so that freed pages can be given back a few
            # at a time (``PRAGMA incremental_vacuum``) instead of by a whole VACUUM: set
            # before anything is written (WAL included), and only then (on a file in that
            # mode already the pragma writes its header: a write lock at every connect);
            # an older file takes it at its next VACUUM (`pbem.store.retention.vacuum`).
            if cursor.execute("PRAGMA page_count").fetchone()[0] == 0:
                cursor.execute("PRAGMA auto_vacuum = INCREMENTAL")
            _wal(cursor)
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA foreign_keys = ON")
            # What is deleted or rewritten is overwritten with zeros, in the page it was
            # on and in the pages that are freed: a pruned mail's bytes and a forgotten
            # player's old rows leave nothing in the file (`pbem.service.forget`).
            cursor.execute("PRAGMA secure_delete = ON")
            # Keep the hot pages in memory: a 64 MiB page cache and reads through mmap.
            cursor.execute("PRAGMA cache_size = -65536")
            cursor.execute("PRAGMA mmap_size = 268435456")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        connection.exec_driver_sql(begin)


def new_session(engine: Engine) -> Session:
    """A session whose objects stay readable after commit."""
    from sqlmodel import Session  # the ORM: not for what reads plain rows (pbem standings)

    return Session(engine, expire_on_commit=False)


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """One transaction: commit when the block ends normally, roll back if it raises."""
    session = new_session(engine)
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


# --- migrations ---------------------------------------------------------------------------


def alembic_config(url: str | URL | None = None) -> Config:
    """An Alembic configuration for the migrations shipped in this package.

    Built in code, so it works from an installed package and from any directory.
    """
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", _escape(str(MIGRATIONS_DIR)))
    config.set_main_option("path_separator", "os")
    config.set_main_option("file_template", "r%%(rev)s_%%(slug)s")
    if url is not None:
        rendered = normalize_url(url).render_as_string(hide_password=False)
        config.set_main_option("sqlalchemy.url", _escape(rendered))
    return config


def _escape(value: str) -> str:
    """Escape `%` for Alembic's ConfigParser interpolation."""
    return value.replace("%", "%%")


def head_revision() -> str:
    """The newest migration revision shipped with this code.

    Read from the ``revision`` and ``down_revision`` lines of the migration files, which
    costs a few milliseconds, where Alembic's script directory would import Alembic and
    every migration; when those lines do not name exactly one head (a branch, a line
    written some other way), Alembic decides.
    """
    heads = _file_heads()
    if len(heads) == 1:
        return heads[0]
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:  # pragma: no cover - the package always ships migrations
        raise SchemaNotCurrentError("no migrations found in " + str(MIGRATIONS_DIR))
    return head


def _file_heads() -> list[str]:
    """The revisions no migration file names as its ``down_revision``: the heads, as
    the files' own top-level ``revision`` and ``down_revision`` lines say (an empty list
    when a file says it in some other way). Remembered while the files stay the same."""
    paths = sorted(p for p in (MIGRATIONS_DIR / "versions").glob("*.py") if p.name != "__init__.py")
    signature = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in paths)
    return list(_heads_of(signature))


# One assignment at the top of a migration: ``revision: str = "0010_next_seed"``.
_REVISION_LINE = re.compile(r"^(revision|down_revision)\s*(?::[^=]*)?=\s*(.+?)\s*$", re.MULTILINE)


@functools.lru_cache(maxsize=4)
def _heads_of(signature: tuple[tuple[str, int, int], ...]) -> tuple[str, ...]:
    revisions: set[str] = set()
    downs: set[str] = set()
    for path, _size, _mtime in signature:
        found: dict[str, Any] = {}
        for name, value in _REVISION_LINE.findall(Path(path).read_text(encoding="utf-8")):
            try:
                found[name] = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                return ()
        revision, down = found.get("revision"), found.get("down_revision")
        if not isinstance(revision, str):
            return ()
        revisions.add(revision)
        if isinstance(down, str):
            downs.add(down)
        elif isinstance(down, tuple | list):
            downs.update(d for d in down if isinstance(d, str))
        elif down is not None:
            return ()
    return tuple(sorted(revisions - downs))


@contextmanager
def _engine_for(target: Engine | str | URL) -> Iterator[Engine]:
    """Use `target` if it is an engine; otherwise open one for the call and dispose it."""
    if isinstance(target, Engine):
        yield target
        return
    engine = make_engine(target)
    try:
        yield engine
    finally:
        engine.dispose()


def migrate(target: Engine | str | URL, revision: str = "head") -> str | None:
    """Create or upgrade the schema to `revision` (the newest by default).

    Safe to call on a database already at that revision. On PostgreSQL concurrent callers
    take turns behind an advisory lock. Returns the revision the database is at afterwards.
    """
    from alembic import command
    from alembic.runtime.migration import MigrationContext

    with (
        _engine_for(target) as engine,
        engine.connect() as connection,
        sqlite_foreign_keys_off(connection),
        connection.begin(),
    ):
        if connection.dialect.name == "postgresql":
            connection.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATE_LOCK_KEY}
            )
        config = alembic_config()
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
        check_foreign_keys(connection)
        return MigrationContext.configure(connection).get_current_revision()


@contextmanager
def sqlite_foreign_keys_off(connection: Connection) -> Iterator[None]:
    """Foreign keys off on a SQLite connection for a migration, on again afterwards.

    A SQLite migration that changes a column rebuilds its table (copy, DROP, rename);
    with foreign keys on, the DROP of a table other rows refer to (``game``, with its
    seats) fails once it holds rows. SQLite ignores the pragma inside a transaction, so
    this runs before the migration's transaction begins; `check_foreign_keys` checks the
    result before it commits.
    """
    if connection.dialect.name != "sqlite" or connection.in_transaction():
        yield
        return
    raw = connection.connection.driver_connection
    assert raw is not None
    raw.execute("PRAGMA foreign_keys = OFF")
    try:
        yield
    finally:
        raw.execute("PRAGMA foreign_keys = ON")


def check_foreign_keys(connection: Connection) -> None:
    """Raise if a SQLite migration left a row pointing at nothing."""
    if connection.dialect.name != "sqlite":
        return
    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if broken:
        raise RuntimeError(f"the migration left rows that refer to nothing: {broken[:5]}")


def current_revision(target: Engine | str | URL) -> str | None:
    """The revision the database is at, or None for a database never migrated: the row
    of Alembic's ``alembic_version`` table, read without loading Alembic.

    Raises SchemaNotCurrentError when the table holds more than one revision (a
    database migrated along two branches), as Alembic would refuse it too.
    """
    with _engine_for(target) as engine, engine.connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return None
        rows = connection.execute(text("SELECT version_num FROM alembic_version")).all()
    if len(rows) > 1:
        found = ", ".join(sorted(str(row[0]) for row in rows))
        raise SchemaNotCurrentError(f"the database is at several revisions at once: {found}")
    return str(rows[0][0]) if rows else None


def schema_is_current(target: Engine | str | URL) -> bool:
    """Whether the database is at the newest revision this code knows."""
    return current_revision(target) == head_revision()


def check_schema(target: Engine | str | URL) -> None:
    """Raise SchemaNotCurrentError, saying what to do, unless the schema is current."""
    current = current_revision(target)
    head = head_revision()
    if current == head:
        return
    if current is None:
        raise SchemaNotCurrentError(
            f"the database has no schema yet (this version needs revision {head}); "
            "run `pbem init` to create it"
        )
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory.from_config(alembic_config())
    known = {script.revision for script in scripts.walk_revisions()}
    if current not in known:
        raise SchemaNotCurrentError(
            f"the database schema is at revision {current}, which this version does not "
            f"know (it needs {head}); is the database newer than this program?"
        )
    raise SchemaNotCurrentError(
        f"the database schema is at revision {current} but this version needs {head}; "
        "run `pbem init` to upgrade it"
    )
