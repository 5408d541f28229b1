"""The ``pbem`` application: every group of commands joined into one ``Typer`` app, and
the global options (``--config``, ``--data-dir``, ``-v``, ``--version``).

Imported by :mod:`pbem.cli` when a command line needs typer (everything but a bare
``pbem --version``), and by the tests as ``pbem.cli.app``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from pbem.cli import admin, archive, commitlog, fair, game, mail, ops, serve, site
from pbem.cli.base import app_group, examples, out, state
from pbem.cli.version import version_line
from pbem.logsetup import configure_logging

app = app_group(
    help="Play-by-email Cribbage: the admin command line.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# Commands of a group without a name join the group they are added to.
app.add_typer(admin.commands)
app.add_typer(mail.commands)
app.add_typer(serve.commands)
app.add_typer(site.commands)
app.add_typer(fair.commands)
app.add_typer(ops.commands)
game.game_app.add_typer(archive.commands)
app.add_typer(game.game_app, name="game")
app.add_typer(mail.outbox_app, name="outbox")
app.add_typer(mail.inbox_app, name="inbox")
app.add_typer(mail.player_app, name="player")
app.add_typer(ops.db_app, name="db")
app.add_typer(commitlog.log_app, name="log")
mail.player_app.command(
    "forget",
    epilog=examples(
        "pbem player forget alice@example.com",
        "pbem player forget alice@example.com --abort-games --yes",
    ),
)(ops.player_forget)


def _print_version(value: bool) -> None:
    if value:
        out.print(version_line(), highlight=False)  # as bare `pbem --version` prints it
        raise typer.Exit()


@app.callback()
def _main(
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="TOML config file (or PBEM_CONFIG).")
    ] = None,
    data_dir: Annotated[
        Path | None, typer.Option("--data-dir", help="Folder for the embedded defaults.")
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log our own DEBUG lines too.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", callback=_print_version, is_eager=True
        ),
    ] = False,
) -> None:
    state.config_file = config
    state.data_dir = data_dir
    state.verbose = verbose
    configure_logging(logging.DEBUG if verbose else logging.WARNING)
