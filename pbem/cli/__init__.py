"""``pbem``: the admin command line.

Every user mistake (a bad config, an unknown game, a malformed file) prints one
clear line on stderr and exits 1 — no tracebacks.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError
from sqlmodel import Session, select
from typer.core import TyperArgument, TyperOption

from engine import Action, Discard, EngineError, Game, player_view
from pbem.config import ConfigError, Settings, load_settings, mask_url
from pbem.logsetup import LogFormat, configure_logging
from pbem.service import Service, ServiceError, display_name
from pbem.store import models as m
from pbem.store.db import check_schema, make_engine, migrate
from pbem.store.errors import StoreError
from pbem.wakeup import poke

if TYPE_CHECKING:
    from pbem.daemon import Daemon


def _plain_metavar(param: Any, ctx: Any) -> str | None:
    """What the help shows after an option: its metavar, or a plain word for its value
    (``N``, ``TEXT``, ``PATH``, the choices), and nothing for a flag (not ``<bool>``)."""
    if param.metavar is not None:
        return str(param.metavar) or None
    if isinstance(param, TyperArgument):
        return None  # the argument's name says it already
    label = param.display_type(ctx).strip("<>")  # typer's own: int, bool, a|b, list[str]
    many = label.startswith("list[") or param.nargs != 1
    label = label.removeprefix("list[").removesuffix("]")
    if label == "bool" or getattr(param, "is_flag", False):
        return None
    word = {"int": "N", "float": "NUMBER", "str": "TEXT"}.get(label, label)
    if "|" not in word:
        word = word.upper()
    return word + ("..." if many else "")


# Typer's rich help prints each parameter's Python type (<int>, <bool>, <list[str]>);
# an operator wants the words above instead.
TyperOption.display_type_rich = _plain_metavar  # type: ignore[method-assign,assignment]
TyperArgument.display_type_rich = _plain_metavar  # type: ignore[method-assign,assignment]


def examples(*lines: str) -> str:
    """A command's Examples section (the help's epilog), one command line per line."""
    return "[b]Examples[/b]\n\b\n" + "\n".join(f"  {escape(line)}" for line in lines)


app = typer.Typer(
    help="Play-by-email Cribbage: the admin command line.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
game_app = typer.Typer(help="Create, inspect and manage games.", no_args_is_help=True)
outbox_app = typer.Typer(help="Outgoing mail.", no_args_is_help=True)
inbox_app = typer.Typer(help="Received mail and what became of it.", no_args_is_help=True)
app.add_typer(game_app, name="game")
app.add_typer(outbox_app, name="outbox")
app.add_typer(inbox_app, name="inbox")

# No markup by default: names, addresses, subjects and reasons come from mail, and text
# like "[/b]" in them must be printed as it is (or Rich would garble it, or raise).
# No hard wrapping either: a printed command must stay one line to be copied.
out = Console(markup=False, soft_wrap=True)
err = Console(stderr=True, markup=False)


class _State:
    config_file: Path | None = None
    data_dir: Path | None = None
    verbose: bool = False


state = _State()


def fail(message: str, code: int = 1) -> NoReturn:
    # soft_wrap: one line whatever the terminal width, so logs and scripts see one line
    err.print(
        f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True, soft_wrap=True
    )
    raise typer.Exit(code)


def package_version() -> str:
    """The installed package's version (the source tree's when not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pbem-cribbage")
    except PackageNotFoundError:
        return "unknown"


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


def settings() -> Settings:
    overrides: dict[str, Any] = {}
    if state.data_dir is not None:
        overrides["data_dir"] = state.data_dir
    try:
        cfg = load_settings(state.config_file, **overrides)
    except ConfigError as exc:
        fail(str(exc))
    if not state.verbose and "log_level" in cfg.model_fields_set:
        logging.getLogger("pbem").setLevel(cfg.log_level)
    return cfg


