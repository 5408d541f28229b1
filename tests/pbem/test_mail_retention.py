"""Stored mail kept only as long as it is needed (`pbem.store.retention`), on both
databases: the daemon and ``pbem db prune`` empty the raw bytes of mail that is done
with — a finished game's once it has been over for ``game_mail_retention_days``, any
other once older than ``mail_retention_days`` — and the games still replay, their deals
still verify, a mail delivered again is still recognised by its Message-ID; mail not
processed, not delivered, waiting for a retry or for a confirmation keeps its bytes;
``pbem db stats`` counts it all."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError
from sqlalchemy import Engine, text
from sqlmodel import Session, col, select

from pbem.config import Settings
from pbem.store import models as m
from pbem.store.rawmail import write_inbound, write_outbox
from pbem.store.retention import Pruned, prune, prune_batch
from tests.e2e.helpers import ALICE, BOB, CAROL, DAVE, Harness, cli_env, reply, run_cli

DAY = timedelta(days=1)


@pytest.fixture
def fair(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(tmp_path, db_url, db_engine, fair_deals=True)
    yield harness
    harness.close()


def raw_of(db: Engine, table: str) -> dict[int, tuple[bytes | None, datetime | None, str]]:
    """Each mail's raw bytes (None: it has no row of bytes), when they were pruned, and
    its status."""
    with db.connect() as connection:
        rows = connection.execute(
            text(
                f"SELECT t.id, r.raw, t.pruned_at, t.status FROM {table} t "
                f"LEFT JOIN {table}_raw r ON r.{table}_id = t.id"
            )
        )
        return {int(r[0]): (None if r[1] is None else bytes(r[1]), r[2], str(r[3])) for r in rows}


def test_pruning_drops_the_bodies_and_every_game_still_checks_out(fair: Harness) -> None:
    h = fair
    svc = h.service
    finished = svc.new_game([ALICE, BOB], target=61)
    h.step()
    h.answer(ALICE[0], "cut 17 purple elephants", message_id="<alice-cut@example.com>")
    h.answer(BOB[0], "cut", message_id="<bob-cut@example.org>")
    h.play_until(finished, lambda g: g.is_over)
    running = h.new_game([CAROL, DAVE], seed="retention-running")
    h.play_until(running, lambda g: len(g.actions) >= 4)
    cut_again = reply(
        h.received(ALICE[0])[0],
        ALICE[0],
        ALICE[1],
        "cut 17 purple elephants",
        message_id="<alice-cut@example.com>",
    )
    with Session(h.db) as session:
        sent = session.exec(
            select(m.Outbox).where(m.Outbox.game_id == finished).order_by(col(m.Outbox.id))
        ).all()
        # A mail that failed for good (to be retried) and one waiting for its retry.
        failed, waiting = sent[0], sent[1]
        failed.status = m.OutboxStatus.FAILED.value
        waiting.status = m.OutboxStatus.PENDING.value
        waiting.next_attempt_at = h.clock.now + timedelta(days=400)
        # A confirmation request still waits on a mail of the game.
        asked = session.exec(select(m.Inbound).where(m.Inbound.game_id == finished)).first()
        assert asked is not None and asked.id is not None
        session.add(
            m.Confirmation(
                token="t-retention",
                address=CAROL[0],
                mailbox=CAROL[0],
                action="start",
                inbound_id=asked.id,
                created_at=h.clock.now,
                expires_at=h.clock.now + timedelta(days=400),
            )
        )
        session.add_all([failed, waiting])
        session.commit()
        kept_out = {failed.id, waiting.id}
        kept_in = {asked.id}
    before_in, before_out = raw_of(h.db, "inbound"), raw_of(h.db, "outbox")
    assert all(raw for raw, pruned, _ in before_in.values()) and all(
        pruned is None for _, pruned, _ in before_out.values()
    )

    # Within a day of the game's end, nothing goes.
    h.clock.advance(timedelta(hours=12))
    h.step()
    assert raw_of(h.db, "inbound") == before_in

    # Past it, the daemon empties the finished game's mail, and no other.
    h.clock.advance(DAY)
    stats = h.step()
    assert stats.pruned > 0
    with Session(h.db) as session:
        game_of_in = dict(session.exec(select(m.Inbound.id, m.Inbound.game_id)).all())
        game_of_out = dict(session.exec(select(m.Outbox.id, m.Outbox.game_id)).all())
    after_in, after_out = raw_of(h.db, "inbound"), raw_of(h.db, "outbox")
    for table, after, game_of, kept in (
        ("inbound", after_in, game_of_in, kept_in),
        ("outbox", after_out, game_of_out, kept_out),
    ):
        for row_id, (raw, pruned, status) in after.items():
            gone = game_of[row_id] == finished and row_id not in kept
            # A pruned mail's bytes are gone with their whole row.
            assert (raw is None and pruned is not None) == gone, (table, row_id, status)
    assert sum(1 for raw, _, _ in after_out.values() if raw is None) >= 10

    # The game replays, its deals verify (the cuts are in cut_mail), by every command.
    audit = svc.audit()
    assert audit.ok and audit.verified_games == 1, audit.problems
    env = cli_env(h.tmp_path / "cli", h.settings.db_url)
    result = run_cli(env, "verify", "--game", str(finished))
    assert result.exit_code == 0 and "deals verified" in result.stdout, result.output
    result = run_cli(env, "game", "replay", str(finished), "--verify")
    assert result.exit_code == 0, result.output
    proof = svc.export(finished)["deal_proof"]
    ids = {c["message_id"] for c in proof["cuts"]}
    assert {"<alice-cut@example.com>", "<bob-cut@example.org>"} <= ids

    # A mail delivered again is still recognised by its Message-ID: stored once.
    inbound_rows = len(after_in)
    h.deliver(cut_again)
    assert len(raw_of(h.db, "inbound")) == inbound_rows

    # A month on, the running game's mail goes too, by age; what waits keeps its bytes.
    h.clock.advance(timedelta(days=31))
    h.step()
    last = raw_of(h.db, "outbox")
    for row_id, (raw, _, status) in last.items():
        assert (raw is None) == (row_id not in kept_out and status in ("sent", "cancelled"))
    assert all(raw_of(h.db, "inbound")[i][0] for i in kept_in)

    # pbem db stats counts it all; pbem db prune finds nothing left to do.
    result = run_cli(env, "db", "stats")
    assert result.exit_code == 0, result.output
    assert re.search(r"outgoing mail \(raw pruned\) +\d+ +0\n", result.stdout)
    assert re.search(r"outgoing mail \(raw kept: not done with\) +2 +[1-9]\d*\n", result.stdout)
    assert re.search(r"\nmail_name +[1-9]\d* +", result.stdout)
    assert "database: " in result.stdout
    result = run_cli(env, "db", "prune")
    assert result.exit_code == 0, result.output
    assert "pruned the raw bytes of 0 received mails (0 bytes) and 0 outgoing" in result.stdout


NOW = datetime(2026, 11, 29, tzinfo=UTC)


def _rows(db: Engine) -> tuple[int, dict[str, int], dict[str, int]]:
    """A game over long ago, and mail of it in every state: (game id, inbound id by
    status, outbox id by status)."""
    old = NOW - timedelta(days=90)
    with Session(db) as session:
        game = m.Game(
            settings={"players": 2},
            seed="s",
            status="finished",
            created_at=old,
            updated_at=old,
            finished_at=old,
            last_move_at=old,
        )
        session.add(game)
        session.flush()
        assert game.id is not None
        inbound: dict[str, m.Inbound] = {}
        for status in ("pending", "applied", "rejected", "ignored", "failed", "confirming"):
            inbound[status] = m.Inbound(
                message_key=f"<{status}@example.com>",
                source="test",
                received_at=old,
                status="applied" if status == "confirming" else status,
                game_id=game.id,
            )
        outbox: dict[str, m.Outbox] = {}
        for status in ("pending", "sending", "failed", "sent", "cancelled"):
            outbox[status] = m.Outbox(
                message_id=f"<out-{status}@pbem.test>",
                game_id=game.id,
                recipient="alice@example.com",
                sender="cribbage@pbem.test",
                kind="turn",
                status=status,
                next_attempt_at=old,
                created_at=old,
            )
        session.add_all([*inbound.values(), *outbox.values()])
        session.flush()
        hello = "Subject: {}\n\nhello\n".format
        write_inbound(
            session.connection(), [(r.id or 0, hello(k).encode()) for k, r in inbound.items()]
        )
        write_outbox(
            session.connection(), [(r.id or 0, hello(k).encode()) for k, r in outbox.items()]
        )
        confirming = inbound["confirming"].id
        assert confirming is not None
        session.add(
            m.Confirmation(
                token="t1",
                address="carol@example.net",
                mailbox="carol@example.net",
                action="start",
                inbound_id=confirming,
                created_at=old,
                expires_at=NOW + DAY,
            )
        )
        session.commit()
        return (
            game.id,
            {k: v.id for k, v in inbound.items() if v.id is not None},
            {k: v.id for k, v in outbox.items() if v.id is not None},
        )


def test_prune_never_touches_mail_that_is_not_done_with(db_engine: Engine) -> None:
    _, inbound, outbox = _rows(db_engine)
    done = prune(db_engine, now=NOW, keep=timedelta(0), keep_after_game=timedelta(0), limit=2)
    assert (done.inbound, done.outbox) == (
        4,
        2,
    )  # applied, rejected, ignored, failed; sent, cancelled
    assert done.batches == 3  # two full batches of received mail, then one with none left
    assert done.inbound_bytes == sum(
        len(f"Subject: {s}\n\nhello\n") for s in ("applied", "rejected", "ignored", "failed")
    )
    rows_in, rows_out = raw_of(db_engine, "inbound"), raw_of(db_engine, "outbox")
    for status, row_id in inbound.items():
        kept = status in ("pending", "confirming")
        assert bool(rows_in[row_id][0]) == kept and (rows_in[row_id][1] is None) == kept, status
    for status, row_id in outbox.items():
        kept = status in ("pending", "sending", "failed")
        assert bool(rows_out[row_id][0]) == kept and (rows_out[row_id][1] is None) == kept, status
    # Done: nothing more, however often it runs; the Message-IDs stay.
    assert prune_batch(
        db_engine, now=NOW, keep=timedelta(0), keep_after_game=timedelta(0)
    ) == Pruned(batches=1)
    with db_engine.connect() as connection:
        keys = set(connection.execute(text("SELECT message_key FROM inbound")).scalars())
    assert "<applied@example.com>" in keys and len(keys) == 6


def test_a_game_not_over_and_recent_mail_keep_their_bytes(db_engine: Engine) -> None:
    game_id, _, _ = _rows(db_engine)
    with db_engine.begin() as connection:
        connection.execute(text("UPDATE game SET status = 'active' WHERE id = :g"), {"g": game_id})
    # 90 days old, kept for 100: nothing goes; the game is not over, so its end counts not.
    keep = timedelta(days=100)
    assert prune(db_engine, now=NOW, keep=keep, keep_after_game=timedelta(0)).rows == 0
    # Kept for 60: the mail is old enough.
    assert prune(db_engine, now=NOW, keep=timedelta(days=60), keep_after_game=keep).rows == 6


def test_a_mail_queued_again_before_it_is_emptied_keeps_its_bytes(db_engine: Engine) -> None:
    """The status is checked again as the row is emptied (``pbem outbox retry`` of a
    cancelled mail cannot happen; one of a sent mail is refused: the row is left sent)."""
    _, _, outbox = _rows(db_engine)
    with db_engine.begin() as connection:
        connection.execute(
            text("UPDATE outbox SET status = 'pending' WHERE id = :i"), {"i": outbox["sent"]}
        )
    prune(db_engine, now=NOW, keep=timedelta(0), keep_after_game=timedelta(0))
    assert raw_of(db_engine, "outbox")[outbox["sent"]][0]


@pytest.mark.parametrize("value", [-1, float("nan"), float("inf"), 40000])
def test_the_retention_settings_are_checked(value: float) -> None:
    for name in ("mail_retention_days", "game_mail_retention_days"):
        with pytest.raises(ValidationError):
            Settings(**{name: value})  # type: ignore[arg-type]


def test_a_bad_retention_setting_is_a_clean_cli_error(tmp_path: Path) -> None:
    env = cli_env(tmp_path, mail_retention_days="-3")
    result = run_cli(env, "db", "prune")
    assert result.exit_code == 1
    assert "mail_retention_days" in result.stderr and "Traceback" not in result.output


def test_the_daemon_works_a_backlog_off_a_little_at_a_time(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    """`Pruner`: two batches a step at most; while more is due, again 5 seconds later,
    not at once; then every 10 minutes."""
    from pbem.run.pruner import CATCH_UP, PRUNE_EVERY, Pruner
    from pbem.service import Service

    _rows(db_engine)  # 4 received and 2 outgoing mails due
    clock = [NOW]
    service = Service(
        Settings(data_dir=tmp_path, database_url=db_url), db_engine, clock=lambda: clock[0]
    )
    pruner = Pruner(service, batch=1)
    assert pruner.step().rows == 4  # 2 batches: 2 received, 2 outgoing
    assert pruner.step().rows == 0  # not again at once
    clock[0] += CATCH_UP
    assert pruner.step().inbound == 2
    clock[0] += CATCH_UP
    assert pruner.step().rows == 0  # nothing left: the next look is 10 minutes on
    assert pruner.due == clock[0] + PRUNE_EVERY
