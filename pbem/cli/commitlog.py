"""``pbem log check``: the public commitment log checked whole (`engine.commitlog`).

Every entry chained to the one before, each hash its own, one commitment per game and
one end per game with the seed of its commitment; the stored head is the last entry's.
Prints the counts: games, dealt (played, aborted after the deal), aborted before the
deal, not ended. Exit 0 when the log holds, 1 at the first problem.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from pbem.cli.base import database, examples, fail, out, settings

log_app = typer.Typer(help="The public commitment log of every fair game's deal.")

LOG_FORMAT = "pbem-commitment-log/1"


@log_app.command("check", epilog=examples("pbem log check", "pbem log check --file log.json"))
def check(
    file: Annotated[
        Path | None,
        typer.Option("--file", help="A published log (pbem site's commitment-log.json)."),
    ] = None,
) -> None:
    """Check the whole commitment log (this service's, or a published copy) and print
    its counts: games, dealt, aborted before the deal, aborted after."""
    from engine.commitlog import check_log

    if file is not None:
        rows, head = read_log(file), None
    else:
        from pbem.store.commitlog import entries, head_of

        engine = database(settings())
        try:
            with engine.connect() as connection:
                rows, head = entries(connection), head_of(connection)
        finally:
            engine.dispose()
    found = check_log(rows)
    if head is not None and head != (found.entries, found.head):
        found.problems.append(f"the stored head {head} is not the last entry's")
    if not found.ok:
        fail("the commitment log does not hold: " + "; ".join(found.problems[:5]))
    out.print(f"the commitment log holds: {found.summary()}", highlight=False, soft_wrap=True)


def read_log(path: Path) -> list[Any]:
    """The entries of a published log (``{"format", "head", "entries"}``, or a bare
    list); a clean failure when the file is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror or exc}")
    except (ValueError, UnicodeDecodeError) as exc:
        fail(f"{path} is not a commitment log: {exc}")
    rows = data.get("entries") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        fail(f"{path} is not a commitment log")
    return rows


def published(rows: list[dict[str, Any]], head: tuple[int, str]) -> dict[str, Any]:
    """The log as `pbem site` publishes it (``commitment-log.json``)."""
    return {"format": LOG_FORMAT, "head": {"entries": head[0], "hash": head[1]}, "entries": rows}
