"""Observers and digests: whether a game may be watched (``observers``) and each seat's
vote to allow it, who watches which game (``watcher``), and a player's daily digest
(``digest``, and the UTC day of the last one sent, so it goes once a day).

Revision ID: 0008_watch
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_watch"
down_revision: str | None = "0008_replay_mail"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _id() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("game") as batch:
        batch.add_column(
            sa.Column("observers", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("seat") as batch:
        batch.add_column(
            sa.Column("allows_observers", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("player") as batch:
        batch.add_column(
            sa.Column("digest", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("digest_day", sa.String(), nullable=True))
    op.create_table(
        "watcher",
        sa.Column("id", _id(), nullable=False),
        sa.Column("game_id", _id(), nullable=False),
        sa.Column("player_id", _id(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_mail_id", sa.String(), nullable=True),
        sa.Column("mailed_events", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name="fk_watcher_game_id_game"),
        sa.ForeignKeyConstraint(["player_id"], ["player.id"], name="fk_watcher_player_id_player"),
        sa.PrimaryKeyConstraint("id", name="pk_watcher"),
        sa.UniqueConstraint("game_id", "player_id", name="uq_watcher_game_id_player_id"),
    )
    op.create_index("ix_watcher_player_id", "watcher", ["player_id"])


def downgrade() -> None:
    op.drop_index("ix_watcher_player_id", table_name="watcher")
    op.drop_table("watcher")
    with op.batch_alter_table("player") as batch:
        batch.drop_column("digest_day")
        batch.drop_column("digest")
    with op.batch_alter_table("seat") as batch:
        batch.drop_column("allows_observers")
    with op.batch_alter_table("game") as batch:
        batch.drop_column("observers")
