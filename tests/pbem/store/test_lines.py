"""The standings' read statements (pbem.store.lines, SQLAlchemy Core without the models)
name the models' own tables and columns, and read what the ORM would."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Engine
from sqlmodel import Session

from pbem.store import lines
from pbem.store import models as m
from pbem.store import ratings as stored

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_names_are_the_models() -> None:
    for light, model in (
        (lines.RATING, m.Rating),
        (lines.PLAYER, m.Player),
        (lines.TOTAL, m.RatingTotal),
    ):
        table = getattr(model, "__table__")  # noqa: B009 (SQLModel sets it)
        assert light.name == table.name
        assert {c.name for c in light.columns} <= {c.name for c in table.columns}


def test_the_lines_read_without_the_orm_equal_the_orms(db_engine: Engine) -> None:
    with Session(db_engine) as session:
        alice = m.Player(email="alice@example.com", display_name="Alice", created_at=NOW)
        session.add(alice)
        session.flush()
        for key, player_id, rating in (
            ("alice@example.com", alice.id, 3.5),
            ("computer:good", None, 7.25),
        ):
            session.add(
                m.Rating(
                    key=key,
                    player_id=player_id,
                    name=key,
                    mu=25.0,
                    sigma=8.0,
                    rating=rating,
                    games=2,
                    computer=player_id is None,
                )
            )
        session.merge(m.RatingTotal(id=1, games=2))  # the migration may have made it
        session.commit()
    with db_engine.connect() as connection:
        read = lines.top_lines(connection, None)
        assert [line["key"] for line in read] == ["computer:good", "alice@example.com"]
        assert read[1]["display_name"] == "Alice" and read[0]["display_name"] is None
        assert lines.top_lines(connection, 1) == read[:1]
        assert lines.line_of(connection, "alice@example.com") == read[1]
        assert lines.line_of(connection, "nobody@example.com") is None
        assert lines.rated_games(connection) == 2
    with Session(db_engine) as session:
        assert stored.top_lines(session, None) == read
        assert stored.rated_games(session) == 2