def database(cfg: Settings, *, check: bool = True) -> Engine:
    try:
        if cfg.db_url.startswith("sqlite"):
            cfg.data_dir.mkdir(parents=True, exist_ok=True)
        engine = make_engine(cfg.db_url)
        if check:
            check_schema(engine)
        return engine
    except StoreError as exc:
        fail(str(exc) if "pbem init" in str(exc) else f"{exc} (run 'pbem init')")
    except OperationalError as exc:
        fail(f"cannot open the database {mask_url(cfg.db_url)}: {exc.orig}")
    except Exception as exc:
        fail(f"cannot open the database {mask_url(cfg.db_url)}: {exc}")


def service() -> Service:
    cfg = settings()
    return Service(cfg, database(cfg))


def _guard(func: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return func(*args, **kwargs)
    except (ServiceError, EngineError, ConfigError, StoreError) as exc:
        fail(str(exc))


# -- init / config ------------------------------------------------------------------------


@app.command(epilog=examples("pbem init", "PBEM_DATABASE_URL=postgresql://pbem@db/pbem pbem init"))
def init() -> None:
    """Create the database, or upgrade it to the current schema."""
    cfg = settings()
    engine = database(cfg, check=False)
    try:
        revision = migrate(engine)
    except Exception as exc:
        fail(f"migration failed: {exc}")
    out.print(f"database ready at {mask_url(cfg.db_url)} (schema {revision})")


@app.command("config", epilog=examples("pbem config", "pbem --config /etc/pbem.toml config"))
def show_config() -> None:
    """Show the effective configuration, secrets masked."""
    cfg = settings()
    table = Table("setting", "value", title="pbem configuration")
    for key, value in cfg.masked().items():
        table.add_row(key, str(value))
    out.print(table)


# -- games --------------------------------------------------------------------------------


def _parse_player(text: str) -> tuple[str, str | None]:
    """``alice@example.com`` or ``Alice=alice@example.com``."""
    if "=" in text:
        name, email = text.split("=", 1)
        return email.strip(), name.strip() or None
    return text.strip(), None


@game_app.command(
    "new",
    epilog=examples(
        "pbem game new Alice=alice@example.com bob@example.com",
        "pbem game new alice@example.com --computer --to 61",
        "pbem game new a@x.org b@x.org c@x.org d@x.org --muggins --skunk lurch",
    ),
)
def game_new(
    players: Annotated[list[str], typer.Argument(help="Player addresses (Name=addr allowed).")],
    to: Annotated[int, typer.Option("--to", help="Target score: 61 or 121.")] = 121,
    count: Annotated[
        int | None, typer.Option("--players", help="Number of players (2, 3 or 4).")
    ] = None,
    muggins: Annotated[
        bool, typer.Option("--muggins", help="Players count their own hands.")
    ] = False,
    skunk: Annotated[str, typer.Option("--skunk", help="none, lurch or skunk.")] = "skunk",
    computer: Annotated[
        bool, typer.Option("--computer", help="Fill the last seat with the computer.")
    ] = False,
    seed: Annotated[str | None, typer.Option("--seed", help="Fix the deal (for tests).")] = None,
) -> None:
    """Start a game and mail every player their first hand."""
    svc = service()
    people = [_parse_player(p) for p in players]
    robots: list[int] = []
    if computer:
        people.append((f"computer@{svc.settings.domain}", "Computer"))
        robots.append(len(people) - 1)
    if count is not None and count != len(people):
        fail(f"--players {count} but {len(people)} players were named")
    game_id = _guard(
        svc.new_game, people, target=to, muggins=muggins, skunk=skunk, seed=seed, computer=robots
    )
    poke(svc.db)
    out.print(f"game {game_id} started; the first emails are in the outbox")


@game_app.command("rematch", epilog=examples("pbem game rematch 12"))
def game_rematch(game_id: int) -> None:
    """Start the next game of a match: same players and settings, the loser deals first."""
    svc = service()
    new_id = _guard(svc.rematch, game_id)
    poke(svc.db)
    out.print(f"game {new_id} started (rematch of game {game_id}); the first emails are queued")


@game_app.command("list", epilog=examples("pbem game list", "pbem game list --status active"))
def game_list(
    status: Annotated[
        m.GameStatus | None, typer.Option("--status", help="Only games in this state.")
    ] = None,
) -> None:
    """List games."""
    svc = service()
    table = Table("id", "status", "players", "to", "moves", "last move", title="games")
    with Session(svc.db) as session:
        query = select(m.Game).order_by(m.Game.id)  # type: ignore[arg-type]
        if status:
            query = query.where(m.Game.status == status.value)
        for game in session.exec(query):
            assert game.id is not None
            names = ", ".join(s.name for s in svc._seats(session, game.id))
            table.add_row(
                str(game.id),
                game.status,
                names,
                str(game.settings.get("target")),
                str(game.action_count),
                game.last_move_at.strftime("%Y-%m-%d %H:%M"),
            )
    out.print(table)


def _seat_for(svc: Service, session: Session, game_id: int, who: str) -> int:
    seats = svc._seats(session, game_id)
    for seated in seats:
        if who.isdigit() and int(who) == seated.seat.seat:
            return seated.seat.seat
        if who.lower() in (seated.player.email, seated.name.lower()):
            return seated.seat.seat
    fail(f"no player {who!r} in game {game_id}")


@game_app.command(
    "show", epilog=examples("pbem game show 12", "pbem game show 12 --as alice@example.com")
)
def game_show(
    game_id: int,
    as_player: Annotated[
        str | None,
        typer.Option("--as", help="Show the mail this player would get (address, name or seat)."),
    ] = None,
) -> None:
    """Show a game's board; with --as, exactly what one player sees."""
    from pbem.render import render_turn

    svc = service()
    with Session(svc.db) as session:
        game_row = _guard(svc.get_game, session, game_id)
        game = _guard(svc.load_game, session, game_row)
        seats = svc._seats(session, game_id)
        if as_player is not None:
            seat = _seat_for(svc, session, game_id, as_player)
            view = player_view(game, seat, len(game.events))
            mail = render_turn(view, svc._context(game_row, seats, seat, [], len(game.events)))
            out.print(f"Subject: {mail.subject}\n", highlight=False)
            out.print(mail.text, highlight=False, markup=False)
            return
        table = Table(
            "seat", "player", "address", "score", title=f"game {game_id}: {game_row.status}"
        )
        for seated in seats:
            side = game.side_of(seated.seat.seat)
            table.add_row(
                str(seated.seat.seat), seated.name, seated.player.email, str(game.scores[side])
            )
        out.print(table)
        waiting = ", ".join(seats[s].name for s in game.to_act()) or "-"
        out.print(
            f"hand {game.hand_no}, phase {game.phase}, dealer {seats[game.dealer].name}, "
            f"waiting for {waiting}; {len(game.actions)} moves; seed {game.seed}",
            highlight=False,
        )
        if game.outcome is not None:
            o = game.outcome
            winners = " and ".join(seats[s].name for s in o.winner_seats)
            out.print(
                f"result: {winners} won ({o.label}), scores {list(o.scores)}", highlight=False
            )


@game_app.command("stalled", epilog=examples("pbem game stalled", "pbem game stalled --hours 48"))
def game_stalled(
    hours: Annotated[
        float | None,
        typer.Option("--hours", help="Waiting longer than this (default: the reminder time)."),
    ] = None,
) -> None:
    """Active games waiting on a player, longest first."""
    from datetime import timedelta

    svc = service()
    limit = hours if hours is not None else svc.settings.reminder_hours
    now = svc.clock()
    table = Table(
        "id",
        "waiting for",
        "since",
        "waited",
        "reminders",
        "deadline",
        title=f"games waiting over {limit:g} h",
    )
    with Session(svc.db) as session:
        query = (
            select(m.Game)
            .where(m.Game.status == m.GameStatus.ACTIVE.value)
            .where(m.Game.last_move_at <= now - timedelta(hours=limit))
            .order_by(m.Game.last_move_at)  # type: ignore[arg-type]
        )
        for game_row in session.exec(query):
            assert game_row.id is not None
            game = svc.load_game(session, game_row)
            seats = svc._seats(session, game_row.id)
            waiting = ", ".join(seats[s].name for s in game.to_act()) or "-"
            waited = now - game_row.last_move_at
            deadline = (
                game_row.deadline_at.strftime("%Y-%m-%d %H:%M") if game_row.deadline_at else "-"
            )
            table.add_row(
                str(game_row.id),
                waiting,
                game_row.last_move_at.strftime("%Y-%m-%d %H:%M"),
                f"{waited.total_seconds() / 3600:.1f} h",
                str(game_row.reminders_sent),
                deadline,
            )
    out.print(table)


@game_app.command("resend", epilog=examples("pbem game resend 12"))
def game_resend(game_id: int) -> None:
    """Mail every player their current view again."""
    svc = service()
    n = _guard(svc.resend, game_id)
    with Session(svc.db) as session:
        status = _guard(svc.get_game, session, game_id).status
    poke(svc.db)
    if status == "finished":
        out.print(f"game {game_id} is over: {n} emails queued with the result, no moves offered")
    elif status == "aborted":
        out.print(f"game {game_id} was aborted: {n} emails queued saying so, no moves offered")
    else:
        out.print(f"{n} emails queued")


Reason = Annotated[
    str | None,
    typer.Option("--reason", help="Why, told to every player (a default one if not given)."),
]


def _set_status(game_id: int, status: str, reason: str | None) -> None:
    svc = service()
    game_row = _guard(svc.set_status, game_id, status, reason)
    poke(svc.db)  # the clocks changed and mail was queued: the daemon looks again
    out.print(f"game {game_id} is now {status}; every player was told: {game_row.status_reason}")


@game_app.command(
    "pause", epilog=examples("pbem game pause 12", 'pbem game pause 12 --reason "holiday week"')
)
def game_pause(game_id: int, reason: Reason = None) -> None:
    """Pause a game: moves are refused and the clocks stop."""
    _set_status(game_id, "paused", reason)


@game_app.command("resume", epilog=examples("pbem game resume 12"))
def game_resume(game_id: int, reason: Reason = None) -> None:
    """Resume a paused game."""
    _set_status(game_id, "active", reason)


@game_app.command("abort", epilog=examples('pbem game abort 12 --reason "a player left the club"'))
def game_abort(game_id: int, reason: Reason = None) -> None:
    """Abort a game for good."""
    _set_status(game_id, "aborted", reason)


@game_app.command(
    "replay", epilog=examples("pbem game replay 12 --verify", "pbem game replay 12 --as Bob")
)
def game_replay(
    game_id: int,
    verify: Annotated[
        bool, typer.Option("--verify", help="Re-run the engine and check every stored step.")
    ] = False,
    as_player: Annotated[
        str | None, typer.Option("--as", help="Replay as one player sees it.")
    ] = None,
) -> None:
    """Step through an archived game, state by state."""
    from engine.actions import action_from_json
    from engine.game import Settings as GameSettings
    from pbem.store.games import load_actions

    svc = service()
    with Session(svc.db) as session:
        game_row = _guard(svc.get_game, session, game_id)
        seats = svc._seats(session, game_id)
        names = [s.name for s in seats]
        logged = load_actions(session, game_id)
        game = Game(GameSettings.from_json(game_row.settings), game_row.seed)
        seat_filter = _seat_for(svc, session, game_id, as_player) if as_player else None
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


def _action_seen_by(action: Action, seat: int | None) -> str:
    """A move as ``seat`` saw it made (``None``: as the admin, everything): another
    player's discard lies face down in the crib until the crib is shown."""
    if seat is None or action.seat == seat or not isinstance(action, Discard):
        return str(action)
    n = len(action.cards)
    return f"lays away {n} card{'s' if n > 1 else ''}"


def _print_events(game: Game, names: list[str], since: int, seat: int | None) -> None:
    """The events from ``since`` on: all of them for the admin (``seat`` None), else only
    those in that seat's view (its own deal and discards, and the public events)."""
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


@game_app.command("export", epilog=examples("pbem game export 12 -o game-12.json"))
def game_export(
    game_id: int,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File (default: stdout).")
    ] = None,
) -> None:
    """Write a game's JSON archive."""
    svc = service()
    data = _guard(svc.export, game_id)
    text = json.dumps(data, indent=1, ensure_ascii=False)
    if output is None:
        sys.stdout.write(text + "\n")
    else:
        output.write_text(text + "\n", encoding="utf-8")
        out.print(f"game {game_id} written to {output}")


