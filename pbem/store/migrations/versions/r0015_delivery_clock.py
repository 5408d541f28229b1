"""What the monitoring counts across restarts (``event_count``): delivery attempts that
failed (deferred, failed for good, bounced at RCPT), reminders, timeouts and games
aborted, each counted in the transaction that did it (`pbem.store.counts`), read by
``/metrics`` in one query of a table of a few rows.

Revision ID: 0015_delivery_clock
Revises: 0014_inbound_rule
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_delivery_clock"
down_revision: str | None = "0014_inbound_rule"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "event_count",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False, server_default="0"),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_event_count")),
    )


def downgrade() -> None:
    op.drop_table("event_count")
