"""Initial schema: players, games, seats, the action log, inbound and outbox mail,
error throttling, mailbox cursors and worker leases.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _id() -> sa.types.TypeEngine[int]:
    """BIGINT keys; INTEGER on SQLite, where only INTEGER PRIMARY KEY auto-increments."""
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _when() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create every table."""
    op.create_table(
        "player",
        sa.Column("id", _id(), nullable=False),
        sa.Column("email", sa.String(), nullable=False),
        sa.Column("display_name", sa.String(), nullable=True),
        sa.Column("created_at", _when(), nullable=False),
        sa.Column("bounce_count", sa.Integer(), nullable=False),
        sa.Column("last_bounce_at", _when(), nullable=True),
        sa.Column("last_bounce_reason", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_player")),
        sa.UniqueConstraint("email", name=op.f("uq_player_email")),
    )

    op.create_table(
        "game",
        sa.Column("id", _id(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("game_type", sa.String(), nullable=False),
        sa.Column("settings", sa.Text(), nullable=False),
        sa.Column("seed", sa.String(), nullable=False),
        sa.Column("created_at", _when(), nullable=False),
        sa.Column("updated_at", _when(), nullable=False),
        sa.Column("finished_at", _when(), nullable=True),
        sa.Column("action_count", sa.Integer(), nullable=False),
        sa.Column("state_hash", sa.String(), nullable=True),
        sa.Column("outcome", sa.Text(), nullable=True),
        sa.Column("thread_id", sa.String(), nullable=True),
        sa.Column("last_move_at", _when(), nullable=False),
        sa.Column("next_reminder_at", _when(), nullable=True),
        sa.Column("reminders_sent", sa.Integer(), nullable=False),
        sa.Column("deadline_at", _when(), nullable=True),
        sa.Column("paused_at", _when(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_game")),
    )
    op.create_index(op.f("ix_game_status"), "game", ["status"], unique=False)

    op.create_table(
        "seat",
        sa.Column("id", _id(), nullable=False),
        sa.Column("game_id", _id(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("player_id", _id(), nullable=False),
        sa.Column("token", sa.String(), nullable=False),
        sa.Column("last_mail_id", sa.String(), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_seat_game_id_game")),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_seat_player_id_player")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seat")),
        sa.UniqueConstraint("game_id", "seat", name=op.f("uq_seat_game_id_seat")),
    )
    op.create_index(op.f("ix_seat_player_id"), "seat", ["player_id"], unique=False)
    op.create_index(op.f("ix_seat_token"), "seat", ["token"], unique=True)

    op.create_table(
        "inbound",
        sa.Column("id", _id(), nullable=False),
        sa.Column("message_key", sa.String(), nullable=False),
        sa.Column("raw", sa.LargeBinary(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("received_at", _when(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("sender", sa.String(), nullable=True),
        sa.Column("subject", sa.Text(), nullable=True),
        sa.Column("game_id", _id(), nullable=True),
        sa.Column("processed_at", _when(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_inbound_game_id_game")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_inbound")),
        sa.UniqueConstraint("message_key", name=op.f("uq_inbound_message_key")),
    )
    op.create_index(op.f("ix_inbound_game_id"), "inbound", ["game_id"], unique=False)
    op.create_index(op.f("ix_inbound_status"), "inbound", ["status"], unique=False)

    op.create_table(
        "action_log",
        sa.Column("id", _id(), nullable=False),
        sa.Column("game_id", _id(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("action", sa.Text(), nullable=False),
        sa.Column("auto", sa.Boolean(), nullable=False),
        sa.Column("inbound_id", _id(), nullable=True),
        sa.Column("created_at", _when(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_action_log_game_id_game")),
        sa.ForeignKeyConstraint(
            ["inbound_id"], ["inbound.id"], name=op.f("fk_action_log_inbound_id_inbound")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_action_log")),
        sa.UniqueConstraint("game_id", "seq", name=op.f("uq_action_log_game_id_seq")),
    )
    op.create_index(op.f("ix_action_log_inbound_id"), "action_log", ["inbound_id"], unique=False)

    op.create_table(
        "outbox",
        sa.Column("id", _id(), nullable=False),
        sa.Column("message_id", sa.String(), nullable=False),
        sa.Column("game_id", _id(), nullable=True),
        sa.Column("recipient", sa.String(), nullable=False),
        sa.Column("sender", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("raw", sa.LargeBinary(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", _when(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", _when(), nullable=False),
        sa.Column("sent_at", _when(), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_outbox_game_id_game")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
        sa.UniqueConstraint("message_id", name=op.f("uq_outbox_message_id")),
    )
    op.create_index(op.f("ix_outbox_game_id"), "outbox", ["game_id"], unique=False)
    op.create_index(
        op.f("ix_outbox_status_next_attempt_at"),
        "outbox",
        ["status", "next_attempt_at"],
        unique=False,
    )

    op.create_table(
        "error_throttle",
        sa.Column("id", _id(), nullable=False),
        sa.Column("address", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("last_sent_at", _when(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_error_throttle")),
        sa.UniqueConstraint("address", "kind", name=op.f("uq_error_throttle_address_kind")),
    )

    op.create_table(
        "mailbox_cursor",
        sa.Column("id", _id(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("uidvalidity", sa.BigInteger(), nullable=False),
        sa.Column("last_uid", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", _when(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mailbox_cursor")),
        sa.UniqueConstraint("name", name=op.f("uq_mailbox_cursor_name")),
    )

    op.create_table(
        "worker_lease",
        sa.Column("id", _id(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("holder", sa.String(), nullable=False),
        sa.Column("expires_at", _when(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_worker_lease")),
        sa.UniqueConstraint("name", name=op.f("uq_worker_lease_name")),
    )


def downgrade() -> None:
    """Drop every table (and all data)."""
    for table in (
        "worker_lease",
        "mailbox_cursor",
        "error_throttle",
        "outbox",
        "action_log",
        "inbound",
        "seat",
        "game",
        "player",
    ):
        op.drop_table(table)
