"""away: a player's clocks stand still for a while (``away 5 days``), or run again
(``back``).

The away time is kept on the player's row (``away_until``) and counted on each seat of
theirs in a game in progress, against the game's allowance (the `away_days_per_game`
setting): asking for more than any of their games has left is refused with what is
left. In a game where the player is to move, the reminder and the deadline move back by
the away time (``back`` moves them forward again by what was not used, and gives those
days back, to the nearest day); where it becomes their turn while they are away, the
clocks start when they return (`clock_start`). Nothing here writes mail: `pbem.service.send.answers`
tells the other players.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlmodel import Session

from engine import Game, InvalidSyntaxError
from pbem.commands import Command, away_days
from pbem.render import Notice
from pbem.service.context import Context, Seated, load_game, seats_of
from pbem.store import models as m
from pbem.store._sql import update_row
from pbem.store.games import games_for_player

IN_PROGRESS = (m.GameStatus.ACTIVE.value, m.GameStatus.PAUSED.value)


def when(moment: datetime) -> str:
    """A time as players read it: "29 November 2026, 23:30 UTC"."""
    return moment.strftime("%d %B %Y, %H:%M UTC").lstrip("0")


def is_away(player: m.Player, now: datetime) -> bool:
    return player.away_until is not None and player.away_until > now


def clock_start(game: Game, seats: Sequence[Seated], now: datetime) -> datetime:
    """When the clocks of a game start after a move: now, or when the latest of the
    players to move comes back (a player away has no clock running)."""
    start = now
    for seat in game.to_act():
        if seat < len(seats):
            until = seats[seat].player.away_until
            if until is not None and until > start:
                start = until
    return start


def my_games(ctx: Context, session: Session, player: m.Player) -> list[tuple[m.Game, Game, Seated]]:
    """The player's games in progress: the row, the game and their seat in it."""
    assert player.id is not None
    out = []
    for game_row in games_for_player(session, player.id):
        if game_row.status not in IN_PROGRESS or game_row.id is None:
            continue
        mine = next(s for s in seats_of(session, game_row.id) if s.player.id == player.id)
        out.append((game_row, load_game(ctx, session, game_row), mine))
    return out


def shift_clocks(session: Session, game_row: m.Game, by: timedelta) -> None:
    """Move a game's reminder and deadline by ``by`` (the ones it has)."""
    changes = {}
    if game_row.next_reminder_at is not None:
        changes["next_reminder_at"] = game_row.next_reminder_at + by
    if game_row.deadline_at is not None:
        changes["deadline_at"] = game_row.deadline_at + by
    if changes:
        update_row(session, game_row, **changes)


def go_away(
    ctx: Context, session: Session, player: m.Player, cmd: Command, now: datetime
) -> Notice:
    """``away N days``: applied, or refused (unreadable, already away, beyond the
    allowance of one of the player's games: with what is left)."""
    try:
        days = away_days(cmd)
    except InvalidSyntaxError as exc:
        return Notice("refused", str(cmd), str(exc), "away 5 days")
    if is_away(player, now):
        assert player.away_until is not None
        return Notice(
            "refused",
            str(cmd),
            f"You are already away until {when(player.away_until)}.",
            "back (then away again)",
        )
    allowance = ctx.settings.away_days_per_game
    if days > allowance:
        return Notice("refused", str(cmd), f"Each game allows at most {allowance} days away.", None)
    games = my_games(ctx, session, player)
    short = [
        (g, allowance - s.seat.away_days)
        for g, _, s in games
        if s.seat.away_days + days > allowance
    ]
    if short:
        left = ", ".join(f"{max(n, 0)} in game {g.id}" for g, n in short)
        return Notice(
            "refused",
            str(cmd),
            f"Each game allows {allowance} days away; you have {left}.",
            f"away {max(0, min(n for _, n in short))} days"
            if min(n for _, n in short) > 0
            else None,
        )
    until = now + timedelta(days=days)
    update_row(session, player, away_until=until)
    for game_row, game, mine in games:
        update_row(session, mine.seat, away_days=mine.seat.away_days + days)
        if mine.seat.seat in game.to_act():
            shift_clocks(session, game_row, timedelta(days=days))
    return Notice(
        "applied",
        str(cmd),
        f"You are away until {when(until)}: your clocks stand still until then, and the "
        "other players are told. Send 'back' when you return.",
    )


def come_back(
    ctx: Context, session: Session, player: m.Player, cmd: Command, now: datetime
) -> Notice:
    """``back``: the away time ends now; its unused days (to the nearest day) go back to
    each game's allowance."""
    if not is_away(player, now):
        return Notice("refused", str(cmd), "You are not away.")
    assert player.away_until is not None
    unused = player.away_until - now
    back_days = round(unused / timedelta(days=1))
    update_row(session, player, away_until=None)
    for game_row, game, mine in my_games(ctx, session, player):
        update_row(session, mine.seat, away_days=max(0, mine.seat.away_days - back_days))
        if mine.seat.seat in game.to_act():
            shift_clocks(session, game_row, -unused)
    return Notice("applied", str(cmd), "Welcome back: your clocks run again.")
