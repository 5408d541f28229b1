"""``pbem game replay``, ``export`` and ``import``: a game's moves step by step, and its
JSON archive out and in."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pbem.cli.base import app_group, escape, examples, fail, guard, out, service
from pbem.cli.game import seat_for

if TYPE_CHECKING:
    from engine import Action, Game
    from pbem.service import Service

commands = app_group()  # no name: its commands join the group it is added to (pbem.cli)


@commands.command(
    "replay",
    epilog=examples(
        "pbem game replay 12 --verify",
        "pbem game replay 12 --as Bob",
        "pbem game replay 12 --html game-12.html",
    ),
)
def game_replay(
    game_id: int,
    verify: Annotated[
        bool, typer.Option("--verify", help="Re-run the engine and check every stored step.")
    ] = False,
    as_player: Annotated[
        str | None, typer.Option("--as", help="Replay as one player sees it.")
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Write the replay as one self-contained HTML page to this file (a game "
            "still running: only --as PLAYER's view).",
        ),
    ] = None,
) -> None:
    """Step through an archived game, state by state."""
    from sqlmodel import Session

    from engine import EngineError, Game
    from engine.actions import action_from_json
    from engine.game import Settings as GameSettings
    from pbem.store.games import load_actions

    svc = service()
    if html is not None:
        _write_html(svc, game_id, as_player, html)
        if not verify:
            return
    with Session(svc.db) as session:
        game_row = guard(svc.get_game, session, game_id)
        seats = svc._seats(session, game_id)
        names = [s.name for s in seats]
        logged = load_actions(session, game_id)
        if game_row.seed is None and game_row.status == "aborted":
            # Ended before its deal: no card was dealt and no move made; its seed is
            # revealed all the same (`pbem verify` checks the commitment).
            out.print(
                f"game {game_id} was aborted before its deal"
                + (f" ({escape(game_row.status_reason)})" if game_row.status_reason else "")
                + ": no cards were dealt, so there is nothing to replay",
                highlight=False,
            )
            if verify and logged:
                fail(f"the game was never dealt but its log has {len(logged)} moves")
            if verify:
                out.print("verified: no moves were logged, as a game never dealt has none")
            return
        if game_row.seed is None:
            fail(f"game {game_id} is not dealt yet: it waits for the players' cuts")
        game = Game(GameSettings.from_json(game_row.settings), game_row.seed)
        seat_filter = seat_for(svc, session, game_id, as_player) if as_player else None
    _print_events(game, names, 0, seat_filter)
    shown = len(game.events)
    for expected_seq, row in enumerate(logged):
        if row.seq != expected_seq:
            fail(f"step {expected_seq}: the log jumps to {row.seq}")
        try:
            action = action_from_json(row.action)
            game.apply(action)
        except EngineError as exc:
            fail(f"step {row.seq}: {row.action} does not replay: {exc}")
        who = names[action.seat] if action.seat is not None else "system"
        auto = " (automatic)" if row.auto else ""
        what = _action_seen_by(action, seat_filter)
        line = f"[bold]#{row.seq}[/] {escape(who)}: {escape(what)}{auto}"
        out.print(line, highlight=False, markup=True)
        _print_events(game, names, shown, seat_filter)
        shown = len(game.events)
    if verify:
        if game_row.state_hash and game_row.state_hash != game.state_hash():
            fail("the replayed state does not match the stored state hash")
        if len(logged) != game_row.action_count:
            fail(f"the game records {game_row.action_count} moves but the log has {len(logged)}")
        if game_row.status == "finished" and not game.is_over:
            fail("the game is recorded as finished but the replay is not over")
        out.print(f"verified: {len(logged)} steps replay exactly (state {game.state_hash()[:12]})")
    if game.outcome is not None:
        o = game.outcome
        out.print(
            f"result: {' and '.join(names[s] for s in o.winner_seats)} won, {o.label}, "
            f"scores {list(o.scores)}",
            highlight=False,
        )


def _write_html(svc: Service, game_id: int, as_player: str | None, path: Path) -> None:
    """``game replay --html``: the game's replay page, as ``as_player`` sees it when given."""
    from sqlmodel import Session

    from pbem.render.replay import ReplayPageError, replay_page

    data = guard(svc.export, game_id)
    seat = None
    if as_player is not None:
        with Session(svc.db) as session:
            seat = seat_for(svc, session, game_id, as_player)
    try:
        page = replay_page(data, seat=seat)
    except ReplayPageError as exc:
        fail(f"game {game_id}: {exc}")
    write_page(path, page.html)
    whose = "" if seat is None else f" as {data['players'][seat]['name'] or 'seat ' + str(seat)}"
    out.print(f"replay of game {game_id}{whose} written to {path} ({page.states} steps)")


