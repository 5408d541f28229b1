"""Hints by mail: whether a game gives its players hints (``hint``), and which seats
agreed to them (``hints on``). Games already against the computer — one player and the
computer's seats — give hints, as new ones do.

Revision ID: 0008_hints
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_hints"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ADD COLUMN (a constant default) on both databases: SQLite's batch mode would
    # copy the game table, which the seats' foreign keys forbid once it holds games.
    op.add_column(
        "game", sa.Column("hints", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column(
        "seat", sa.Column("hints_agreed", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    # A game of one player against the computer gives hints.
    bind = op.get_bind()
    game = sa.table("game", sa.column("id", sa.BigInteger), sa.column("settings", sa.Text))
    seat = sa.table("seat", sa.column("game_id", sa.BigInteger))
    seats: dict[int, int] = dict(
        bind.execute(sa.select(seat.c.game_id, sa.func.count()).group_by(seat.c.game_id)).all()
    )
    rows = bind.execute(
        sa.select(game.c.id, game.c.settings).where(game.c.settings.like('%"computer"%'))
    ).all()
    solo = [
        game_id
        for game_id, settings in rows
        if len(json.loads(settings).get("computer", ())) == seats.get(game_id, 0) - 1
    ]
    if solo:
        bind.execute(
            sa.text("UPDATE game SET hints = :on WHERE id IN :ids").bindparams(
                sa.bindparam("ids", expanding=True), on=True
            ),
            {"ids": solo},
        )


def downgrade() -> None:
    with op.batch_alter_table("seat") as batch:
        batch.drop_column("hints_agreed")
    with op.batch_alter_table("game") as batch:
        batch.drop_column("hints")
