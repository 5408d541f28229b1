"""``pbem game``: create, inspect and manage games."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from pbem.cli.base import app_group, examples, fail, guard, new_table, out, service
from pbem.store.states import GameStatus

if TYPE_CHECKING:
    from sqlmodel import Session

    from pbem.service import Service
    from pbem.store import models as m

LEVELS = ("easy", "medium", "hard")
"""The computer's levels, as ``engine.levels.LEVELS`` names them (a test keeps the two
equal): the help lists them without loading the engine's strategies."""

game_app = app_group(help="Create, inspect and manage games.", no_args_is_help=True)


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
        "pbem game new alice@example.com --computer --level easy",
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
    level: Annotated[
        str | None,
        typer.Option("--level", help=f"The computer's level: {', '.join(LEVELS)}."),
    ] = None,
    seed: Annotated[
        str | None,
        typer.Option("--seed", help="Fix the deal (tests, demos): the deals are not verifiable."),
    ] = None,
) -> None:
    """Start a game and mail every player their first hand (with fair_deals on and no
    --seed: the request to cut for the deal first)."""
    from engine import InvalidSyntaxError
    from pbem.commands import computer_level, computer_levels
    from pbem.run.wakeup import poke

    if level is not None and not computer:
        fail("--level is the computer's level: add --computer")
    if level is not None:
        try:
            level = computer_level(level)
        except InvalidSyntaxError:
            fail(f"unknown level {level!r}: choose from {', '.join(computer_levels())}")
    svc = service()
    people = [_parse_player(p) for p in players]
    robots: list[int] = []
    if computer:
        people.append((f"computer@{svc.settings.domain}", "Computer"))
        robots.append(len(people) - 1)
    if count is not None and count != len(people):
        fail(f"--players {count} but {len(people)} players were named")
    game_id = guard(
        svc.new_game,
        people,
        target=to,
        muggins=muggins,
        skunk=skunk,
        seed=seed,
        computer=robots,
        level=level,
    )
    poke(svc.db)
    out.print(f"game {game_id} started; the first emails are in the outbox")


@game_app.command("rematch", epilog=examples("pbem game rematch 12"))
def game_rematch(game_id: int) -> None:
    """Start the next game of a match: same players and settings, the loser deals first."""
    from pbem.run.wakeup import poke

    svc = service()
    new_id = guard(svc.rematch, game_id)
    poke(svc.db)
    out.print(f"game {new_id} started (rematch of game {game_id}); the first emails are queued")


@game_app.command("list", epilog=examples("pbem game list", "pbem game list --status active"))
def game_list(
    status: Annotated[
        GameStatus | None, typer.Option("--status", help="Only games in this state.")
    ] = None,
) -> None:
    """List games."""
    from sqlmodel import Session, select

    from pbem.store import models as m

    svc = service()
    table = new_table("id", "status", "players", "to", "moves", "last move", title="games")
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


def seat_for(svc: Service, session: Session, game_id: int, who: str) -> int:
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
    from sqlmodel import Session

    from engine import player_view
    from pbem.render import render_turn
    from pbem.render.words import pegged
    from pbem.service.send.watchers import watchers_of

    svc = service()
    with Session(svc.db) as session:
        game_row = guard(svc.get_game, session, game_id)
        if game_row.seed is None:
            _show_uncut(svc, session, game_row)
            return
        game = guard(svc.load_game, session, game_row)
        seats = svc._seats(session, game_id)
        if as_player is not None:
            seat = seat_for(svc, session, game_id, as_player)
            view = player_view(game, seat, len(game.events))
            mail = render_turn(view, svc._context(game_row, seats, seat, [], len(game.events)))
            out.print(f"Subject: {mail.subject}\n", highlight=False)
            out.print(mail.text, highlight=False, markup=False)
            return
        table = new_table(
            "seat", "player", "address", "score", title=f"game {game_id}: {game_row.status}"
        )
        for seated in seats:
            side = game.side_of(seated.seat.seat)
            table.add_row(
                str(seated.seat.seat),
                seated.name,
                seated.player.email,
                pegged(game.scores[side], game.settings.target),
            )
        out.print(table)
        waiting = ", ".join(seats[s].name for s in game.to_act()) or "-"
        out.print(
            f"hand {game.hand_no}, phase {game.phase}, dealer {seats[game.dealer].name}, "
            f"waiting for {waiting}; {len(game.actions)} moves; {_seed_words(game_row)}",
            highlight=False,
        )
        watching = watchers_of(session, game_id)
        opened = "open to observers" if game_row.observers else "closed to observers"
        names = ", ".join(player.email for _, player in watching)
        out.print(
            f"{opened}; {len(watching)} watching" + (f": {names}" if names else ""),
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

    from sqlmodel import Session, select

    from pbem.store import models as m

    svc = service()
    limit = hours if hours is not None else svc.settings.reminder_hours
    now = svc.clock()
    table = new_table(
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
    from sqlmodel import Session

    from pbem.run.wakeup import poke

    svc = service()
    n = guard(svc.resend, game_id)
    with Session(svc.db) as session:
        status = guard(svc.get_game, session, game_id).status
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
    from pbem.run.wakeup import poke

    svc = service()
    game_row = guard(svc.set_status, game_id, status, reason)
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


def _seed_words(game_row: m.Game) -> str:
    """The seed, unless it is a fair game's still running: its seed would tell every
    deal to come, so only the commitment is shown until the game is over."""
    if not game_row.commitment:
        return f"seed {game_row.seed} (chosen, not verifiable)"
    if game_row.status == GameStatus.FINISHED.value:
        return f"seed {game_row.seed}; server seed {game_row.server_seed} (pbem verify)"
    return f"commitment {game_row.commitment} (seeds hidden until the game is over)"


def _show_uncut(svc: Service, session: Session, game_row: m.Game) -> None:
    """A fair game not dealt yet: its players and who is still to cut."""
    from pbem.service.game.deals import waiting

    assert game_row.id is not None
    seats = svc._seats(session, game_row.id)
    table = new_table("seat", "player", "address", title=f"game {game_row.id}: {game_row.status}")
    for seated in seats:
        table.add_row(str(seated.seat.seat), seated.name, seated.player.email)
    out.print(table)
    still = ", ".join(seats[s].name for s in waiting(game_row)) or "-"
    out.print(
        f"not dealt yet: waiting for the cut of {still}; commitment {game_row.commitment}",
        highlight=False,
    )
