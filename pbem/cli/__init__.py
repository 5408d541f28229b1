"""``pbem``: the admin command line.

One module per group of commands, each registering on its own ``Typer``;
:mod:`pbem.cli.root` joins them into one ``app`` (``pbem.cli.app``), in the order
``pbem --help`` lists them:

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

Start-up stays short: a bare ``pbem --version`` answers from :mod:`pbem.cli.version`
before typer is imported, the app is built from modules that import only typer and rich,
and each command imports the settings, the database, the service and the engine when it
runs (``tests/pbem/test_cli_startup.py`` keeps it so; ``benchmarks/startup_bench.py``
measures it).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

    app: typer.Typer


def main() -> None:
    """The ``pbem`` script: run the command line ``sys.argv`` gives."""
    if sys.argv[1:] == ["--version"]:
        # The one command line answered without typer: the same line its --version prints.
        from pbem.cli.version import version_line

        sys.stdout.write(version_line() + "\n")
        return
    from pbem.cli.root import app

    app()


def __getattr__(name: str) -> Any:
    """``pbem.cli.app``: the typer app, built on first use (PEP 562)."""
    if name == "app":
        from pbem.cli.root import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
