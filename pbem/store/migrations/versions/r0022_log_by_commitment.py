"""The public commitment log indexed by commitment: an offer's lapse finds the offer it
ends (whatever number the offer was logged with) without reading the whole log.

Revision ID: 0022_log_by_commitment
Revises: 0021_raw_mail
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0022_log_by_commitment"
down_revision: str | None = "0021_raw_mail"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(op.f("ix_commitment_log_commitment"), "commitment_log", ["commitment"])


def downgrade() -> None:
    op.drop_index(op.f("ix_commitment_log_commitment"), table_name="commitment_log")
