"""Proof for every change: the day's answers to unproven mail per mailbox
(``consent.answers_today``) and a proven mail's delay over the hourly volume
(``inbound.not_before``).

Revision ID: 0020_proof
Revises: 0019_mail_retention
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020_proof"
down_revision: str | None = "0019_mail_retention"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("consent") as batch:
        batch.add_column(
            sa.Column("answers_today", sa.Integer(), nullable=False, server_default=sa.text("0"))
        )
    with op.batch_alter_table("inbound") as batch:
        batch.add_column(sa.Column("not_before", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("inbound") as batch:
        batch.drop_column("not_before")
    with op.batch_alter_table("consent") as batch:
        batch.drop_column("answers_today")
