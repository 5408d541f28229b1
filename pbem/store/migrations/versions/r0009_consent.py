"""Consent: what each mailbox agreed to and was sent unasked (``consent``), requests
waiting for their sender to prove their address (``confirmation``), and whether a seat's
player joined the game themself (``seat.joined``, ``seat.unjoined_mails``).

Every address already a player is taken as confirmed: under the rules before this
revision they had been seated by the admin or had answered the service's mail.

Revision ID: 0009_consent
Revises: 0008_watch
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0009_consent"
down_revision: str | None = "0008_watch"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _id() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _fold(address: str) -> str:
    """The policy's mailbox of an address (kept here as it was when this ran)."""
    local, at, domain = address.strip().lower().rpartition("@")
    base = local.split("+", 1)[0]
    return (base or local) + at + domain


def upgrade() -> None:
    with op.batch_alter_table("seat") as batch:
        batch.add_column(
            sa.Column("joined", sa.Boolean(), nullable=False, server_default=sa.true())
        )
        batch.add_column(
            sa.Column("unjoined_mails", sa.Integer(), nullable=False, server_default=sa.text("0"))
        )
    consent = op.create_table(
        "consent",
        sa.Column("id", _id(), nullable=False),
        sa.Column("mailbox", sa.String(), nullable=False),
        sa.Column("confirmed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("suppressed", sa.String(), nullable=True),
        sa.Column("suppressed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("suppressed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_unsolicited_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("day", sa.String(), nullable=True),
        sa.Column("invitations_today", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("games_today", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("confirmations_today", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("unjoined_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("unjoined_games", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.PrimaryKeyConstraint("id", name="pk_consent"),
        sa.UniqueConstraint("mailbox", name="uq_consent_mailbox"),
    )
    op.create_table(
        "confirmation",
        sa.Column("id", _id(), nullable=False),
        sa.Column("token", sa.String(), nullable=False),
        sa.Column("address", sa.String(), nullable=False),
        sa.Column("mailbox", sa.String(), nullable=False),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("inbound_id", _id(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["inbound_id"], ["inbound.id"], name="fk_confirmation_inbound_id_inbound"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_confirmation"),
        sa.UniqueConstraint("token", name="uq_confirmation_token"),
    )
    op.create_index("ix_confirmation_mailbox", "confirmation", ["mailbox"])
    # Players so far are confirmed mailboxes, in batches (an installation may hold many).
    bind = op.get_bind()
    now = datetime.now(UTC)
    emails = bind.execute(sa.text("SELECT email FROM player WHERE blocked = :f"), {"f": False})
    boxes = sorted({_fold(email) for (email,) in emails.fetchall()})
    for start in range(0, len(boxes), 5000):
        chunk = boxes[start : start + 5000]
        op.bulk_insert(consent, [{"mailbox": b, "confirmed_at": now} for b in chunk])


def downgrade() -> None:
    op.drop_index("ix_confirmation_mailbox", table_name="confirmation")
    op.drop_table("confirmation")
    op.drop_table("consent")
    with op.batch_alter_table("seat") as batch:
        batch.drop_column("unjoined_mails")
        batch.drop_column("joined")
