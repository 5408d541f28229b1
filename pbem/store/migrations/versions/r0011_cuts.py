"""Bound cuts and linked games: every cut mail a game received, accepted or refused
(``cut_mail``; the ``sha256`` of its text stands for it once its player was forgotten
and the text removed), and what the game a rematch or a match's next game follows
ended with (``game.follows``), both exported in the archive's ``deal_proof``; and the
deal protocol of each fair game (``game.deal_protocol``; null: ``pbem-deal/1``, the one
before it was recorded).

Revision ID: 0011_cuts
Revises: 0010_next_seed
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_cuts"
down_revision: str | None = "0010_next_seed"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _id() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    # The game table first: on SQLite batch mode rebuilds it, which a table referring to
    # it would have to survive.
    with op.batch_alter_table("game") as batch:
        batch.add_column(sa.Column("follows", sa.Text(), nullable=True))
        batch.add_column(sa.Column("deal_protocol", sa.String(), nullable=True))
    op.create_table(
        "cut_mail",
        sa.Column("id", _id(), nullable=False),
        sa.Column("game_id", _id(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("message_id", sa.String(), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("sha256", sa.String(), nullable=True),
        sa.Column("accepted", sa.Boolean(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name="fk_cut_mail_game_id_game"),
        sa.PrimaryKeyConstraint("id", name="pk_cut_mail"),
    )
    op.create_index("ix_cut_mail_game_id", "cut_mail", ["game_id"])


def downgrade() -> None:
    # The table referring to the game first (see upgrade).
    op.drop_index("ix_cut_mail_game_id", table_name="cut_mail")
    op.drop_table("cut_mail")
    with op.batch_alter_table("game") as batch:
        batch.drop_column("deal_protocol")
        batch.drop_column("follows")
