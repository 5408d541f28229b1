"""Stored standings: a line per rated player (``rating``), the games rated in order
(``rated_game``) and their count (``rating_total``), so the standings are a read of a
table instead of a replay of every finished game; and the index that keeps the reminder
and timeout timer from reading every game (``game (status, next_reminder_at,
deadline_at)``).

The tables are filled from the finished games of the installation, replayed in order of
(end time, id) as the standings were computed before this revision (one replay of each
finished game, once: on a large history this takes a while).

Revision ID: 0012_ratings
Revises: 0011_cuts
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0012_ratings"
down_revision: str | None = "0011_cuts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _id() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "rating",
        sa.Column("id", _id(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("player_id", _id(), nullable=True),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("computer", sa.Boolean(), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        *(
            sa.Column(name, sa.Integer(), nullable=False)
            for name in (
                "games",
                "wins",
                "skunks",
                "skunked",
                "hands",
                "cribs",
                "pegging",
                "hand",
                "crib",
            )
        ),
        sa.ForeignKeyConstraint(["player_id"], ["player.id"], name="fk_rating_player_id_player"),
        sa.PrimaryKeyConstraint("id", name="pk_rating"),
        sa.UniqueConstraint("key", name="uq_rating_key"),
    )
    op.create_index("ix_rating_rating_games", "rating", ["rating", "games"])
    op.create_table(
        "rated_game",
        sa.Column("game_id", _id(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("rated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name="fk_rated_game_game_id_game"),
        sa.PrimaryKeyConstraint("game_id", name="pk_rated_game"),
        sa.UniqueConstraint("seq", name="uq_rated_game_seq"),
    )
    total = op.create_table(
        "rating_total",
        sa.Column("id", _id(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_rating_total"),
    )
    op.bulk_insert(total, [{"id": 1, "games": 0}])
    op.create_index("ix_game_next_reminder_at", "game", ["next_reminder_at"])
    op.create_index("ix_game_deadline_at", "game", ["deadline_at"])
    op.create_index("ix_player_digest_digest_day", "player", ["digest", "digest_day"])
    _fill()


def downgrade() -> None:
    op.drop_index("ix_player_digest_digest_day", table_name="player")
    op.drop_index("ix_game_deadline_at", table_name="game")
    op.drop_index("ix_game_next_reminder_at", table_name="game")
    op.drop_table("rating_total")
    op.drop_table("rated_game")
    op.drop_index("ix_rating_rating_games", table_name="rating")
    op.drop_table("rating")


# --- filling the tables from the finished games --------------------------------------------


def _fill() -> None:
    """Rate every finished game, in order of (end time, id), as the standings did."""
    from engine import Game, action_from_json
    from engine import Settings as GameSettings
    from engine.levels import ALIASES, all_names
    from pbem.names import NAME_LIMIT, clean_name
    from pbem.ratings import Place, compute_standings, computer_key, record_of
    from pbem.store.types import JSONText, UTCDateTime

    bind = op.get_bind()
    game = sa.table(
        "game",
        sa.column("id", sa.Integer()),
        sa.column("status", sa.String()),
        sa.column("settings", JSONText()),
        sa.column("seed", sa.String()),
        sa.column("finished_at", UTCDateTime()),
        sa.column("updated_at", UTCDateTime()),
    )
    seat = sa.table(
        "seat",
        sa.column("game_id", sa.Integer()),
        sa.column("seat", sa.Integer()),
        sa.column("player_id", sa.Integer()),
    )
    player = sa.table(
        "player",
        sa.column("id", sa.Integer()),
        sa.column("email", sa.String()),
        sa.column("display_name", sa.String()),
    )
    action_log = sa.table(
        "action_log",
        sa.column("game_id", sa.Integer()),
        sa.column("seq", sa.Integer()),
        sa.column("action", JSONText()),
    )

    def level_of(settings: dict[str, Any], number: int) -> str:
        levels = settings.get("levels") or {}
        level = levels.get(str(number)) if isinstance(levels, dict) else None
        if not isinstance(level, str) or level not in all_names():
            return "medium"
        return str(ALIASES.get(level, level))

    def shown(player_id: int, display: str | None) -> str:
        chosen = clean_name(display or "", NAME_LIMIT)
        return chosen if chosen and "@" not in chosen else f"Player {player_id}"

    finished = bind.execute(
        sa.select(game.c.id, game.c.settings, game.c.seed, game.c.finished_at, game.c.updated_at)
        .where(game.c.status == "finished")
        .order_by(game.c.id)
    ).all()
    records = []
    owners: dict[str, int] = {}
    for game_id, settings, seed, finished_at, updated_at in finished:
        if seed is None:
            continue
        engine_game = Game(GameSettings.from_json(settings), seed)
        for (action,) in bind.execute(
            sa.select(action_log.c.action)
            .where(action_log.c.game_id == game_id)
            .order_by(action_log.c.seq)
        ):
            engine_game.apply(action_from_json(action))
        if not engine_game.is_over:
            continue
        places = []
        robots = set(settings.get("computer", ()))
        for number, player_id, email, display in bind.execute(
            sa.select(seat.c.seat, player.c.id, player.c.email, player.c.display_name)
            .join(player, player.c.id == seat.c.player_id)
            .where(seat.c.game_id == game_id)
            .order_by(seat.c.seat)
        ):
            if number in robots:
                level = level_of(settings, number)
                places.append(Place(computer_key(level), f"Computer ({level})", computer=True))
            else:
                places.append(Place(email, shown(player_id, display)))
                owners[email] = player_id
        records.append(record_of(game_id, finished_at or updated_at, engine_game, places))
    standings = compute_standings(records)
    rating = sa.table(
        "rating",
        *(
            sa.column(name)
            for name in (
                "key",
                "player_id",
                "name",
                "computer",
                "mu",
                "sigma",
                "rating",
                "games",
                "wins",
                "skunks",
                "skunked",
                "hands",
                "cribs",
                "pegging",
                "hand",
                "crib",
            )
        ),
    )
    lines = [
        {
            "key": row.key,
            "player_id": owners.get(row.key),
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
            "pegging": row.points["pegging"],
            "hand": row.points["hand"],
            "crib": row.points["crib"],
        }
        for row in standings.rows
    ]
    if lines:
        bind.execute(sa.insert(rating), lines)
    ordered = sorted(records, key=lambda r: (r.finished_at, r.game_id))
    now = datetime.now(UTC)
    rated = sa.table(
        "rated_game",
        sa.column("game_id", sa.Integer()),
        sa.column("seq", sa.Integer()),
        sa.column("rated_at", UTCDateTime()),
    )
    if ordered:
        bind.execute(
            sa.insert(rated),
            [
                {"game_id": r.game_id, "seq": seq, "rated_at": now}
                for seq, r in enumerate(ordered, start=1)
            ],
        )
    bind.execute(
        sa.text("UPDATE rating_total SET games = :games WHERE id = 1"), {"games": len(ordered)}
    )
