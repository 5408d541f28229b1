"""The raw bytes of stored mail in tables of their own: ``inbound_raw`` and
``outbox_raw``, one row per mail keyed by the mail's id (`pbem.store.rawmail`), so that
pruning deletes whole rows and frees whole pages.

The bytes of every mail not pruned yet move there; ``inbound.raw`` and ``outbox.raw`` go.
Downgrading moves them back (a pruned mail's bytes empty, as before).

On PostgreSQL a dropped column's old values stay in the rows until they are rewritten:
``VACUUM FULL inbound, outbox`` once after upgrading gives their space back at once.

Revision ID: 0021_raw_mail
Revises: 0020_proof
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021_raw_mail"
down_revision: str | None = "0020_proof"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MAILS = (("inbound", "inbound_id"), ("outbox", "outbox_id"))


def upgrade() -> None:
    id_type = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    for table, key in MAILS:
        op.create_table(
            f"{table}_raw",
            sa.Column(key, id_type, autoincrement=False, nullable=False),
            sa.Column("raw", sa.LargeBinary(), nullable=False),
            sa.ForeignKeyConstraint([key], [f"{table}.id"], name=f"fk_{table}_raw_{key}_{table}"),
            sa.PrimaryKeyConstraint(key, name=f"pk_{table}_raw"),
        )
        op.execute(
            f"INSERT INTO {table}_raw ({key}, raw) "
            f"SELECT id, raw FROM {table} WHERE pruned_at IS NULL ORDER BY id"
        )
        with op.batch_alter_table(table) as batch:
            batch.drop_column("raw")


def downgrade() -> None:
    connection = op.get_bind()
    for table, key in MAILS:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("raw", sa.LargeBinary(), nullable=True))
        mails = sa.table(table, sa.column("id", sa.Integer()), sa.column("raw", sa.LargeBinary()))
        kept = sa.table(
            f"{table}_raw", sa.column(key, sa.Integer()), sa.column("raw", sa.LargeBinary())
        )
        bytes_of = sa.select(kept.c.raw).where(kept.c[key] == mails.c.id).scalar_subquery()
        empty = sa.literal(b"", sa.LargeBinary())
        connection.execute(sa.update(mails).values(raw=sa.func.coalesce(bytes_of, empty)))
        with op.batch_alter_table(table) as batch:
            batch.alter_column("raw", existing_type=sa.LargeBinary(), nullable=False)
        op.drop_table(f"{table}_raw")