@game_app.command(
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
        existing = _guard(_stored_copy, svc, data)
        if existing is not None:
            fail(
                f"{file} is game {existing}, stored already (same seed, settings, players and "
                "moves); use --again to import it once more"
            )
    game_id = _guard(svc.import_archive, data)
    out.print(f"imported as game {game_id}")


def _stored_copy(svc: Service, data: dict[str, Any]) -> int | None:
    """The id of a stored game that ``data`` is the archive of, or None: the same seed,
    settings, players (by address, seat by seat) and moves (count and state hash).

    Raises:
        ServiceError: the archive does not replay.
    """
    from engine.archive import load
    from pbem.mail.address import normalize_address

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
            if row.settings != settings_json:
                continue
            if game.actions and row.state_hash != game.state_hash():
                continue
            if [s.player.email for s in svc._seats(session, row.id)] != emails:
                continue
            return row.id
    return None


# -- mail ---------------------------------------------------------------------------------


@app.command(epilog=examples("pbem ingest reply.eml"))
def ingest(file: Path) -> None:
    """Feed one raw message (.eml) as if it had arrived in the inbox, and process it."""
    try:
        raw = file.read_bytes()
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror}")
    if not raw.strip():
        fail(f"{file} is empty")
    svc = service()
    inbound_id, created = svc.receive(raw, "cli")
    if not created:
        out.print(f"already received as inbound {inbound_id}; not processed again")
        return
    result = svc.process(inbound_id)
    poke(svc.db)
    out.print(f"inbound {inbound_id}: {result.status} — {result.reason}", highlight=False)


