"""Migration 0019_mail_retention on a database with mail in it, on both backends: the
columns that mark pruned mail, and the index of stored mail by mailbox filled for the
mail stored before; down again, the mail kept."""

from __future__ import annotations

from datetime import UTC, datetime

from alembic import command
from sqlalchemy import Engine, inspect, text

from pbem.store import migrate
from pbem.store.db import alembic_config, check_foreign_keys, sqlite_foreign_keys_off

NOW = datetime(2026, 11, 29, tzinfo=UTC)
BEFORE = "0014_inbound_rule"


def _to(db_engine: Engine, revision: str) -> None:
    """Down to ``revision`` as `migrate` goes up: on SQLite with foreign keys off, for
    the tables a later revision rebuilds (``inbound``, named by ``mail_name``'s rows)."""
    with (
        db_engine.connect() as connection,
        sqlite_foreign_keys_off(connection),
        connection.begin(),
    ):
        config = alembic_config()
        config.attributes["connection"] = connection
        command.downgrade(config, revision)
        check_foreign_keys(connection)


def test_the_index_is_filled_for_the_mail_stored_before(db_engine: Engine) -> None:
    _to(db_engine, BEFORE)
    assert "mail_name" not in inspect(db_engine).get_table_names()
    with db_engine.begin() as connection:
        for n in range(3):
            connection.execute(
                text(
                    "INSERT INTO inbound (message_key, raw, source, received_at, status, "
                    "attempts) VALUES (:k, :raw, 'test', :now, 'applied', 1)"
                ),
                {
                    "k": f"<in{n}@example.com>",
                    "raw": f"From: Ann <Ann+{n}@Example.com>\nTo: x@pbem.test\n\nhi\n".encode(),
                    "now": NOW,
                },
            )
        connection.execute(
            text(
                "INSERT INTO outbox (message_id, recipient, sender, kind, raw, status, "
                "attempts, next_attempt_at, created_at, starts_clock) VALUES ('<o@pbem.test>', "
                "'bo@example.net', 'x@pbem.test', 'turn', :raw, 'sent', 1, :now, :now, :no)"
            ),
            {
                "raw": b"To: bo@example.net\n\nyour turn, see cy@example.org\n",
                "now": NOW,
                "no": False,
            },
        )
    migrate(db_engine)
    with db_engine.connect() as connection:
        rows = connection.execute(
            text("SELECT mailbox, inbound_id, outbox_id FROM mail_name ORDER BY id")
        ).all()
        pruned = connection.execute(text("SELECT count(*) FROM inbound WHERE pruned_at IS NULL"))
        assert pruned.scalar_one() == 3
    by_box: dict[str, set[tuple[int | None, int | None]]] = {}
    for box, inbound_id, outbox_id in rows:
        by_box.setdefault(box, set()).add((inbound_id, outbox_id))
    assert {i for i, _ in by_box["ann@example.com"]} == {1, 2, 3}
    assert by_box["bo@example.net"] == {(None, 1)} and by_box["cy@example.org"] == {(None, 1)}
    _to(db_engine, BEFORE)
    assert "mail_name" not in inspect(db_engine).get_table_names()
    assert "pruned_at" not in {c["name"] for c in inspect(db_engine).get_columns("inbound")}
    with db_engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM inbound")).scalar_one() == 3
    migrate(db_engine)
