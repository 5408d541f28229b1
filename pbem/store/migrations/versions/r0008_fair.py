"""Verifiable deals (pbem-deal/1): a game's commitment, its secret server seed, the
players' cut entropy; the engine seed may be missing while the players cut.

Revision ID: 0008_fair
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_fair"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UNSEEDED = "SELECT id FROM game WHERE seed IS NULL"


def upgrade() -> None:
    with op.batch_alter_table("game") as batch:
        batch.alter_column("seed", existing_type=sa.String(), nullable=True)
        batch.add_column(sa.Column("commitment", sa.String(), nullable=True))
        batch.add_column(sa.Column("server_seed", sa.String(), nullable=True))
        batch.add_column(sa.Column("entropy", sa.Text(), nullable=True))


def downgrade() -> None:
    # A game still waiting for its cuts has no seed: it cannot survive the downgrade.
    op.execute(f"DELETE FROM action_log WHERE game_id IN ({UNSEEDED})")
    op.execute(f"UPDATE inbound SET game_id = NULL WHERE game_id IN ({UNSEEDED})")
    op.execute(f"UPDATE outbox SET game_id = NULL WHERE game_id IN ({UNSEEDED})")
    op.execute(f"DELETE FROM seat WHERE game_id IN ({UNSEEDED})")
    op.execute("DELETE FROM game WHERE seed IS NULL")
    with op.batch_alter_table("game") as batch:
        batch.drop_column("entropy")
        batch.drop_column("server_seed")
        batch.drop_column("commitment")
        batch.alter_column("seed", existing_type=sa.String(), nullable=False)
