"""Migration 0011_cuts: the ``cut_mail`` table and ``game.follows``, on a database with
games in it, up and down again."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from alembic import command
from sqlalchemy import Engine, inspect, text

from pbem.store import migrate
from pbem.store.db import alembic_config

NOW = datetime(2026, 11, 27, tzinfo=UTC)


def _to(db_engine: Engine, revision: str) -> None:
    with db_engine.begin() as connection:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.downgrade(config, revision)


def test_cut_mails_and_follows_come_and_go_with_the_games_kept(db_engine: Engine) -> None:
    _to(db_engine, "0010_next_seed")
    assert "cut_mail" not in inspect(db_engine).get_table_names()
    with db_engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO game (status, game_type, settings, seed, created_at, updated_at, "
                "action_count, last_move_at, reminders_sent, commitment) VALUES ('cutting', "
                "'cribbage', :s, NULL, :now, :now, 0, :now, 0, 'c')"
            ),
            {"s": json.dumps({"players": 2}), "now": NOW},
        )
        game_id = int(connection.execute(text("SELECT max(id) FROM game")).scalar_one())
    migrate(db_engine)
    with db_engine.begin() as connection:
        kept = connection.execute(text("SELECT follows, deal_protocol FROM game")).one()
        assert tuple(kept) == (None, None)  # a game committed before: pbem-deal/1
        connection.execute(
            text(
                "INSERT INTO cut_mail (game_id, seat, message_id, received_at, text, accepted, "
                "reason) VALUES (:g, 0, '<a@example.com>', :now, '<a@example.com> 7', :no, "
                "'a second cut')"
            ),
            {"g": game_id, "now": NOW, "no": False},
        )
        row = connection.execute(text("SELECT game_id, accepted, reason FROM cut_mail")).one()
    assert (row[0], bool(row[1]), row[2]) == (game_id, False, "a second cut")
    _to(db_engine, "0010_next_seed")
    assert "cut_mail" not in inspect(db_engine).get_table_names()
    columns = {c["name"] for c in inspect(db_engine).get_columns("game")}
    assert not {"follows", "deal_protocol"} & columns and "next_seed" in columns
    with db_engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM game")).scalar_one() == 1
    migrate(db_engine)
