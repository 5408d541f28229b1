"""The daemon's batching on the real servers: one IMAP command acknowledges a whole fetch,
and the outbox sends one batch over several SMTP connections at once (the order of one
recipient's mail on its lane is checked in ``test_crash_outbox``)."""

from __future__ import annotations

import email
from pathlib import Path

import pytest
from sqlalchemy import Engine

from pbem.outbox import OutboxSender
from pbem.service import utcnow
from pbem.store.db import session_scope
from pbem.store.outbox import enqueue_outbox
from pbem.transport.base import MemoryCursorStore, open_inbound, open_outbound
from pbem.transport.imap import ImapInbound
from tests.fixtures.mailstack import (
    MailStack,
    message_flags,
    read_messages,
    send_raw,
    wait_for_messages,
)

pytestmark = pytest.mark.mailstack


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
