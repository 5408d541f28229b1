"""Index inbound mail by sender and time, for the hourly cap per sender.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_inbound_sender_received_at", "inbound", ["sender", "received_at"])


def downgrade() -> None:
    op.drop_index("ix_inbound_sender_received_at", table_name="inbound")
