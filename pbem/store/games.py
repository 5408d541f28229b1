"""Queries on games, seats and the action log.

A game's moves are appended strictly in order: `append_actions` checks and advances
`Game.action_count` in the same statement that locks the game row, and the log's unique
(game_id, seq) backs it up, so two transactions can never both add move number N.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cache
from typing import Any, NamedTuple

from sqlalchemy import Update, bindparam, insert, or_, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.orm.util import identity_key
from sqlmodel import Session, col, select

from pbem.store._sql import is_postgresql, is_transient, write_behind
from pbem.store.errors import ConcurrentUpdateError
from pbem.store.models import ActionLog, CutMail, Game, GameStatus, Player, Seat


class LoggedAction(NamedTuple):
    """One action as `append_actions` logged it (the row's columns but its id)."""

    game_id: int
    seq: int
    seat: int | None
    action: dict[str, Any]
    auto: bool
    inbound_id: int | None
    created_at: datetime


class NewAction(NamedTuple):
    """One action to log: the seat that made it (None for the system), the action as a
    JSON-ready dict, and whether it was applied automatically (forced move, timeout)."""

    seat: int | None
    action: Mapping[str, Any]
    auto: bool = False


def create_game(
    session: Session,
    settings: Mapping[str, Any],
    seed: str | None,
    players: Sequence[Player],
    tokens: Sequence[str],
    *,
    now: datetime,
    game_type: str = "cribbage",
    thread_id: str | None = None,
    next_reminder_at: datetime | None = None,
    deadline_at: datetime | None = None,
    match_id: int | None = None,
    match_info: Mapping[str, Any] | None = None,
    rematch_of: int | None = None,
) -> Game:
    """Create an active game with one seat per player, in order (seat 0 first); one game
    of match ``match_id`` (where it stood: ``match_info``), the rematch of ``rematch_of``.

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
        match_id=match_id,
        match_info=dict(match_info) if match_info is not None else None,
        rematch_of=rematch_of,
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
    return [
        (seat, player) for seat, player in session.exec(_SEAT_PLAYERS, params={"game": game_id})
    ]


_SEAT_PLAYERS = (
    select(Seat, Player)
    .join(Player, col(Player.id) == col(Seat.player_id))
    .where(Seat.game_id == bindparam("game"))
    .order_by(col(Seat.seat))
)


def table_by_token(
    session: Session, token: str, *, wait: bool = True
) -> tuple[Game, list[tuple[Seat, Player]], int] | None:
    """The game whose seat holds this reply token, all its seats with their players (seat
    0 first), and the number of the token's seat, in one query; None if unknown.

    On PostgreSQL the game and seat rows are locked for the transaction (and read as the
    newest committed versions): the moves of one game are applied one transaction at a
    time. Without `wait`, a game another transaction holds raises ConcurrentUpdateError
    at once instead of waiting for it, and the transaction stays usable.
    """
    statement = _TABLE_BY_TOKEN
    if is_postgresql(session):
        statement = _TABLE_BY_TOKEN_LOCKED if wait else _TABLE_BY_TOKEN_SKIP
    try:
        rows = session.exec(statement, params={"token": token}).all()
    except DBAPIError as exc:
        if is_transient(exc):  # a deadlock broken, say: try again
            raise ConcurrentUpdateError(f"the game of token {token[:4]}… is busy") from exc
        raise
    if statement is _TABLE_BY_TOKEN_SKIP:
        seats = rows[0][2].settings.get("players", len(rows)) if rows else 0
        if not rows or len(rows) != seats:
            # Nothing (or not every seat) came back: an unknown token, or a game that
            # another transaction holds. Only the first is None.
            if session.exec(_TOKEN_KNOWN, params={"token": token}).first() is None:
                return None
            raise ConcurrentUpdateError(f"the game of token {token[:4]}… is busy")
    if not rows:
        return None
    seated = [(seat, player) for seat, player, _ in rows]
    mine = next(seat.seat for seat, _ in seated if seat.token == token)
    return rows[0][2], seated, mine


_TABLE_BY_TOKEN = (
    select(Seat, Player, Game)
    .join(Player, col(Player.id) == col(Seat.player_id))
    .join(Game, col(Game.id) == col(Seat.game_id))
    .where(
        col(Seat.game_id)
        == select(Seat.game_id).where(Seat.token == bindparam("token")).scalar_subquery()
    )
    .order_by(col(Seat.seat))
)
_LOCKED_TABLES = [Seat.__table__, Game.__table__]  # type: ignore[attr-defined]
_TABLE_BY_TOKEN_LOCKED = _TABLE_BY_TOKEN.with_for_update(of=_LOCKED_TABLES).execution_options(
    populate_existing=True
)
# Rows another transaction holds are skipped, not waited for (nor an error, which would
# spoil the transaction): see above.
_TABLE_BY_TOKEN_SKIP = _TABLE_BY_TOKEN.with_for_update(
    of=_LOCKED_TABLES, skip_locked=True
).execution_options(populate_existing=True)
_TOKEN_KNOWN = select(Seat.id).where(Seat.token == bindparam("token"))


def tables_by_tokens(
    session: Session, tokens: Sequence[str]
) -> dict[str, tuple[Game, list[tuple[Seat, Player]], int]]:
    """`table_by_token` for several tokens in one query (a batch's messages): by token,
    its game, all the game's seats with their players and the token's seat. Unknown
    tokens are left out — and, on PostgreSQL, those of games another transaction holds
    (locked rows are skipped, not waited for): ask `table_by_token` about those."""
    if not tokens:
        return {}
    wanted = set(tokens)
    locking = is_postgresql(session)
    statement = _TABLES_BY_TOKENS_SKIP if locking else _TABLES_BY_TOKENS
    by_game: dict[int | None, list[tuple[Seat, Player, Game]]] = {}
    for seat, player, game in session.exec(statement, params={"tokens": sorted(wanted)}):
        by_game.setdefault(game.id, []).append((seat, player, game))
    out: dict[str, tuple[Game, list[tuple[Seat, Player]], int]] = {}
    for rows in by_game.values():
        game = rows[0][2]
        seated = [(seat, player) for seat, player, _ in rows]
        if locking and len(seated) != game.settings.get("players", len(seated)):
            continue  # a seat held elsewhere: not every seat came back
        for seat, _ in seated:
            if seat.token in wanted:
                out[seat.token] = (game, seated, seat.seat)
    return out


_TABLES_BY_TOKENS = (
    select(Seat, Player, Game)
    .join(Player, col(Player.id) == col(Seat.player_id))
    .join(Game, col(Game.id) == col(Seat.game_id))
    .where(
        col(Seat.game_id).in_(
            select(Seat.game_id).where(col(Seat.token).in_(bindparam("tokens", expanding=True)))
        )
    )
    .order_by(col(Seat.game_id), col(Seat.seat))
)
_TABLES_BY_TOKENS_SKIP = _TABLES_BY_TOKENS.with_for_update(
    of=_LOCKED_TABLES, skip_locked=True
).execution_options(populate_existing=True)


def seat_by_token(session: Session, token: str) -> tuple[Seat, Game, Player] | None:
    """The seat holding this reply token, with its game and player; None if unknown."""
    row = session.exec(_SEAT_BY_TOKEN, params={"token": token}).first()
    if row is None:
        return None
    seat, game, player = row
    return seat, game, player


_SEAT_BY_TOKEN = (
    select(Seat, Game, Player)
    .join(Game, col(Game.id) == col(Seat.game_id))
    .join(Player, col(Player.id) == col(Seat.player_id))
    .where(Seat.token == bindparam("token"))
)


def append_actions(
    session: Session,
    game_id: int,
    first_seq: int,
    actions: Sequence[tuple[int | None, Mapping[str, Any], bool]],
    inbound_id: int | None = None,
    *,
    now: datetime,
    state_hash: str | None = None,
    also: Mapping[str, Any] | None = None,
) -> list[LoggedAction]:
    """Log `actions` as numbers first_seq, first_seq + 1, … of the game.

    `first_seq` must equal the game's `action_count` (the number of actions logged so far);
    the count is advanced, `updated_at` set to `now` and, if given, `state_hash` stored,
    with the other columns in `also` written by the same UPDATE (on a `Game` of the
    session too). Returns what was logged (not loaded back: no ids).
    Raises ConcurrentUpdateError if another transaction logged these numbers first (or the
    game does not exist): the session then stays usable, with nothing of this call
    applied. Rows already logged behind the counter (a damaged log) also raise it; roll
    the transaction back then.
    """
    if first_seq < 0:
        raise ValueError(f"first_seq must be >= 0, not {first_seq}")
    if not actions:
        return []
    values: dict[str, Any] = {
        **(also or {}),
        "action_count": first_seq + len(actions),
        "updated_at": now,
    }
    if state_hash is not None:
        values["state_hash"] = state_hash
    rows: list[dict[str, Any]] = [
        {
            "game_id": game_id,
            "seq": first_seq + offset,
            "seat": seat,
            "action": dict(action),
            "auto": auto,
            "inbound_id": inbound_id,
            "created_at": now,
        }
        for offset, (seat, action, auto) in enumerate(actions)
    ]
    behind = write_behind(session)
    if behind is not None:
        # Held back with the batch's other writes; the count is checked when they are sent.
        behind.update(_GAME, game_id, values, expected=("action_count", first_seq))
        behind.insert(_LOG_ACTION, rows)
    else:
        connection = session.connection()
        result = connection.execute(
            _advance(tuple(sorted(values))), {"row_id": game_id, "expected": first_seq, **values}
        )
        if result.rowcount != 1:
            raise _conflict(session, game_id, first_seq)
        try:
            connection.execute(_LOG_ACTION, rows)
        except IntegrityError as exc:
            raise ConcurrentUpdateError(
                f"game {game_id}: action #{first_seq} (or a later one) is already logged"
            ) from exc
    game = session.identity_map.get(identity_key(Game, game_id))
    if game is not None:
        for name, value in values.items():
            set_committed_value(game, name, value)
    return [LoggedAction(**row) for row in rows]


_GAME = Game.__table__  # type: ignore[attr-defined]
_LOG_ACTION = insert(ActionLog.__table__)  # type: ignore[attr-defined]


@cache
def _advance(columns: tuple[str, ...]) -> Update:
    """UPDATE game SET columns WHERE it is the game and its count is the expected one."""
    return (
        update(_GAME)
        .where(_GAME.c.id == bindparam("row_id"), _GAME.c.action_count == bindparam("expected"))
        .values({name: bindparam(name) for name in columns})
    )


def _conflict(session: Session, game_id: int, first_seq: int) -> ConcurrentUpdateError:
    count = session.exec(select(Game.action_count).where(Game.id == game_id)).first()
    if count is None:
        return ConcurrentUpdateError(f"game {game_id} does not exist")
    return ConcurrentUpdateError(
        f"game {game_id}: tried to log action #{first_seq}, but {count} actions are logged"
    )


def load_actions(session: Session, game_id: int, first_seq: int = 0) -> list[ActionLog]:
    """Every logged action of the game from `first_seq` on, in order of `seq`."""
    statement = select(ActionLog).where(ActionLog.game_id == game_id)
    if first_seq:
        statement = statement.where(col(ActionLog.seq) >= first_seq)
    return list(session.exec(statement.order_by(col(ActionLog.seq))))


def stalled_games(session: Session, now: datetime, limit: int | None = None) -> list[Game]:
    """Active games whose reminder or deadline is due at `now`, oldest first: read from
    the games on the clock (by the index of their status, which SQLite keeps to with
    statistics too, `pbem.run.due`), never from the history."""
    timed = select(Game.id).where(
        col(Game.status).in_((GameStatus.ACTIVE.value, GameStatus.CUTTING.value))
    )
    statement = (
        select(Game)
        .where(
            col(Game.id).in_(timed),
            or_(col(Game.next_reminder_at) <= now, col(Game.deadline_at) <= now),
        )
        .order_by(col(Game.id))
    )
    if limit is not None:
        statement = statement.limit(limit)
    return list(session.exec(statement))


def mark_aborted(session: Session, game_row: Game, reason: str, now: datetime) -> None:
    """Abort ``game_row`` for ``reason``: its clocks stop, and its mail not yet sent is
    cancelled (whoever tells the players queues their mail after this)."""
    from pbem.store._sql import update_row
    from pbem.store.counts import ABORTS, count_event
    from pbem.store.outbox import cancel_game_mail

    assert game_row.id is not None
    cancel_game_mail(session, game_row.id, f"game {game_row.id}: {reason}")
    count_event(session, ABORTS)
    update_row(
        session,
        game_row,
        status=GameStatus.ABORTED.value,
        status_reason=reason,
        next_reminder_at=None,
        deadline_at=None,
        updated_at=now,
    )
    from pbem.store.commitlog import log_end

    log_end(
        session,
        game_row.id,
        game_row.commitment,
        game_row.server_seed,
        dealt=game_row.seed is not None,
        aborted=True,
        now=now,
    )


def log_cut(
    session: Session,
    game_id: int,
    seat: int | None,
    message_id: str | None,
    text: str,
    now: datetime,
    *,
    reason: str | None = None,
) -> None:
    """Record a cut mail of game ``game_id``: accepted when ``reason`` is None, else
    refused for that reason. Its Message-ID is kept with its angle brackets, as the
    entropy text quotes it."""
    mid = message_id.strip().strip("<>") if message_id else ""
    session.add(
        CutMail(
            game_id=game_id,
            seat=seat,
            message_id=f"<{mid}>" if mid else None,
            received_at=now,
            text=text,
            accepted=reason is None,
            reason=reason,
        )
    )
    session.flush()


def cut_mails(session: Session, game_id: int) -> list[CutMail]:
    """Every cut mail of game ``game_id``, in the order received."""
    statement = select(CutMail).where(CutMail.game_id == game_id).order_by(col(CutMail.id))
    return list(session.exec(statement))
