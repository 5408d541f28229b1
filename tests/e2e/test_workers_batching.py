"""How the daemon batches and shares work: one IMAP command acknowledges a whole fetch
(real Dovecot); the outbox sends one batch over several SMTP connections at once (real
Postfix; the order of one recipient's mail on its lane is checked in
``test_crash_outbox``); a long batch sends the mail of its first moves before the rest
are processed; and a PostgreSQL worker does not spin on messages another worker is
processing."""

from __future__ import annotations

import email
import zlib
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlmodel import Session, select

from pbem.run.runtime import build_daemon
from pbem.run.sender import OutboxSender
from pbem.service import Outcome, utcnow
from pbem.store import models as m
from pbem.store.db import session_scope
from pbem.store.outbox import enqueue_outbox
from pbem.transport.base import DeliveryResult, MemoryCursorStore, OutgoingMail
from pbem.transport.imap import ImapInbound
from pbem.transport.opening import open_inbound, open_outbound
from tests.e2e.helpers import ALICE, Harness, reply
from tests.fixtures.mailstack import (
    MailStack,
    message_flags,
    read_messages,
    send_raw,
    wait_for_messages,
)


class CountingCursors(MemoryCursorStore):
    def __init__(self) -> None:
        super().__init__()
        self.saves = 0

    def save(self, mailbox_name: str, uidvalidity: int, last_uid: int) -> None:
        self.saves += 1
        super().save(mailbox_name, uidvalidity, last_uid)


def _mail(sender: str, to: str, n: int) -> bytes:
    return (
        f"From: <{sender}>\r\nTo: <{to}>\r\nSubject: m{n}\r\n"
        f"Message-ID: <batch-{n}.{to}>\r\n\r\nmessage {n}\r\n"
    ).encode()


@pytest.mark.mailstack
@pytest.mark.parametrize("processed", [None, "Done"])
def test_one_command_acknowledges_a_whole_fetch(
    mailstack: MailStack, processed: str | None
) -> None:
    address, password = mailstack.new_user("ack-many")
    cursors = CountingCursors()
    params = {"processed": processed} if processed else {}
    inbox = open_inbound(mailstack.imap_url(address, password, **params), cursor_store=cursors)
    assert isinstance(inbox, ImapInbound)
    with inbox:
        assert inbox.fetch() == []  # connected: the cursor starts at the end
        saves = cursors.saves
        for n in range(5):
            send_raw(mailstack, f"nobody@{mailstack.domain}", [address], _mail("x@y", address, n))
        fetched: list[str] = []
        for _ in range(50):
            fetched = [m.key for m in inbox.fetch()]  # everything not yet acknowledged
            if len(fetched) == 5:
                break
            inbox.wait(1)
        assert len(fetched) == 5
        inbox.ack_many(fetched)
        assert cursors.saves == saves + 1  # one cursor update for the batch
        assert inbox.fetch() == []
        if processed:
            assert read_messages(mailstack, address, password) == []
            assert len(read_messages(mailstack, address, password, processed)) == 5
        else:
            assert message_flags(mailstack, address, password) == [{"\\Seen"}] * 5
        inbox.ack_many(fetched)  # twice is harmless


@pytest.mark.mailstack
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_batch_over_three_lanes_reaches_everyone_once(
    mailstack: MailStack, tmp_path: Path, db_engine: Engine
) -> None:
    people = [mailstack.new_user(f"lanes-{i}") for i in range(4)]
    service = f"svc@{mailstack.domain}"
    sender = OutboxSender(db_engine, open_outbound(mailstack.smtp_url()), utcnow, lanes=3)
    with session_scope(db_engine) as session:
        for n in range(6):
            for address, _ in people:
                raw = _mail(service, address, n)
                mid = str(email.message_from_bytes(raw)["Message-ID"])
                enqueue_outbox(session, mid, address, service, "t", raw, None, now=utcnow())
    assert sender.drain() == 24
    for address, password in people:
        raws = wait_for_messages(mailstack, address, password, 6)
        ids = [str(email.message_from_bytes(raw)["Message-ID"]) for raw in raws]
        assert sorted(ids) == sorted(f"<batch-{n}.{address}>" for n in range(6))


@pytest.mark.parametrize(
    "db_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
def test_a_worker_does_not_spin_on_messages_another_worker_holds(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="spin")  # h.daemon reads the inbox from now on
    h.send(reply(h.latest(ALICE[0]), ALICE[0], "Alice", "hand"))  # into the inbox Maildir
    for message in h.daemon.inbox.fetch():  # stored by the reader, not yet processed
        h.service.receive(message.raw, "maildir")
    [pending] = h.service.pending_ids()
    worker = build_daemon(h.settings, h.db, clock=h.clock)  # a second worker
    try:
        with Session(h.db) as holder:  # the reader is processing that message right now
            holder.exec(select(m.Inbound).where(m.Inbound.id == pending).with_for_update()).one()
            stats = worker.step()
            assert not worker.is_reader()
            assert stats.processed == 0
            assert not stats.busy  # so its loop waits instead of stepping again at once
        stats = worker.step()
        assert stats.processed == 1 and h.last_inbound().status == "applied"
        assert h.game_row(game).status == "active"
    finally:
        worker._drop_reader()
        worker.sender.close()


def test_a_long_batch_sends_the_mail_of_its_first_moves_early(harness: Harness) -> None:
    h = harness
    for i in range(25):
        h.new_game(seed=f"chunk-{i}")
    for mail in h.received(ALICE[0]):  # one game mail each: 25 replies wait in the inbox
        h.send(reply(mail, ALICE[0], "Alice", "hand"))
    processed: list[int] = []
    process = h.daemon.service.process

    def counting(inbound_id: int) -> Outcome:
        processed.append(inbound_id)
        return process(inbound_id)

    sent_after: list[int] = []
    sink = h.daemon.sender.sink

    class Watching:
        async def send_batch(self, items: list[OutgoingMail]) -> list[DeliveryResult]:
            sent_after.append(len(processed))
            return await sink.send_batch(items)

    h.daemon.service.process = counting  # type: ignore[method-assign]
    h.daemon.sender.sink = Watching()
    stats = h.step()
    assert stats.processed == 25 and stats.sent == 25
    assert sent_after[0] <= 10  # the first replies left before the rest were processed
    assert {r.status for r in h.inbound()} == {"applied"}


@pytest.mark.parametrize(
    "db_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
def test_a_worker_that_lets_go_of_the_inbox_frees_it_at_once(harness: Harness) -> None:
    """A worker closing lets go of the inbox reader's lock itself: the next worker reads
    at its first step, not only once the server's backend of the old connection has
    noticed the socket closed (under load a restarted daemon found nothing to fetch)."""
    h = harness
    h.new_game(seed="hand-over")
    assert h.daemon.is_reader()
    key = zlib.crc32(h.settings.inbound.encode()) & 0x7FFFFFFF
    h.daemon._drop_reader()
    with h.db.connect() as conn:  # at once: the lock is free, not waiting for a backend
        held = conn.execute(
            text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = :k"),
            {"k": key},
        ).scalar()
    assert held == 0
    worker = build_daemon(h.settings, h.db, clock=h.clock)
    try:
        assert worker.is_reader()
    finally:
        worker._drop_reader()
        worker.sender.close()
