"""The lobby: invitations to games started by mail, and blocked addresses.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _id() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("player") as batch:
        batch.add_column(
            sa.Column("blocked", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "invitation",
        sa.Column("id", _id(), nullable=False),
        sa.Column("settings", sa.Text(), nullable=False),
        sa.Column("challenger_id", _id(), nullable=False),
        sa.Column("invitee", sa.String(), nullable=False),
        sa.Column("token", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("inbound_id", _id(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["challenger_id"], ["player.id"], name="fk_invitation_challenger_id_player"
        ),
        sa.ForeignKeyConstraint(
            ["inbound_id"], ["inbound.id"], name="fk_invitation_inbound_id_inbound"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_invitation"),
        sa.UniqueConstraint("token", name="uq_invitation_token"),
    )
    op.create_index("ix_invitation_invitee", "invitation", ["invitee"])
    op.create_index("ix_invitation_challenger_id", "invitation", ["challenger_id"])
    op.create_index("ix_invitation_status", "invitation", ["status"])


def downgrade() -> None:
    op.drop_index("ix_invitation_status", table_name="invitation")
    op.drop_index("ix_invitation_challenger_id", table_name="invitation")
    op.drop_index("ix_invitation_invitee", table_name="invitation")
    op.drop_table("invitation")
    with op.batch_alter_table("player") as batch:
        batch.drop_column("blocked")
