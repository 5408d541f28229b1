"""Stored mail kept only while it is needed, and found by the mailboxes it names.

- ``inbound.pruned_at`` and ``outbox.pruned_at``: when the mail's raw bytes were emptied
  (`pbem.store.retention`); the row and its Message-ID stay.
- ``mail_name``: one row per mailbox a stored mail names (`pbem.store.named`), so that
  ``pbem player forget`` reads one player's mail, not every stored mail. Filled here for
  the mail stored before, in batches.

Revision ID: 0019_mail_retention
Revises: 0016_commitment_log
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_mail_retention"
down_revision: str | None = "0016_commitment_log"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 500


def upgrade() -> None:
    for table in ("inbound", "outbox"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("pruned_at", sa.DateTime(timezone=True), nullable=True))
        op.create_index(f"ix_{table}_pruned_at_id", table, ["pruned_at", "id"])
    # Pruning asks whether a confirmation request still waits on a received mail.
    op.create_index("ix_confirmation_inbound_id", "confirmation", ["inbound_id"])
    id_type = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "mail_name",
        sa.Column("id", id_type, nullable=False),
        sa.Column("mailbox", sa.String(), nullable=False),
        sa.Column("inbound_id", id_type, nullable=True),
        sa.Column("outbox_id", id_type, nullable=True),
        sa.ForeignKeyConstraint(
            ["inbound_id"], ["inbound.id"], name="fk_mail_name_inbound_id_inbound"
        ),
        sa.ForeignKeyConstraint(["outbox_id"], ["outbox.id"], name="fk_mail_name_outbox_id_outbox"),
        sa.PrimaryKeyConstraint("id", name="pk_mail_name"),
    )
    op.create_index("ix_mail_name_mailbox", "mail_name", ["mailbox"])
    _backfill()


def _backfill() -> None:
    """Index the mail stored before this revision, ``BATCH`` rows at a time."""
    from pbem.mail.named import MANY, fold_mailbox, named_mailboxes

    connection = op.get_bind()
    names = sa.table(
        "mail_name",
        sa.column("mailbox", sa.String()),
        sa.column("inbound_id", sa.Integer()),
        sa.column("outbox_id", sa.Integer()),
    )
    for table, column, extra in (
        ("inbound", "inbound_id", None),
        ("outbox", "outbox_id", "recipient"),  # and its sender: the service's own address
    ):
        other = "outbox_id" if column == "inbound_id" else "inbound_id"
        source = sa.table(table, sa.column("id", sa.Integer()), sa.column("raw", sa.LargeBinary()))
        cols = [source.c.id, source.c.raw]
        if extra is not None:
            cols += [sa.column(extra, sa.String()), sa.column("sender", sa.String())]
        last = 0
        while True:
            rows = connection.execute(
                sa.select(*cols).where(source.c.id > last).order_by(source.c.id).limit(BATCH)
            ).all()
            if not rows:
                break
            values: list[dict[str, object]] = []
            for row in rows:
                own = [str(row[3])] if extra is not None and row[3] else []
                named = named_mailboxes(bytes(row[1] or b""), own)
                if extra is not None and MANY not in named and row[2]:
                    named.add(fold_mailbox(str(row[2])))
                values += [{"mailbox": b, column: row[0], other: None} for b in sorted(named)]
            if values:
                connection.execute(sa.insert(names), values)
            last = rows[-1][0]


def downgrade() -> None:
    op.drop_index("ix_mail_name_mailbox", table_name="mail_name")
    op.drop_table("mail_name")
    op.drop_index("ix_confirmation_inbound_id", table_name="confirmation")
    for table in ("outbox", "inbound"):
        op.drop_index(f"ix_{table}_pruned_at_id", table_name=table)
        op.drop_column(table, "pruned_at")
