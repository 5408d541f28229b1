"""A confirmation request (or welcome) that shows a game's deal commitment before the
game exists keeps its secret server seed (``confirmation.server_seed``): the answer is
the writer's cut for that game's deal.

Revision ID: 0023_offer_seed
Revises: 0022_log_by_commitment
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023_offer_seed"
down_revision: str | None = "0022_log_by_commitment"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("confirmation") as batch:
        batch.add_column(sa.Column("server_seed", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("confirmation") as batch:
        batch.drop_column("server_seed")
