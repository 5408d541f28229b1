"""A player's choice of the replay page in the game-over mail (``mail replay on|off``);
NULL follows the configuration's ``mail_replay``.

Revision ID: 0008_replay_mail
Revises: 0008_fair
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_replay_mail"
down_revision: str | None = "0008_match"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("player") as batch:
        batch.add_column(sa.Column("mail_replay", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("player") as batch:
        batch.drop_column("mail_replay")
