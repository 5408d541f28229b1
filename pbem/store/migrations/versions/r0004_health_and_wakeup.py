"""The daemon's transport health, and the outbox's wake-up notification.

- ``transport_state``: the last error of the inbox (IMAP, Maildir) and of the outbox
  (SMTP, Maildir) and when it came, and when that transport last worked after it; read
  by ``pbem status``.
- PostgreSQL only: a trigger sends ``NOTIFY pbem_wake`` in the transaction that queues
  mail (an insert into the outbox) or makes it due again (a row back to 'pending'), so a
  running daemon waiting in LISTEN sends it at once (see ``pbem.run.wakeup``).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_FUNCTION = """
CREATE OR REPLACE FUNCTION pbem_outbox_wake() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('pbem_wake', '');
    RETURN NULL;
END
$$ LANGUAGE plpgsql
"""


def upgrade() -> None:
    op.create_table(
        "transport_state",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("last_error_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_ok_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_transport_state")),
        sa.UniqueConstraint("name", name=op.f("uq_transport_state_name")),
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(_FUNCTION)
    # One notification per statement that queues mail (PostgreSQL folds repeats within a
    # transaction into one); per row only for the rare move back to 'pending'.
    op.execute(
        "CREATE TRIGGER outbox_wake_insert AFTER INSERT ON outbox "
        "FOR EACH STATEMENT EXECUTE FUNCTION pbem_outbox_wake()"
    )
    op.execute(
        "CREATE TRIGGER outbox_wake_due AFTER UPDATE OF status ON outbox FOR EACH ROW "
        "WHEN (NEW.status = 'pending' AND OLD.status IS DISTINCT FROM 'pending') "
        "EXECUTE FUNCTION pbem_outbox_wake()"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS outbox_wake_due ON outbox")
        op.execute("DROP TRIGGER IF EXISTS outbox_wake_insert ON outbox")
        op.execute("DROP FUNCTION IF EXISTS pbem_outbox_wake()")
    op.drop_table("transport_state")
