"""Alembic environment for the store.

Used in two ways:

- from code (`pbem.store.db.migrate`), which passes an open connection in
  ``config.attributes["connection"]``;
- from the command line, ``alembic -c pbem/store/alembic.ini upgrade head``, with the
  database URL from ``-x url=...``, ``sqlalchemy.url`` or ``$PBEM_DATABASE_URL``.
"""

from __future__ import annotations

import os
from logging.config import fileConfig
from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy import Connection
from sqlmodel import SQLModel
from sqlmodel.sql.sqltypes import AutoString

import pbem.store.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from pbem.store.db import check_foreign_keys, make_engine, sqlite_foreign_keys_off
from pbem.store.types import JSONText, UTCDateTime

config = context.config
target_metadata = SQLModel.metadata

if config.config_file_name is not None and "connection" not in config.attributes:
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def render_item(type_: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    """Write the store's own column types as plain SQLAlchemy types in new revisions."""
    if type_ == "type":
        if isinstance(obj, UTCDateTime):
            return "sa.DateTime(timezone=True)"
        if isinstance(obj, JSONText):
            return "sa.Text()"
        if isinstance(obj, AutoString):
            return "sa.String()"
    return False


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        compare_type=True,
        render_as_batch=connection.dialect.name == "sqlite",
        render_item=render_item,
    )


def _url() -> str:
    url = context.get_x_argument(as_dictionary=True).get("url")
    url = url or config.get_main_option("sqlalchemy.url") or os.environ.get("PBEM_DATABASE_URL")
    if not url:
        raise SystemExit("no database URL: pass -x url=..., or set PBEM_DATABASE_URL")
    return url


def run_migrations_online() -> None:
    """Run the migrations on the given connection, or on a new one to the URL."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = make_engine(_url())
    try:
        with engine.connect() as connection, sqlite_foreign_keys_off(connection):
            _configure(connection)
            with context.begin_transaction():
                context.run_migrations()
                check_foreign_keys(connection)
    finally:
        engine.dispose()


def run_migrations_offline() -> None:
    """Print the SQL of the migrations for the URL's dialect."""
    context.configure(
        url=_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        render_item=render_item,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