def write_page(path: Path, text: str) -> None:
    """Write an HTML page; a folder that does not exist or cannot be written is one line."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")


def _action_seen_by(action: Action, seat: int | None) -> str:
    """A move as ``seat`` saw it made (``None``: as the admin, everything): another
    player's discard lies face down in the crib until the crib is shown."""
    from engine import Discard

    if seat is None or action.seat == seat or not isinstance(action, Discard):
        return str(action)
    n = len(action.cards)
    return f"lays away {n} card{'s' if n > 1 else ''}"


def _print_events(game: Game, names: list[str], since: int, seat: int | None) -> None:
    """The events from ``since`` on: all of them for the admin (``seat`` None), else only
    those in that seat's view (its own deal and discards, and the public events)."""
    from engine import player_view

    events = game.events[since:] if seat is None else player_view(game, seat, since).events
    for event in events:
        who = names[event.seat] if event.seat is not None else ""
        cards = " ".join(str(c) for c in event.cards)
        text = f"    {event.kind} {who} {cards}".rstrip()
        if event.count is not None:
            text += f" (count {event.count})"
        if event.points:
            text += f" +{event.points}: " + ", ".join(i.describe() for i in event.items)
        out.print(text, highlight=False, markup=False)


@commands.command("export", epilog=examples("pbem game export 12 -o game-12.json"))
def game_export(
    game_id: int,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File (default: stdout).")
    ] = None,
) -> None:
    """Write a game's JSON archive."""
    from pbem.service import archive_bytes

    svc = service()
    data = guard(svc.export, game_id)
    raw = archive_bytes(data)  # the same bytes a player's `archive` mail attaches
    if output is None:
        sys.stdout.buffer.write(raw)
        sys.stdout.flush()
    else:
        output.write_bytes(raw)
        out.print(f"game {game_id} written to {output}")


@commands.command(
    "import",
    epilog=examples("pbem game import game-12.json", "pbem game import game-12.json --again"),
)
def game_import(
    file: Path,
    again: Annotated[
        bool,
        typer.Option("--again", help="Import it even if the same game is stored already."),
    ] = False,
) -> None:
    """Store a game from its JSON archive (replayed and verified first).

    An archive whose game is stored already (the same seed, settings, players and moves)
    is refused, naming the stored game, unless --again is given.
    """
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        fail(f"{file} does not exist")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        fail(f"{file} is not a JSON archive: {exc}")
    if not isinstance(data, dict):
        fail(f"{file} is not a JSON archive")
    svc = service()
    if not again:
        existing = guard(_stored_copy, svc, data)
        if existing is not None:
            fail(
                f"{file} is game {existing}, stored already (same seed, settings, players and "
                "moves); use --again to import it once more"
            )
    game_id = guard(svc.import_archive, data)
    out.print(f"imported as game {game_id}")


def _stored_copy(svc: Service, data: dict[str, Any]) -> int | None:
    """The id of a stored game that ``data`` is the archive of, or None: the same seed,
    settings, players (by address, seat by seat) and moves (count and state hash).

    Raises:
        ServiceError: the archive does not replay.
    """
    from sqlmodel import Session, select

    from engine import EngineError
    from engine.archive import load
    from pbem.mail.address import normalize_address
    from pbem.service import ServiceError
    from pbem.store import models as m

    try:
        game = load(data)
    except EngineError as exc:
        raise ServiceError(f"the archive does not replay: {exc}") from exc
    people = data.get("players")
    emails = [
        normalize_address(p["email"])
        if isinstance(p, dict) and isinstance(p.get("email"), str)
        else None
        for p in (people if isinstance(people, list) else [])
    ]
    settings_json = game.settings.to_json()
    with Session(svc.db) as session:
        candidates = session.exec(
            select(m.Game)
            .where(m.Game.seed == game.seed)
            .where(m.Game.action_count == len(game.actions))
            .order_by(m.Game.id)  # type: ignore[arg-type]
        ).all()
        for row in candidates:
            assert row.id is not None
            # (The moves the computer made for a player whose time ran out are no rule.)
            if {k: v for k, v in row.settings.items() if k != "timeouts"} != settings_json:
                continue
            if game.actions and row.state_hash != game.state_hash():
                continue
            if [s.player.email for s in svc._seats(session, row.id)] != emails:
                continue
            return row.id
    return None
