"""Migration 0008_hints: games of one player against the computer give hints once
upgraded; games between people do not until every player agrees."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from alembic import command
from sqlalchemy import Engine, text

from pbem.store import migrate
from pbem.store.db import alembic_config

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def _game(connection: object, settings: dict[str, object], players: list[int]) -> int:
    run = connection.execute  # type: ignore[attr-defined]
    run(
        text(
            "INSERT INTO game (status, game_type, settings, seed, created_at, updated_at, "
            "action_count, last_move_at, reminders_sent) VALUES ('active', 'cribbage', :s, "
            "'seed', :now, :now, 0, :now, 0)"
        ),
        {"s": json.dumps(settings), "now": NOW},
    )
    game_id = int(run(text("SELECT max(id) FROM game")).scalar_one())
    for seat, player in enumerate(players):
        run(
            text("INSERT INTO seat (game_id, seat, player_id, token) VALUES (:g, :s, :p, :t)"),
            {"g": game_id, "s": seat, "p": player, "t": f"t{game_id}-{seat}"},
        )
    return game_id


def test_upgrade_turns_hints_on_in_games_against_the_computer(db_engine: Engine) -> None:
    with db_engine.begin() as connection:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0007")
    with db_engine.begin() as connection:
        for email in ("alice@example.com", "bob@example.org", "computer@pbem.test"):
            connection.execute(
                text("INSERT INTO player (email, created_at, bounce_count) VALUES (:e, :n, 0)"),
                {"e": email, "n": NOW},
            )
        ids: dict[str, int] = dict(connection.execute(text("SELECT email, id FROM player")).all())
        alice, bob, robot = (
            ids["alice@example.com"],
            ids["bob@example.org"],
            ids["computer@pbem.test"],
        )
        solo = _game(connection, {"players": 2, "computer": [1]}, [alice, robot])
        people = _game(connection, {"players": 2}, [alice, bob])
        mixed = _game(connection, {"players": 3, "computer": [2]}, [alice, bob, robot])
    migrate(db_engine)
    with db_engine.connect() as connection:
        hints = {k: bool(v) for k, v in connection.execute(text("SELECT id, hints FROM game"))}
        agreed = connection.execute(text("SELECT hints_agreed FROM seat")).scalars().all()
    assert hints == {solo: True, people: False, mixed: False}
    assert not any(agreed)
