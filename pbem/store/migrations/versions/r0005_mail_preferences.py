"""Fewer mails: a player's choice of mail after every move, and what each seat's last turn
mail told it (how many game events it had seen, and a digest of what it could do).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("player") as batch:
        batch.add_column(
            sa.Column("mail_all", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("seat") as batch:
        batch.add_column(sa.Column("mailed_events", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("mailed_state", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seat") as batch:
        batch.drop_column("mailed_state")
        batch.drop_column("mailed_events")
    with op.batch_alter_table("player") as batch:
        batch.drop_column("mail_all")