@outbox_app.command(
    "list", epilog=examples("pbem outbox list", "pbem outbox list --status failed --limit 20")
)
def outbox_list(
    status: Annotated[
        m.OutboxStatus | None, typer.Option("--status", help="Only mail in this state.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", help="At most this many rows.")] = 50,
) -> None:
    """List outgoing mail, newest first."""
    svc = service()
    table = Table(
        "id",
        "status",
        "kind",
        "game",
        "to",
        "tries",
        "next try / sent",
        "last error",
        title="outbox",
    )
    with Session(svc.db) as session:
        query = select(m.Outbox).order_by(m.Outbox.id.desc()).limit(limit)  # type: ignore[union-attr]
        if status:
            query = query.where(m.Outbox.status == status.value)
        for row in session.exec(query):
            when = row.sent_at or row.next_attempt_at
            table.add_row(
                str(row.id),
                row.status,
                row.kind,
                str(row.game_id or ""),
                row.recipient,
                str(row.attempts),
                when.strftime("%Y-%m-%d %H:%M:%S"),
                (row.last_error or "")[:60],
            )
    out.print(table)


@outbox_app.command("retry", epilog=examples("pbem outbox retry", "pbem outbox retry 41 42"))
def outbox_retry(
    ids: Annotated[
        list[int] | None, typer.Argument(help="Outbox ids (default: every failed one).")
    ] = None,
) -> None:
    """Queue failed mail for another try now."""
    from pbem.store.outbox import retry_outbox

    svc = service()
    from pbem.store.db import session_scope

    with session_scope(svc.db) as session:
        count = retry_outbox(session, now=svc.clock(), ids=ids or None, all_failed=not ids)
    poke(svc.db)
    out.print(f"{count} messages queued again")


