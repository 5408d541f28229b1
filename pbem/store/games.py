"""Queries on games, seats and the action log.

A game's moves are appended strictly in order: `append_actions` checks and advances
`Game.action_count` in the same statement that locks the game row, and the log's unique
(game_id, seq) backs it up, so two transactions can never both add move number N.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import or_, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from pbem.store.errors import ConcurrentUpdateError
from pbem.store.models import ActionLog, Game, GameStatus, Player, Seat


class NewAction(NamedTuple):
    """One action to log: the seat that made it (None for the system), the action as a
    JSON-ready dict, and whether it was applied automatically (forced move, timeout)."""

    seat: int | None
    action: Mapping[str, Any]
    auto: bool = False


def create_game(
    session: Session,
    settings: Mapping[str, Any],
    seed: str,
    players: Sequence[Player],
    tokens: Sequence[str],
    *,
    now: datetime,
    game_type: str = "cribbage",
    thread_id: str | None = None,
    next_reminder_at: datetime | None = None,
    deadline_at: datetime | None = None,
) -> Game:
    """Create an active game with one seat per player, in order (seat 0 first).

    `tokens[i]` is the reply token of seat i. Raises ValueError if the counts differ or a
    player appears twice.
    """
    if len(players) != len(tokens):
        raise ValueError(f"{len(players)} players but {len(tokens)} tokens")
    if not players:
        raise ValueError("a game needs at least one player")
    session.flush()
    player_ids = [player.id for player in players]
    if any(player_id is None for player_id in player_ids):
        raise ValueError("every player must be stored before a game is created")
    if len(set(player_ids)) != len(player_ids):
        raise ValueError(f"a player appears twice: {player_ids}")
    game = Game(
        status=GameStatus.ACTIVE.value,
        game_type=game_type,
        settings=dict(settings),
        seed=seed,
        created_at=now,
        updated_at=now,
        action_count=0,
        thread_id=thread_id,
        last_move_at=now,
        next_reminder_at=next_reminder_at,
        reminders_sent=0,
        deadline_at=deadline_at,
    )
    session.add(game)
    session.flush()
    assert game.id is not None
    for number, (player_id, token) in enumerate(zip(player_ids, tokens, strict=True)):
        assert player_id is not None
        session.add(Seat(game_id=game.id, seat=number, player_id=player_id, token=token))
    session.flush()
    return game


def get_game(session: Session, game_id: int) -> Game | None:
    """The game with this id, or None."""
    return session.get(Game, game_id)


def list_games(session: Session, status: str | None = None) -> list[Game]:
    """All games, or those with `status`, oldest first."""
    statement = select(Game).order_by(col(Game.id))
    if status is not None:
        statement = statement.where(Game.status == status)
    return list(session.exec(statement))


def games_for_player(session: Session, player_id: int, status: str | None = None) -> list[Game]:
    """The games in which the player has a seat (only those with `status` if given)."""
    statement = (
        select(Game)
        .join(Seat, col(Seat.game_id) == col(Game.id))
        .where(Seat.player_id == player_id)
        .order_by(col(Game.id))
    )
    if status is not None:
        statement = statement.where(Game.status == status)
    return list(session.exec(statement))


def seats_for_game(session: Session, game_id: int) -> list[Seat]:
    """The seats of a game, seat 0 first."""
    statement = select(Seat).where(Seat.game_id == game_id).order_by(col(Seat.seat))
    return list(session.exec(statement))


def seat_players(session: Session, game_id: int) -> list[tuple[Seat, Player]]:
    """The seats of a game with their players, seat 0 first."""
    statement = (
        select(Seat, Player)
        .join(Player, col(Player.id) == col(Seat.player_id))
        .where(Seat.game_id == game_id)
        .order_by(col(Seat.seat))
    )
    return [(seat, player) for seat, player in session.exec(statement)]


def seat_by_token(session: Session, token: str) -> tuple[Seat, Game, Player] | None:
    """The seat holding this reply token, with its game and player; None if unknown."""
    statement = (
        select(Seat, Game, Player)
        .join(Game, col(Game.id) == col(Seat.game_id))
        .join(Player, col(Player.id) == col(Seat.player_id))
        .where(Seat.token == token)
    )
    row = session.exec(statement).first()
    if row is None:
        return None
    seat, game, player = row
    return seat, game, player


def append_actions(
    session: Session,
    game_id: int,
    first_seq: int,
    actions: Sequence[tuple[int | None, Mapping[str, Any], bool]],
    inbound_id: int | None = None,
    *,
    now: datetime,
    state_hash: str | None = None,
) -> list[ActionLog]:
    """Log `actions` as numbers first_seq, first_seq + 1, … of the game.

    `first_seq` must equal the game's `action_count` (the number of actions logged so far);
    the count is advanced, `updated_at` set to `now` and, if given, `state_hash` stored.
    Raises ConcurrentUpdateError if another transaction logged these numbers first (or the
    game does not exist); the session stays usable, with nothing of this call applied.
    """
    if first_seq < 0:
        raise ValueError(f"first_seq must be >= 0, not {first_seq}")
    if not actions:
        return []
    values: dict[str, Any] = {"action_count": first_seq + len(actions), "updated_at": now}
    if state_hash is not None:
        values["state_hash"] = state_hash
    rows = [
        ActionLog(
            game_id=game_id,
            seq=first_seq + offset,
            seat=seat,
            action=dict(action),
            auto=auto,
            inbound_id=inbound_id,
            created_at=now,
        )
        for offset, (seat, action, auto) in enumerate(actions)
    ]
    try:
        with session.begin_nested():
            result = session.exec(
                update(Game)
                .where(col(Game.id) == game_id, col(Game.action_count) == first_seq)
                .values(**values)
            )
            if result.rowcount != 1:
                raise _conflict(session, game_id, first_seq)
            session.add_all(rows)
            session.flush()
    except IntegrityError as exc:
        raise ConcurrentUpdateError(
            f"game {game_id}: action #{first_seq} (or a later one) is already logged"
        ) from exc
    return rows


def _conflict(session: Session, game_id: int, first_seq: int) -> ConcurrentUpdateError:
    count = session.exec(select(Game.action_count).where(Game.id == game_id)).first()
    if count is None:
        return ConcurrentUpdateError(f"game {game_id} does not exist")
    return ConcurrentUpdateError(
        f"game {game_id}: tried to log action #{first_seq}, but {count} actions are logged"
    )


def load_actions(session: Session, game_id: int) -> list[ActionLog]:
    """Every logged action of the game, in order of `seq`."""
    statement = select(ActionLog).where(ActionLog.game_id == game_id).order_by(col(ActionLog.seq))
    return list(session.exec(statement))


def stalled_games(session: Session, now: datetime, limit: int | None = None) -> list[Game]:
    """Active games whose reminder or deadline is due at `now`, oldest first."""
    statement = (
        select(Game)
        .where(
            Game.status == GameStatus.ACTIVE.value,
            or_(col(Game.next_reminder_at) <= now, col(Game.deadline_at) <= now),
        )
        .order_by(col(Game.id))
    )
    if limit is not None:
        statement = statement.limit(limit)
    return list(session.exec(statement))
