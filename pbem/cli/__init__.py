"""``pbem``: the admin command line.

One module per group of commands, each registering on its own ``Typer``; this module
joins them into one ``app``, in the order ``pbem --help`` lists them:

- :mod:`pbem.cli.base`: what every command shares (consoles, settings, database,
  service, :func:`~pbem.cli.base.fail`, the help's plain words);
- :mod:`pbem.cli.admin`: ``init``, ``config``;
- :mod:`pbem.cli.mail`: ``ingest``, ``players``, ``inbox``, ``outbox``;
- :mod:`pbem.cli.serve`: ``status``, ``serve``, ``demo``;
- :mod:`pbem.cli.fair`: ``verify``, ``standings``;
- :mod:`pbem.cli.game`: ``game`` (new, rematch, list, show, stalled, resend, pause,
  resume, abort), with :mod:`pbem.cli.archive`: ``game replay``, ``export``, ``import``;
- :mod:`pbem.cli.site`: ``replay FILE --html OUT``, ``site DIR``;
- :mod:`pbem.cli.ops`: ``backup``, ``restore``, ``db copy``, ``player forget``.

Every user mistake (a bad config, an unknown game, a malformed file) prints one
clear line on stderr and exits 1 — no tracebacks.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from pbem.cli import admin, archive, fair, game, mail, ops, serve, site
from pbem.cli.base import examples, out, package_version, state
from pbem.logsetup import configure_logging

app = typer.Typer(
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
mail.player_app.command(
    "forget",
    epilog=examples(
        "pbem player forget alice@example.com",
        "pbem player forget alice@example.com --abort-games --yes",
    ),
)(ops.player_forget)


def _print_version(value: bool) -> None:
    if value:
        out.print(f"pbem {package_version()}")
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


def main() -> None:
    app()
