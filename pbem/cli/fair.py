"""``pbem verify`` and ``pbem standings``: checking a game's deals, and the ratings table.

``pbem verify`` exits 0 when every deal is verified, 1 at the first mismatch (or an
unreadable archive), and 3 when the game's deals are not verifiable at all (a game from
before the protocol, or one dealt from an admin's ``--seed``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from sqlmodel import Session

from engine import EngineError
from pbem.cli.base import err, examples, fail, guard, out, service

commands = typer.Typer()  # no name: its commands join the group it is added to (pbem.cli)

NOT_VERIFIABLE_EXIT = 3
"""The exit code of ``pbem verify`` for a game whose deals carry no commitment."""


@commands.command(
    "verify", epilog=examples("pbem verify cribbage-12.json", "pbem verify --game 12")
)
def verify(
    file: Annotated[Path | None, typer.Argument(help="A game's JSON archive.")] = None,
    game_id: Annotated[
        int | None, typer.Option("--game", help="An archived game of this service, by id.")
    ] = None,
) -> None:
    """Check every deal of a finished game against its commitment and the players' cuts
    (pbem-deal/1). Exit 0: all verified; 1: a mismatch; 3: not verifiable."""
    from engine.fairness import verify_archive

    if (file is None) == (game_id is None):
        fail("give an archive FILE or --game ID (one of them)")
    if file is not None:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except OSError as exc:
            fail(f"cannot read {file}: {exc.strerror or exc}")
        except (ValueError, UnicodeDecodeError) as exc:
            fail(f"{file} is not a JSON archive: {exc}")
    else:
        data = guard(service().export, game_id)
    try:
        verdict = verify_archive(data)
    except EngineError as exc:
        fail(f"the archive cannot be checked: {exc}")
    if not verdict.verifiable:
        err.print(verdict.message, highlight=False)
        raise typer.Exit(NOT_VERIFIABLE_EXIT)
    if not verdict.ok:
        fail(verdict.message)
    out.print(verdict.message, highlight=False)


@commands.command(
    "standings",
    epilog=examples(
        "pbem standings",
        "pbem standings --json",
        "pbem standings --check",
        "pbem standings --rebuild",
    ),
)
def standings(
    as_json: Annotated[bool, typer.Option("--json", help="The table as JSON.")] = False,
    top: Annotated[int | None, typer.Option("--top", min=1, help="Only the first N.")] = None,
    rebuild: Annotated[
        bool,
        typer.Option(
            "--rebuild",
            help="Recompute the stored table from every finished game (replays them all).",
        ),
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Recompute from every finished game and compare with the stored table "
            "(exit 1 when they differ).",
        ),
    ] = False,
) -> None:
    """The ratings table from every finished game (OpenSkill), with games, wins, skunks
    and average points: pegging and hand per hand, crib per crib owned. The table is
    stored and updated as each game ends; --rebuild recomputes it from the games."""
    from pbem.render.standings import text_table
    from pbem.service.standings import current_standings, rebuild_table, stored_differences

    svc = service()
    if check:
        differences = guard(stored_differences, svc._ctx())
        if differences:
            for line in differences[:20]:
                err.print(line, highlight=False)
            fail(f"the stored standings differ from a recomputation ({len(differences)} lines)")
        out.print("the stored standings equal a recomputation from every finished game")
        return
    if rebuild:
        rebuilt = guard(rebuild_table, svc._ctx())
        out.print(
            f"standings rebuilt from {rebuilt.games} finished games ({len(rebuilt.rows)} players)",
            highlight=False,
        )
    with Session(svc.db) as session:
        table = guard(current_standings, svc._ctx(), session, top)
    if as_json:
        out.print(json.dumps(table.to_json(), indent=1, ensure_ascii=False), highlight=False)
        return
    if not table.rows:
        out.print("no finished game yet", highlight=False)
        return
    out.print(text_table(table.rows), highlight=False)
    out.print(f"{table.games} finished games; rating = mu - 3 sigma (OpenSkill)", highlight=False)
