"""A player's own settings, set by mail: which parts their mails carry (text, HTML or
both), whether the service mails them unasked (``stop`` / ``start``), and until when they
are away (``away`` / ``back``), and the away days each seat has used of its game's
allowance.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("player") as batch:
        batch.add_column(
            sa.Column("mail_parts", sa.String(), nullable=False, server_default="both")
        )
        batch.add_column(
            sa.Column("stopped", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("away_until", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("seat") as batch:
        batch.add_column(
            sa.Column("away_days", sa.Integer(), nullable=False, server_default=sa.text("0"))
        )


def downgrade() -> None:
    with op.batch_alter_table("seat") as batch:
        batch.drop_column("away_days")
    with op.batch_alter_table("player") as batch:
        batch.drop_column("away_until")
        batch.drop_column("stopped")
        batch.drop_column("mail_parts")
