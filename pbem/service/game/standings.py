"""standings: the stored ratings table, rated once when a game ends, and the ``standings`` mail.

A game is rated in the transaction that finishes it (`rate_finished`, called wherever a
game's status becomes finished: a move, a resignation, a timeout's forfeit or the
computer's moves, a fair game dealt, an archive imported), through the pure
`pbem.ratings.apply_record` — the same update a recomputation makes. The game is logged
in ``rated_game`` (once: its id is the key) with its turn, and games that end at once are
rated one after the other (`pbem.store.ratings.next_turn`). So the standings are a read
of the ``rating`` table, whatever the history's length: `current_standings` (every line)
and `standings_for` (the top and one player's line) never replay a game.

`recompute` replays every finished game, in order of (end time, id) as the standings
always did, and `rebuild` stores that: ``pbem standings --rebuild``. A computer seat is
the pseudo-player of its level (`pbem.ratings.computer_key`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from engine import Game
from pbem.ratings import (
    KINDS,
    GameRecord,
    Place,
    Standing,
    Standings,
    apply_record,
    compute_standings,
    computer_key,
    rating_model,
    record_of,
    standing_read,
    standings_read,
)
from pbem.service.context import (
    Context,
    Seated,
    is_computer,
    load_game,
    seat_level,
    seats_of,
)
from pbem.store import models as m
from pbem.store import ratings as stored
from pbem.store._sql import write_behind
from pbem.store.db import session_scope

TOP = 10
"""How many lines the ``standings`` mail shows (and the asker's own)."""


def places_of(game_row: m.Game, seats: Sequence[Seated]) -> list[Place]:
    """Who sat at each seat, as the standings key them."""
    places = []
    for seated in seats:
        if is_computer(game_row, seated.seat.seat):
            level = seat_level(game_row, seated.seat.seat)
            places.append(Place(computer_key(level), f"Computer ({level})", computer=True))
        else:
            places.append(Place(seated.player.email, seated.name))
    return places


def finished_records(ctx: Context, session: Session) -> list[GameRecord]:
    """Every finished game's record, in order of (end time, id): each game replayed."""
    rows = session.exec(
        select(m.Game)
        .where(m.Game.status == m.GameStatus.FINISHED.value)
        .order_by(col(m.Game.finished_at), col(m.Game.id))
    ).all()
    out: list[GameRecord] = []
    for game_row in rows:
        assert game_row.id is not None
        game = load_game(ctx, session, game_row)
        if not game.is_over:
            continue
        places = places_of(game_row, seats_of(session, game_row.id))
        when = game_row.finished_at or game_row.updated_at
        out.append(record_of(game_row.id, when, game, places))
    return out


def recompute(ctx: Context, session: Session) -> Standings:
    """The standings recomputed from scratch: every finished game replayed, in order of
    (end time, id). Its cost grows with the history: for checks and `rebuild` only."""
    return compute_standings(finished_records(ctx, session))


# --- rating a game when it ends -----------------------------------------------------------


def rate_finished(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    game: Game,
    seats: Sequence[Seated] | None = None,
) -> bool:
    """Rate ``game`` in the stored table if it is over (once: a second call for the same
    game raises IntegrityError with the transaction's commit). Returns whether it was
    over. In a batch whose writes are held back, the rating is made when they are sent,
    and dropped with them if the message is put back."""
    if not game.is_over or game.outcome is None:
        return False
    assert game_row.id is not None
    people = list(seats) if seats is not None else seats_of(session, game_row.id)
    record = record_of(
        game_row.id, game_row.finished_at or ctx.clock(), game, places_of(game_row, people)
    )
    ids = {
        seated.player.email: seated.player.id
        for seated in people
        if not is_computer(game_row, seated.seat.seat)
    }
    now = ctx.clock()
    behind = write_behind(session)
    if behind is not None:
        behind.later(lambda held: store_record(held, record, ids, now))
    else:
        store_record(session, record, ids, now)
    return True


def store_record(
    session: Session, record: GameRecord, player_ids: dict[str, int | None], now: datetime
) -> None:
    """Apply one game's rating to the stored lines and log the game as rated."""
    turn = stored.next_turn(session)
    lines = stored.lines_of(session, (place.key for place in record.places))
    table = {key: standing_of(line) for key, line in lines.items()}
    apply_record(table, record, rating_model())
    new: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []
    for key in dict.fromkeys(place.key for place in record.places):
        values = columns_of(table[key])
        if key in lines:
            changed.append({"id": lines[key].id, **values})
        else:
            new.append({**values, "key": key, "player_id": player_ids.get(key)})
    stored.save_lines(session, new, changed)
    stored.log_rated(session, record.game_id, turn, now)


def standing_of(line: m.Rating) -> Standing:
    """A stored line as the standings' `Standing`."""
    return Standing(
        key=line.key,
        name=line.name,
        computer=line.computer,
        mu=line.mu,
        sigma=line.sigma,
        games=line.games,
        wins=line.wins,
        skunks=line.skunks,
        skunked=line.skunked,
        hands=line.hands,
        cribs=line.cribs,
        points={"pegging": line.pegging, "hand": line.hand, "crib": line.crib},
    )


def columns_of(row: Standing) -> dict[str, Any]:
    """A `Standing`'s stored columns (but its key and player)."""
    return {
        "name": row.name,
        "computer": row.computer,
        "mu": row.mu,
        "sigma": row.sigma,
        "rating": row.rating,
        "games": row.games,
        "wins": row.wins,
        "skunks": row.skunks,
        "skunked": row.skunked,
        "hands": row.hands,
        "cribs": row.cribs,
        **{kind: row.points[kind] for kind in KINDS},
    }


# --- reading the table --------------------------------------------------------------------


def current_standings(ctx: Context, session: Session, top: int | None = None) -> Standings:
    """The stored standings: every line (or the best ``top``), best first."""
    return standings_read(stored.top_lines(session, top), stored.rated_games(session))


def standings_for(ctx: Context, session: Session, key: str | None, top: int = TOP) -> Standings:
    """The best ``top`` lines and ``key``'s own line after them when it is not among
    them (the ``standings`` mail): a few rows read by index, however long the table."""
    table = current_standings(ctx, session, top)
    if key is None or table.row(key) is not None:
        return table
    found = stored.line_of(session, key)
    if found is None:
        return table
    mine = standing_read(found, stored.rank_of(session, found))
    return Standings((*table.rows, mine), table.games)


def rebuild(ctx: Context, session: Session) -> Standings:
    """Replace the stored table by a recomputation from every finished game (in order of
    (end time, id), the games logged as rated in that order); returns the standings
    stored."""
    records = finished_records(ctx, session)
    computed = compute_standings(records)
    owners = player_ids(session, records)
    stored.clear(session)
    stored.save_lines(
        session,
        [
            {**columns_of(row), "key": row.key, "player_id": owners.get(row.key)}
            for row in computed.rows
        ],
        [],
    )
    now = ctx.clock()
    stored.log_all_rated(session, [record.game_id for record in records], now)
    return current_standings(ctx, session)


def rebuild_table(ctx: Context) -> Standings:
    """`rebuild` in a transaction of its own (``pbem standings --rebuild``)."""
    with session_scope(ctx.db) as session:
        return rebuild(ctx, session)


def differences(stored_table: Standings, computed: Standings) -> list[str]:
    """What differs between two standings, line by line (empty: the same table).
    Ratings are compared to 1e-9 of their value: the same updates in the same order give
    the same bits, so only a real difference shows."""
    out: list[str] = []
    if stored_table.games != computed.games:
        out.append(f"games: stored {stored_table.games}, recomputed {computed.games}")
    mine = {row.key: row for row in stored_table.rows}
    theirs = {row.key: row for row in computed.rows}
    for key in sorted(mine.keys() | theirs.keys()):
        a, b = mine.get(key), theirs.get(key)
        if a is None or b is None:
            out.append(f"{key}: {'only recomputed' if a is None else 'only stored'}")
            continue
        got, want = line_values(a), line_values(b)
        for name, value in got.items():
            other = want[name]
            if isinstance(value, float) and isinstance(other, float):
                same = math.isclose(value, other, rel_tol=1e-9, abs_tol=1e-12)
            else:
                same = value == other
            if not same:
                out.append(f"{key} {name}: stored {value!r}, recomputed {other!r}")
    return out


def line_values(row: Standing) -> dict[str, Any]:
    """What a line shows and counts, for comparing two tables."""
    return {"rank": row.rank, **columns_of(row)}


def stored_differences(ctx: Context) -> list[str]:
    """How the stored table differs from a recomputation (``pbem standings --check``)."""
    with Session(ctx.db) as session:
        return differences(current_standings(ctx, session), recompute(ctx, session))


def player_ids(session: Session, records: Iterable[GameRecord]) -> dict[str, int | None]:
    """The player id of each person's key (address) in ``records``."""
    emails = sorted({p.key for r in records for p in r.places if not p.computer})
    out: dict[str, int | None] = {}
    for start in range(0, len(emails), 500):
        chunk = emails[start : start + 500]
        for player in session.exec(select(m.Player).where(col(m.Player.email).in_(chunk))):
            out[player.email] = player.id
    return out
