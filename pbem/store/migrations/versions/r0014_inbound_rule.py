"""The rule of intake's chain that ended each received message (``inbound.rule``),
shown by ``pbem inbox list``.

Revision ID: 0014_inbound_rule
Revises: 0013_delivery
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_inbound_rule"
down_revision: str | None = "0013_delivery"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("inbound") as batch:
        batch.add_column(sa.Column("rule", sa.String(), nullable=True))


def downgrade() -> None:
    op.drop_column("inbound", "rule")
