"""The public commitment log (``commitment_log``: every fair game's commitment and fate,
hash-chained) and its head (``commitment_head``: one row, locked for each append).

Revision ID: 0016_commitment_log
Revises: 0015_delivery_clock
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from pbem.store.types import ID_TYPE, UTCDateTime

revision: str = "0016_commitment_log"
down_revision: str | None = "0015_delivery_clock"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "commitment_log",
        sa.Column("seq", ID_TYPE, primary_key=True, autoincrement=False),
        sa.Column("game", ID_TYPE, nullable=False),
        sa.Column("event", sa.String(), nullable=False),
        sa.Column("commitment", sa.String(), nullable=False),
        sa.Column("fate", sa.String(), nullable=True),
        sa.Column("server_seed", sa.String(), nullable=True),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("prev", sa.String(), nullable=False),
        sa.Column("hash", sa.String(), nullable=False),
    )
    op.create_index(op.f("ix_commitment_log_game"), "commitment_log", ["game"])
    op.create_table(
        "commitment_head",
        sa.Column("id", ID_TYPE, primary_key=True, autoincrement=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("hash", sa.String(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("commitment_head")
    op.drop_index(op.f("ix_commitment_log_game"), table_name="commitment_log")
    op.drop_table("commitment_log")
