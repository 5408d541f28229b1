"""``pbem verify`` and ``pbem standings``: checking a game's deals, and the ratings table.

``pbem verify`` exits 0 when every deal is verified, 1 at the first mismatch (or an
unreadable archive), and 3 when the game's deals cannot be checked: not verifiable at
all (a game from before the protocol, or one dealt from an admin's ``--seed``) or not
yet (the server seed is not revealed while the game runs). The checks are those of
``docs/pbem-deal-1.md``. When the archive names computer seats it also re-derives each
of their moves from that seat's view alone (`engine.audit`); a move that differs is a
mismatch (exit 1) whatever the deals.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from pbem.cli.base import (
    app_group,
    database,
    err,
    escape,
    examples,
    fail,
    guard,
    out,
    service,
    settings,
)

commands = app_group()  # no name: its commands join the group it is added to (pbem.cli)

NOT_VERIFIABLE_EXIT = 3
"""The exit code of ``pbem verify`` for a game whose deals carry no commitment, or
whose server seed is not revealed yet."""


@commands.command(
    "verify",
    epilog=examples(
        "pbem verify cribbage-12.json",
        "pbem verify --game 12",
        "pbem verify cribbage-12.json --seat 0 --cut '<id@example.com> 17 lucky cats'",
    ),
)
def verify(
    file: Annotated[Path | None, typer.Argument(help="A game's JSON archive.")] = None,
    game_id: Annotated[
        int | None, typer.Option("--game", help="An archived game of this service, by id.")
    ] = None,
    seat: Annotated[
        int | None,
        typer.Option("--seat", min=0, help="With --cut: the seat whose recorded cut to check."),
    ] = None,
    cut: Annotated[
        str | None,
        typer.Option("--cut", help="With --seat: the cut text the player's receipt quotes."),
    ] = None,
    previous: Annotated[
        Path | None,
        typer.Option(
            "--previous",
            help="The archive of the game this one follows: check that its follows record "
            "(game, commitment, state hash, result, last dealer) is that game's.",
        ),
    ] = None,
) -> None:
    """Check every deal of a game against its commitment and the players' cuts
    (pbem-deal/1, /2 and /3: docs/pbem-deal-3.md), and every move of its computer seats
    against that seat's own cards. Exit 0: all verified; 1: a mismatch; 3: not
    verifiable, or the server seed not revealed yet."""
    from engine import EngineError
    from engine.dealcheck import verify_archive

    if (file is None) == (game_id is None):
        fail("give an archive FILE or --game ID (one of them)")
    if (seat is None) != (cut is None):
        fail("--seat and --cut go together: the seat, and the cut text of its receipt")
    data = read_json(file) if file is not None else guard(service().export, game_id)
    before = read_json(previous) if previous is not None else None
    if before is not None and not isinstance(before, dict):
        fail(f"{previous} is not a game archive")
    try:
        verdict = verify_archive(data, seat=seat, cut=cut, previous=before)
    except EngineError as exc:
        fail(f"the archive cannot be checked: {exc}")
    code = 0
    if seat is not None and f"seat {seat}'s cut against its receipt" in verdict.checked:
        out.print(f"seat {seat}'s cut as recorded is the text of the receipt", highlight=False)
    for what in verdict.checked:
        out.print(f"checked: {what}", highlight=False)
    if not verdict.verifiable or not verdict.revealed:
        err.print(verdict.message, highlight=False)
        code = NOT_VERIFIABLE_EXIT
    elif not verdict.ok:
        err.print(
            f"[bold red]error:[/] {escape(verdict.message)}",
            highlight=False,
            markup=True,
            soft_wrap=True,
        )
        code = 1
    else:
        out.print(verdict.message, highlight=False)
        for note in verdict.notes:
            out.print(f"note: {note}", highlight=False)
    if not check_computer(data):
        code = 1  # a computer move that its own cards do not give outranks the deals
    if code:
        raise typer.Exit(code)


def read_json(path: Path) -> Any:
    """The JSON in ``path``; a clean failure (exit 1) when it cannot be read."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror or exc}")
    except (ValueError, UnicodeDecodeError) as exc:
        fail(f"{path} is not a JSON archive: {exc}")


def check_computer(data: object) -> bool:
    """When the archive names computer seats, re-derive each of their moves from that
    seat's view alone (`engine.audit`) and print the verdict: "the computer played only
    from its own cards (N decisions re-derived)", or the first move that differs (on
    standard error). True when there is nothing to check or every move agrees."""
    from engine import EngineError
    from engine.audit import audit_archive, engine_label
    from pbem import engine_version

    if not isinstance(data, dict) or not data.get("computer"):
        return True
    try:
        audit = audit_archive(data, engine=engine_label(engine_version()))
    except EngineError as exc:
        err.print(f"the computer's moves cannot be checked: {exc}", highlight=False, soft_wrap=True)
        return False
    if not audit.ok:
        err.print(audit.message, highlight=False, soft_wrap=True)
        return False
    out.print(audit.message, highlight=False, soft_wrap=True)
    return True


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
    if check or rebuild:
        from pbem.service.game.standings import rebuild_table, stored_differences

        svc = service()
        if check:
            differences = guard(stored_differences, svc._ctx())
            if differences:
                for line in differences[:20]:
                    err.print(line, highlight=False)
                fail(f"the stored standings differ from a recomputation ({len(differences)} lines)")
            out.print("the stored standings equal a recomputation from every finished game")
            return
        rebuilt = guard(rebuild_table, svc._ctx())
        out.print(
            f"standings rebuilt from {rebuilt.games} finished games ({len(rebuilt.rows)} players)",
            highlight=False,
        )
    # Reading the stored table needs the database alone, not the service (its mail,
    # templates and engine) nor the ORM: the table's lines come by index, best first.
    from pbem.ratings import standings_read, text_table
    from pbem.store import lines as stored

    engine = database(settings())
    try:
        with engine.connect() as connection:
            lines = stored.top_lines(connection, top)
            table = standings_read(lines, stored.rated_games(connection))
    finally:
        engine.dispose()
    # Plain text as it is: Rich would lay out every line of a table of 20,000 players.
    if as_json:
        sys.stdout.write(json.dumps(table.to_json(), indent=1, ensure_ascii=False) + "\n")
        return
    if not table.rows:
        sys.stdout.write("no finished game yet\n")
        return
    sys.stdout.write(text_table(table.rows) + "\n")
    sys.stdout.write(f"{table.games} finished games; rating = mu - 3 sigma (OpenSkill)\n")
