"""Migration 0021_raw_mail on a database with mail in it, on both backends: the raw bytes
of the mail not pruned move to ``inbound_raw`` and ``outbox_raw`` (a pruned mail has no
row there) and the rows read them as before; down again, the bytes move back into
``inbound.raw`` and ``outbox.raw`` (a pruned mail's empty), and up once more."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Engine, inspect, text
from sqlmodel import Session, col, select

from pbem.store import migrate
from pbem.store import models as m
from tests.pbem.store.test_retention_migration import _to

NOW = datetime(2026, 11, 29, tzinfo=UTC)
BEFORE = "0020_proof"
IN_BYTES = [f"From: ann@example.com\nSubject: {n}\n\nplay 5h\n".encode() for n in range(3)]
OUT_BYTES = [b"To: bo@example.net\n\nyour turn\n", b"To: cy@example.org\n\nwelcome\n"]


def _columns(db_engine: Engine, table: str) -> set[str]:
    return {c["name"] for c in inspect(db_engine).get_columns(table)}


def _stored(db_engine: Engine) -> tuple[list[bytes], list[bytes]]:
    """The raw bytes of every stored mail as the rows read them, in id order."""
    with Session(db_engine) as session:
        ins = session.exec(select(m.Inbound).order_by(col(m.Inbound.id))).all()
        outs = session.exec(select(m.Outbox).order_by(col(m.Outbox.id))).all()
        return [row.raw for row in ins], [row.raw for row in outs]


def test_the_raw_bytes_move_to_their_own_tables_and_back(db_engine: Engine) -> None:
    _to(db_engine, BEFORE)
    assert "inbound_raw" not in inspect(db_engine).get_table_names()
    with db_engine.begin() as connection:
        for n, raw in enumerate(IN_BYTES):
            connection.execute(
                text(
                    "INSERT INTO inbound (message_key, raw, source, received_at, status, "
                    "attempts, pruned_at) VALUES (:k, :raw, 'test', :now, 'applied', 1, :pruned)"
                ),
                # The last one pruned already: its bytes emptied, as retention did.
                {
                    "k": f"<in{n}@example.com>",
                    "raw": raw if n < 2 else b"",
                    "now": NOW,
                    "pruned": NOW if n == 2 else None,
                },
            )
        for n, raw in enumerate(OUT_BYTES):
            connection.execute(
                text(
                    "INSERT INTO outbox (message_id, recipient, sender, kind, raw, status, "
                    "attempts, next_attempt_at, created_at, starts_clock, pruned_at) VALUES "
                    "(:k, 'bo@example.net', 'x@pbem.test', 'turn', :raw, 'sent', 1, :now, :now, "
                    ":no, :pruned)"
                ),
                {
                    "k": f"<o{n}@pbem.test>",
                    "raw": raw if n == 0 else b"",
                    "now": NOW,
                    "no": False,
                    "pruned": NOW if n == 1 else None,
                },
            )

    migrate(db_engine)
    assert "raw" not in _columns(db_engine, "inbound") | _columns(db_engine, "outbox")
    with db_engine.connect() as connection:
        kept_in = connection.execute(
            text("SELECT inbound_id, raw FROM inbound_raw ORDER BY inbound_id")
        ).all()
        kept_out = connection.execute(
            text("SELECT outbox_id, raw FROM outbox_raw ORDER BY outbox_id")
        ).all()
    assert [(i, bytes(r)) for i, r in kept_in] == [(1, IN_BYTES[0]), (2, IN_BYTES[1])]
    assert [(i, bytes(r)) for i, r in kept_out] == [(1, OUT_BYTES[0])]
    # The rows read their bytes from there; a pruned mail's are empty.
    assert _stored(db_engine) == ([IN_BYTES[0], IN_BYTES[1], b""], [OUT_BYTES[0], b""])

    _to(db_engine, BEFORE)
    assert "inbound_raw" not in inspect(db_engine).get_table_names()
    assert "outbox_raw" not in inspect(db_engine).get_table_names()
    with db_engine.connect() as connection:
        back_in = connection.execute(text("SELECT raw FROM inbound ORDER BY id")).scalars().all()
        back_out = connection.execute(text("SELECT raw FROM outbox ORDER BY id")).scalars().all()
    assert [bytes(r) for r in back_in] == [IN_BYTES[0], IN_BYTES[1], b""]
    assert [bytes(r) for r in back_out] == [OUT_BYTES[0], b""]
    not_null = {c["name"]: c["nullable"] for c in inspect(db_engine).get_columns("inbound")}
    assert not_null["raw"] is False

    migrate(db_engine)
    assert _stored(db_engine) == ([IN_BYTES[0], IN_BYTES[1], b""], [OUT_BYTES[0], b""])
