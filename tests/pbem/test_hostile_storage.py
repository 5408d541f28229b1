"""Mail that a database cannot hold as it is: stored cleaned, or quarantined, and never
holding back the other mail of its fetch — on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlmodel import Session

from pbem.names import NAME_LIMIT
from pbem.store import models as m
from pbem.store.inbound import insert_inbound_many, message_key
from pbem.store.players import get_or_create_player, record_bounce
from pbem.store.text import KEY_MAX, db_key, db_text
from tests.e2e.helpers import ALICE, BOB, START, Harness, cli_env, reply, run_cli

A = ALICE[0]

NUL_SUBJECT = (
    b"From: Mallory <mallory@evil.example>\r\n"
    b"To: cribbage@pbem.test\r\n"
    b"Subject: =?utf-8?q?hello=00world?=\r\n"
    b"Message-ID: <nul-subject@evil.example>\r\n"
    b"\r\n"
    b"hi\r\n"
)


def discard(h: Harness, game: int) -> bytes:
    cards = sorted(h.game(game).holding(0))[:2]
    return reply(h.latest(A), A, "Alice", "discard " + " ".join(c.ascii for c in cards))


def test_db_text_removes_what_a_column_cannot_hold() -> None:
    assert db_text("hello\x00world\x07", 100) == "helloworld"
    assert db_text("tab\tkept\r\nline", 100) == "tab\tkeptline"
    assert db_text("a\nb\x00", 100, multiline=True) == "a\nb"
    assert db_text("bad \udce9 byte", 100) == "bad \ufffd byte"
    assert db_text("x" * 50, 10) == "x" * 9 + "…"
    assert db_text(None, 10) is None
    assert db_key("<ok@x>") == "<ok@x>"
    for odd in ("<a\x00b@x>", "<\udce9@x>", "<" + "y" * KEY_MAX + "@x>"):
        hashed = db_key(odd)
        assert hashed.startswith("sha256:") and hashed == db_key(odd)
    assert message_key(b"raw", "  <" + "z" * 5000 + "@x>  ").startswith("sha256:")


def test_a_nul_in_a_header_neither_fails_nor_holds_back_the_fetch(harness: Harness) -> None:
    h = harness
    game = h.new_game((ALICE, BOB), seed="nul")
    h.send(NUL_SUBJECT)
    h.send(discard(h, game))
    h.step()
    rows = {row.message_key: row for row in h.inbound()}
    bad = rows["<nul-subject@evil.example>"]
    assert bad.subject == "helloworld" and bad.status == "ignored"
    assert [row.status for row in rows.values() if row is not bad] == ["applied"]
    assert len(h.log(game)) >= 1


def test_pbem_ingest_takes_a_nul_subject(harness: Harness, db_url: str, tmp_path: Path) -> None:
    env = cli_env(tmp_path / "data", db_url)
    eml = tmp_path / "nul.eml"
    eml.write_bytes(NUL_SUBJECT)
    result = run_cli(env, "ingest", str(eml))
    assert result.exit_code == 0 and result.exception is None, result.output
    assert "inbound 1: ignored" in result.stdout
    listed = run_cli(env, "inbox", "list")
    assert listed.exit_code == 0 and "mallory@evil.example" in listed.stdout


def test_text_written_from_mail_is_cleaned(db_engine: Engine) -> None:
    with Session(db_engine) as session:
        player = get_or_create_player(session, "p@x.test", "Eve\x00\udce9" + "n" * 500, now=START)
        assert player.display_name is not None and "\x00" not in player.display_name
        assert len(player.display_name) == NAME_LIMIT  # a name is cut like any other
        assert "\udce9" not in player.display_name
        bounced = record_bounce(session, "p@x.test", "bounce:\x00 \udcff", now=START)
        assert bounced is not None and bounced.last_bounce_reason == "bounce: \ufffd"
        session.commit()


@pytest.fixture
def poison(db_engine: Engine) -> Iterator[Engine]:
    """A trigger that makes the database refuse any inbound row whose subject is
    'poison': a row that cannot be stored, on either backend."""
    with db_engine.begin() as connection:
        if db_engine.dialect.name == "postgresql":
            connection.execute(
                text(
                    "CREATE FUNCTION refuse_poison() RETURNS trigger AS $$ BEGIN "
                    "IF NEW.subject = 'poison' THEN RAISE EXCEPTION 'poisoned row'; END IF; "
                    "RETURN NEW; END $$ LANGUAGE plpgsql"
                )
            )
            connection.execute(
                text(
                    "CREATE TRIGGER poison BEFORE INSERT ON inbound "
                    "FOR EACH ROW EXECUTE FUNCTION refuse_poison()"
                )
            )
        else:
            connection.execute(
                text(
                    "CREATE TRIGGER poison BEFORE INSERT ON inbound "
                    "WHEN NEW.subject = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"
                )
            )
    yield db_engine
    with db_engine.begin() as connection:
        connection.execute(
            text(
                "DROP TRIGGER poison"
                + (" ON inbound" if db_engine.dialect.name == "postgresql" else "")
            )
        )
        if db_engine.dialect.name == "postgresql":
            connection.execute(text("DROP FUNCTION refuse_poison()"))


def test_a_row_the_database_refuses_is_quarantined_and_the_others_stored(
    poison: Engine,
) -> None:
    messages = [
        (b"Subject: fine\r\n\r\none", "maildir", "<one@x>", "a@x.test", "fine"),
        (b"Subject: poison\r\n\r\ntwo", "maildir", "<two@x>", "b@x.test", "poison"),
        (b"Subject: fine\r\n\r\nthree", "maildir", "<three@x>", "c@x.test", "fine too"),
        (b"Subject: fine\r\n\r\none", "maildir", "<one@x>", "a@x.test", "fine"),
    ]
    with Session(poison) as session:
        stored = insert_inbound_many(session, messages, now=START)
        session.commit()
    assert [created for _, created in stored] == [True, True, True, False]
    assert stored[0][0] == stored[3][0]
    with Session(poison) as session:
        rows = [session.get(m.Inbound, inbound_id) for inbound_id, _ in stored[:3]]
        assert [row.status if row else None for row in rows] == ["pending", "failed", "pending"]
        bad = rows[1]
        assert bad is not None
        assert bad.raw == messages[1][0] and bad.processed_at is not None
        assert bad.message_key == message_key(messages[1][0])
        assert "quarantined" in (bad.reason or "") and "poisoned row" in (bad.reason or "")


def test_the_daemon_quarantines_a_refused_mail_and_applies_the_rest(
    poison: Engine, harness: Harness, db_url: str, tmp_path: Path
) -> None:
    h = harness
    game = h.new_game((ALICE, BOB), seed="poison")
    h.send(b"From: Mallory <mallory@evil.example>\r\nSubject: poison\r\n\r\nboom\r\n")
    h.send(discard(h, game))
    h.step()  # does not raise
    statuses = sorted((row.status, (row.reason or "")[:11]) for row in h.inbound())
    assert statuses == [("applied", "applied: di"), ("failed", "quarantined")]
    assert len(h.log(game)) >= 1
    files = list(h.inbox_dir.glob("*/*"))  # both acknowledged (seen, not fetched again)
    assert len(files) == 2 and all(f.name.endswith(":2,S") for f in files), files
    listed = run_cli(cli_env(tmp_path / "cli", db_url), "inbox", "list", "--status", "failed")
    assert listed.exit_code == 0 and "quarantined" in listed.stdout, listed.output
