"""Matches (several games between the same players), rematches, and table talk.

A ``game_match`` row per match; each game of one names it (``match_id``) with where the
match stood when the game began (``match_info``), and the finished game it follows
(``rematch_of``). A ``talk`` row per ``say`` (the game keeps the newest id:
``last_talk``); each seat remembers the last talk its game
mail showed (``heard_talk``).

Revision ID: 0008_match
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_match"
down_revision: str | None = "0008_fair"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _id() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "game_match",
        sa.Column("id", _id(), nullable=False),
        sa.Column("best_of", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("score", sa.Text(), nullable=False),
        sa.Column("winner_side", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_game_match"),
    )
    with op.batch_alter_table("game") as batch:
        batch.add_column(sa.Column("match_id", _id(), nullable=True))
        batch.add_column(sa.Column("match_info", sa.Text(), nullable=True))
        batch.add_column(sa.Column("rematch_of", _id(), nullable=True))
        batch.add_column(
            sa.Column("last_talk", sa.Integer(), nullable=False, server_default=sa.text("0"))
        )
        batch.create_foreign_key("fk_game_match_id_game_match", "game_match", ["match_id"], ["id"])
        batch.create_foreign_key("fk_game_rematch_of_game", "game", ["rematch_of"], ["id"])
        batch.create_index("ix_game_match_id", ["match_id"])
        batch.create_index("ix_game_rematch_of", ["rematch_of"])
    with op.batch_alter_table("seat") as batch:
        batch.add_column(
            sa.Column("heard_talk", sa.Integer(), nullable=False, server_default=sa.text("0"))
        )
    op.create_table(
        "talk",
        sa.Column("id", _id(), nullable=False),
        sa.Column("game_id", _id(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("events", sa.Integer(), nullable=False),
        sa.Column("inbound_id", _id(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name="fk_talk_game_id_game"),
        sa.ForeignKeyConstraint(["inbound_id"], ["inbound.id"], name="fk_talk_inbound_id_inbound"),
        sa.PrimaryKeyConstraint("id", name="pk_talk"),
    )
    op.create_index("ix_talk_game_id_seat_created_at", "talk", ["game_id", "seat", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_talk_game_id_seat_created_at", table_name="talk")
    op.drop_table("talk")
    with op.batch_alter_table("seat") as batch:
        batch.drop_column("heard_talk")
    with op.batch_alter_table("game") as batch:
        batch.drop_index("ix_game_rematch_of")
        batch.drop_index("ix_game_match_id")
        batch.drop_constraint("fk_game_rematch_of_game", type_="foreignkey")
        batch.drop_constraint("fk_game_match_id_game_match", type_="foreignkey")
        batch.drop_column("last_talk")
        batch.drop_column("rematch_of")
        batch.drop_column("match_info")
        batch.drop_column("match_id")
    op.drop_table("game_match")
