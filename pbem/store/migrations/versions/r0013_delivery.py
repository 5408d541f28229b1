"""Clocks that start at delivery: a turn mail whose delivery starts its player's clock
(``outbox.starts_clock``), when a failed mail was queued again (``outbox.retried_at``:
its time to retry runs from then), when a game's clocks started (``game.clock_from``),
and a seat whose turn mail failed for good (``seat.mail_failed_at``; whether the other
players were told: ``seat.mail_failed_told``).

Revision ID: 0013_delivery
Revises: 0012_ratings
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_delivery"
down_revision: str | None = "0012_ratings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(
            sa.Column("starts_clock", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("retried_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("game") as batch:
        batch.add_column(sa.Column("clock_from", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("seat") as batch:
        batch.add_column(sa.Column("mail_failed_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("mail_failed_told", sa.Boolean(), nullable=True))
    op.create_index("ix_seat_mail_failed_at", "seat", ["mail_failed_at"])
    op.create_index("ix_seat_mail_failed_told", "seat", ["mail_failed_told"])


def downgrade() -> None:
    # Plain DROP COLUMN (SQLite 3.35+ has it): a batch copy of ``game`` would have to drop
    # the table, which the foreign keys of the rows that refer to it forbid.
    op.drop_index("ix_seat_mail_failed_told", table_name="seat")
    op.drop_index("ix_seat_mail_failed_at", table_name="seat")
    op.drop_column("seat", "mail_failed_told")
    op.drop_column("seat", "mail_failed_at")
    op.drop_column("game", "clock_from")
    op.drop_column("outbox", "retried_at")
    op.drop_column("outbox", "starts_clock")