@inbox_app.command("list", epilog=examples("pbem inbox list", "pbem inbox list --status failed"))
def inbox_list(
    status: Annotated[
        m.InboundStatus | None,
        typer.Option("--status", help="Only mail that ended this way (or is pending)."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit")] = 50,
) -> None:
    """List received mail and what became of it."""
    from pbem.store.inbound import list_inbound

    svc = service()
    table = Table("id", "status", "from", "game", "received", "reason", title="inbox")
    with Session(svc.db) as session:
        for row in list_inbound(session, status.value if status else None, limit):
            table.add_row(
                str(row.id),
                row.status,
                row.sender or "",
                str(row.game_id or ""),
                row.received_at.strftime("%Y-%m-%d %H:%M:%S"),
                (row.reason or "").splitlines()[0][:70] if row.reason else "",
            )
    out.print(table)


@app.command(epilog=examples("pbem players", "pbem players --mail-all alice@example.com"))
def players(
    mail_all: Annotated[
        list[str] | None,
        typer.Option("--mail-all", help="Mail this player after every move (repeatable)."),
    ] = None,
    mail_turns: Annotated[
        list[str] | None,
        typer.Option(
            "--mail-turns",
            help="Mail this player only on their turn or news, the default (repeatable).",
        ),
    ] = None,
) -> None:
    """List players, with bounces and how often they are mailed; --mail-all / --mail-turns
    set the latter (players set it themselves by replying "mail all" or "mail turns")."""
    from pbem.mail.address import normalize_address

    svc = service()
    choices = [(a, True) for a in mail_all or ()] + [(a, False) for a in mail_turns or ()]
    if choices:
        with Session(svc.db) as session:
            for address, every in choices:
                player = session.exec(
                    select(m.Player).where(m.Player.email == normalize_address(address))
                ).first()
                if player is None:
                    fail(f"no player {address!r}")
                player.mail_all = every
                session.add(player)
            session.commit()
    table = Table("id", "name", "address", "mail", "bounces", "last bounce", title="players")
    with Session(svc.db) as session:
        for p in session.exec(select(m.Player).order_by(m.Player.id)):  # type: ignore[arg-type]
            table.add_row(
                str(p.id),
                display_name(p),
                p.email,
                "all" if p.mail_all else "turns",
                str(p.bounce_count),
                (p.last_bounce_reason or "")[:60],
            )
    out.print(table)


@app.command(epilog=examples("pbem status", "pbem status --json", "pbem status || alert-admin"))
def status(
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object instead of text.")
    ] = False,
) -> None:
    """The service's health on one screen: daemon, inbox, outbox, bounces, stalled games,
    the transports' last errors.

    Exit code 0 when healthy; 1 when something needs attention: no daemon running, a
    received message waiting over 5 minutes or failed in the last day, outgoing mail
    overdue by over 15 minutes or failed for good, or a transport whose last error came
    after its last success (each named on a line starting with "!").
    """
    from pbem.status import describe, gather

    svc = service()
    health = gather(svc.settings, svc.db, svc.clock())
    if as_json:
        sys.stdout.write(json.dumps(health.to_json(), ensure_ascii=False) + "\n")
    else:
        for line in describe(health):
            out.print(line, highlight=False)
    if not health.healthy:
        raise typer.Exit(1)


# -- the daemon and the demo ----------------------------------------------------------------

serve_log = logging.getLogger("pbem.serve")


class LogFormatChoice(StrEnum):
    text = "text"
    json = "json"


@app.command(epilog=examples("pbem serve", "pbem serve --once", "pbem -v serve --log-format json"))
def serve(
    once: Annotated[bool, typer.Option("--once", help="Drain everything due, then exit.")] = False,
    log_format: Annotated[
        LogFormatChoice,
        typer.Option(
            "--log-format",
            help="text, or json: one JSON object per line (ts, level, logger, msg and the "
            "line's fields) for log shippers.",
        ),
    ] = LogFormatChoice.text,
) -> None:
    """Run the daemon: watch the inbox, apply moves, send mail, run the clocks.

    It logs to stderr what it serves, one line per message received (applied, rejected,
    ignored or failed, and why) and one per delivery (sent, deferred, failed or bounced),
    at the log_level setting (INFO unless set; -v: DEBUG). SIGTERM or Ctrl-C stops it
    after the step under way, with exit code 0.
    """
    from pbem.daemon import DaemonError
    from pbem.runtime import build_daemon, freeze_startup_objects

    cfg = settings()
    level = logging.DEBUG if state.verbose else cfg.log_level
    fmt: LogFormat = log_format.value
    configure_logging(level, fmt)
    engine = database(cfg)
    try:
        daemon = build_daemon(cfg, engine)
    except (ValueError, DaemonError) as exc:
        fail(str(exc))
    try:
        daemon.claim()
    except DaemonError as exc:
        daemon.close()
        fail(str(exc))
    freeze_startup_objects()
    restore = _stop_on_signals(daemon)
    serve_log.info(
        "pbem %s serving %s for %s: database %s, inbox %s, outbox %s",
        package_version(),
        cfg.address,
        cfg.domain,
        mask_url(cfg.db_url),
        mask_url(cfg.inbound),
        mask_url(cfg.outbound),
        extra={
            "version": package_version(),
            "address": cfg.address,
            "domain": cfg.domain,
            "database": mask_url(cfg.db_url),
            "inbox": mask_url(cfg.inbound),
            "outbox": mask_url(cfg.outbound),
            "once": once,
        },
    )
    interrupted = False
    try:
        daemon.run(once=once)
    except DaemonError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        restore()
    serve_log.info("stopped" if interrupted or daemon.stop_event.is_set() else "done")


def _stop_on_signals(daemon: Daemon) -> Callable[[], None]:
    """Let SIGTERM and SIGINT stop ``daemon`` cleanly; returns a function that puts the
    previous handlers back.

    The first signal asks the loop to stop: the step under way finishes (a message being
    processed is committed or rolled back, never half done) and a wait for mail ends at
    once. A second signal stops at once, even in the middle of a step.
    """
    import signal
    import threading

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return restore  # signals reach the main thread only

    def handler(signum: int, frame: Any) -> None:
        if daemon.stop_event.is_set():
            raise KeyboardInterrupt
        name = signal.Signals(signum).name
        serve_log.info("%s: stopping after the current step", name, extra={"signal": name})
        daemon.stop()

    for sig in (signal.SIGTERM, signal.SIGINT):
        previous[sig] = signal.signal(sig, handler)
    return restore


@app.command(epilog=examples("pbem demo", "pbem demo --to 61 --quiet"))
def demo(
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir", help="Where to keep the demo's files (default: a fresh temporary folder)."
        ),
    ] = None,
    target: Annotated[int, typer.Option("--to", help="61 or 121.")] = 121,
    seed: Annotated[str, typer.Option("--seed", help="The deal.")] = "demo",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the summary.")] = False,
) -> None:
    """Play a complete game by email on SQLite and Maildir between two built-in players."""
    from pbem.demo import run_demo

    try:
        run_demo(directory, target=target, seed=seed, console=out, quiet=quiet)
    except (ServiceError, ConfigError, StoreError) as exc:
        fail(str(exc))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
