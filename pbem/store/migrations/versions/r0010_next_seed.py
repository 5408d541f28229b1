"""The next game's server seed (``game.next_seed``): made when a fair game ends, its
commitment shown in the game-over mail, so the answer to that mail is each player's cut
for the rematch or the match's next game.

Revision ID: 0010_next_seed
Revises: 0009_consent
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_next_seed"
down_revision: str | None = "0009_consent"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("game") as batch:
        batch.add_column(sa.Column("next_seed", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("game") as batch:
        batch.drop_column("next_seed")
