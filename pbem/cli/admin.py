"""Setting the service up: ``pbem init`` (the database) and ``pbem config``."""

from __future__ import annotations

from pbem.cli.base import app_group, database, examples, fail, new_table, out, settings

commands = app_group()  # no name: its commands join the group it is added to (pbem.cli)


@commands.command(
    epilog=examples("pbem init", "PBEM_DATABASE_URL=postgresql://pbem@db/pbem pbem init")
)
def init() -> None:
    """Create the database, or upgrade it to the current schema."""
    from pbem.config import mask_url
    from pbem.store.db import migrate

    cfg = settings()
    engine = database(cfg, check=False)
    try:
        revision = migrate(engine)
    except Exception as exc:
        fail(f"migration failed: {exc}")
    out.print(f"database ready at {mask_url(cfg.db_url)} (schema {revision})")


@commands.command("config", epilog=examples("pbem config", "pbem --config /etc/pbem.toml config"))
def show_config() -> None:
    """Show the effective configuration, secrets masked."""
    cfg = settings()
    table = new_table("setting", "value", title="pbem configuration")
    for key, value in cfg.masked().items():
        table.add_row(key, str(value))
    out.print(table)
