"""IMAP in against the real Dovecot, mail put there through the real Postfix."""

from __future__ import annotations

import imaplib
import logging
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from imapclient import IMAPClient

from pbem.transport import imap as imap_module
from pbem.transport.base import InboundMessage, InboundSource, MemoryCursorStore, TransportError
from pbem.transport.imap import ImapInbound
from pbem.transport.opening import open_inbound
from tests.fixtures.mailstack import (
    MailStack,
    message_flags,
    read_messages,
    send_raw,
    wait_for_messages,
)


def _raw(subject: str, body: str = "play 5h\r\n") -> bytes:
    return (
        f"From: Player <player@example.com>\r\nTo: game@pbem.test\r\nSubject: {subject}\r\n"
        f"Message-ID: <{subject.replace(' ', '-')}.{time.monotonic_ns()}@example.com>\r\n"
        "\r\n" + body
    ).encode()


def _source(
    stack: MailStack,
    user: str,
    password: str,
    store: MemoryCursorStore | None = None,
    folder: str = "INBOX",
    **params: object,
) -> ImapInbound:
    source = open_inbound(
        stack.imap_url(user, password, folder, **params),
        cursor_store=store if store is not None else MemoryCursorStore(),
    )
    assert isinstance(source, ImapInbound)
    return source


def _deliver(stack: MailStack, user: str, subject: str, body: str = "play 5h\r\n") -> None:
    assert send_raw(stack, "player@example.com", [user], _raw(subject, body)) == {}


def _append(
    stack: MailStack,
    user: str,
    password: str,
    subject: str,
    *,
    folder: str = "INBOX",
    seen: bool = False,
) -> None:
    with IMAPClient(stack.imap_host, stack.imap_port, ssl=False, timeout=30) as client:
        client.login(user, password)
        client.append(folder, _raw(subject), flags=[b"\\Seen"] if seen else [])


def _subjects(messages: list[InboundMessage]) -> list[str]:
    out = []
    for message in messages:
        for line in message.raw.split(b"\r\n"):
            if line.startswith(b"Subject: "):
                out.append(line[9:].decode())
    return out


def _fetch_until(source: InboundSource, count: int, timeout: float = 15) -> list[InboundMessage]:
    deadline = time.monotonic() + timeout
    messages = source.fetch()
    while len(messages) < count and time.monotonic() < deadline:
        time.sleep(0.05)
        messages = source.fetch()
    assert len(messages) >= count, f"{len(messages)} messages, wanted {count}"
    return messages


@pytest.fixture
def account(mailstack: MailStack) -> tuple[str, str]:
    return mailstack.new_user("imap")


@pytest.fixture
def closing() -> Iterator[list[ImapInbound]]:
    sources: list[ImapInbound] = []
    yield sources
    for source in sources:
        source.close()


def test_fetch_peeks_and_ack_marks_seen(
    mailstack: MailStack, account: tuple[str, str], closing: list[ImapInbound]
) -> None:
    user, password = account
    store = MemoryCursorStore()
    source = _source(mailstack, user, password, store)
    closing.append(source)
    assert isinstance(source, InboundSource)
    assert source.fetch() == []
    _deliver(mailstack, user, "first move")
    wait_for_messages(mailstack, user, password, 1)  # two at once may arrive in any order
    _deliver(mailstack, user, "second move")
    wait_for_messages(mailstack, user, password, 2)

    first = source.fetch()
    assert _subjects(first) == ["first move", "second move"]
    assert all(not m.oversize and m.size == len(m.raw) for m in first)
    assert b"play 5h" in first[0].raw
    assert message_flags(mailstack, user, password) == [set(), set()]  # PEEK: still unseen
    assert [m.key for m in source.fetch()] == [m.key for m in first]  # not acked: again

    source.ack(first[0].key)
    assert message_flags(mailstack, user, password) == [{"\\Seen"}, set()]
    assert _subjects(source.fetch()) == ["second move"]
    source.ack(first[1].key)
    source.ack(first[1].key)  # twice is harmless
    assert source.fetch() == []
    assert store.load(source.mailbox_name) == (source.uidvalidity, 2)


def test_first_read_skips_seen_history_but_not_unseen_mail(
    mailstack: MailStack, account: tuple[str, str], closing: list[ImapInbound]
) -> None:
    user, password = account
    _append(mailstack, user, password, "old and read", seen=True)
    _append(mailstack, user, password, "old but unread")
    source = _source(mailstack, user, password)
    closing.append(source)
    assert _subjects(source.fetch()) == ["old but unread"]


def test_seen_mail_above_the_cursor_is_fetched(
    mailstack: MailStack, account: tuple[str, str], closing: list[ImapInbound]
) -> None:
    user, password = account
    store = MemoryCursorStore()
    source = _source(mailstack, user, password, store)
    closing.append(source)
    assert source.fetch() == []
    # Someone opened it in a mail client before the service saw it.
    _append(mailstack, user, password, "read by a person", seen=True)
    [message] = source.fetch()
    source.ack(message.key)
    assert source.fetch() == []
    # A new process with the same cursor store does not see it again.
    again = _source(mailstack, user, password, store)
    closing.append(again)
    assert again.fetch() == []
    _append(mailstack, user, password, "read too", seen=True)
    assert _subjects(again.fetch()) == ["read too"]


def test_unacked_mail_comes_back_after_a_crash(
    mailstack: MailStack, account: tuple[str, str], closing: list[ImapInbound]
) -> None:
    user, password = account
    store = MemoryCursorStore()
    source = _source(mailstack, user, password, store)
    closing.append(source)
    source.fetch()
    _deliver(mailstack, user, "in flight")
    wait_for_messages(mailstack, user, password, 1)
    _deliver(mailstack, user, "done")
    first, second = _fetch_until(source, 2)
    source.ack(second.key)  # the first one is still being processed when we "crash"
    assert store.load(source.mailbox_name) == (source.uidvalidity, 0)
    source.close()
    restarted = _source(mailstack, user, password, store)
    closing.append(restarted)
    keys = [m.key for m in restarted.fetch()]
    # The unacknowledged one comes back. The acknowledged one above it may too (it is
    # seen, but above the cursor, like mail a person opened): the caller deduplicates.
    assert keys[0] == first.key
    assert set(keys) <= {first.key, second.key}


def test_batch_caps_one_fetch(
    mailstack: MailStack, account: tuple[str, str], closing: list[ImapInbound]
) -> None:
    user, password = account
    source = _source(mailstack, user, password, batch=2)
    closing.append(source)
    for n in range(3):
        _append(mailstack, user, password, f"m{n}")
    batch = source.fetch()
    assert _subjects(batch) == ["m0", "m1"]
    for message in batch:
        source.ack(message.key)
    assert _subjects(source.fetch()) == ["m2"]


def test_processed_folder_move(
    mailstack: MailStack, account: tuple[str, str], closing: list[ImapInbound]
) -> None:
    user, password = account
    source = _source(mailstack, user, password, processed="Processed Moves")
    closing.append(source)
    source.fetch()  # connects and creates the folder
    _deliver(mailstack, user, "to be filed")
    [message] = _fetch_until(source, 1)
    source.ack(message.key)
    assert read_messages(mailstack, user, password) == []
    [filed] = read_messages(mailstack, user, password, "Processed Moves")
    assert b"Subject: to be filed" in filed
    assert message_flags(mailstack, user, password, "Processed Moves") == [{"\\Seen"}]
    assert source.fetch() == []


def test_oversize_message_comes_as_header_only(
    mailstack: MailStack, account: tuple[str, str], closing: list[ImapInbound]
) -> None:
    user, password = account
    source = _source(mailstack, user, password, max_size=2000)
    closing.append(source)
    source.fetch()
    _deliver(mailstack, user, "small")
    wait_for_messages(mailstack, user, password, 1)
    _deliver(mailstack, user, "huge", body=("y" * 78 + "\r\n") * 100)
    small, huge = _fetch_until(source, 2)
    assert not small.oversize
    assert huge.oversize
    assert huge.size is not None and huge.size > 8000
    assert b"Subject: huge" in huge.raw
    assert huge.raw.endswith(b"\r\n\r\n")
    assert b"yyyy" not in huge.raw
    assert message_flags(mailstack, user, password) == [set(), set()]
    source.ack(huge.key)
    assert [m.key for m in source.fetch()] == [small.key]


def test_uidvalidity_change_rescans_unseen(
    mailstack: MailStack,
    account: tuple[str, str],
    closing: list[ImapInbound],
    caplog: pytest.LogCaptureFixture,
) -> None:
    user, password = account
    folder = "Games"
    with IMAPClient(mailstack.imap_host, mailstack.imap_port, ssl=False) as admin:
        admin.login(user, password)
        admin.create_folder(folder)
    for n in range(3):
        _append(mailstack, user, password, f"old {n}", folder=folder)
    store = MemoryCursorStore()
    source = _source(mailstack, user, password, store, folder=folder)
    closing.append(source)
    old = source.fetch()
    for message in old:
        source.ack(message.key)
    old_validity = source.uidvalidity
    assert store.load(source.mailbox_name) == (old_validity, 3)

    # The folder is recreated: UIDs start again at 1, below the saved cursor.
    with IMAPClient(mailstack.imap_host, mailstack.imap_port, ssl=False) as admin:
        admin.login(user, password)
        admin.delete_folder(folder)
        admin.create_folder(folder)
    _append(mailstack, user, password, "new unread", folder=folder)
    _append(mailstack, user, password, "new but read", folder=folder, seen=True)
    source.close()

    with caplog.at_level(logging.WARNING, logger="pbem.transport.imap"):
        fresh = _source(mailstack, user, password, store, folder=folder)
        closing.append(fresh)
        messages = fresh.fetch()
    assert _subjects(messages) == ["new unread"]
    assert fresh.uidvalidity != old_validity
    assert "UIDVALIDITY changed" in caplog.text
    fresh.ack(old[0].key)  # a key from before the change: ignored
    assert message_flags(mailstack, user, password, folder) == [set(), {"\\Seen"}]
    fresh.ack(messages[0].key)
    assert fresh.fetch() == []


def test_uidvalidity_change_under_a_live_connection(
    mailstack: MailStack, account: tuple[str, str], closing: list[ImapInbound]
) -> None:
    user, password = account
    folder = "Live"
    with IMAPClient(mailstack.imap_host, mailstack.imap_port, ssl=False) as admin:
        admin.login(user, password)
        admin.create_folder(folder)
    _append(mailstack, user, password, "before", folder=folder)
    source = _source(mailstack, user, password, folder=folder)
    closing.append(source)
    [before] = source.fetch()
    source.ack(before.key)
    with IMAPClient(mailstack.imap_host, mailstack.imap_port, ssl=False) as admin:
        admin.login(user, password)
        admin.delete_folder(folder)
        admin.create_folder(folder)
    _append(mailstack, user, password, "after", folder=folder)
    messages: list[InboundMessage] = []
    for _ in range(3):  # the server may first end the session of the deleted folder
        try:
            messages = source.fetch()
            break
        except TransportError as exc:
            assert exc.temporary
    assert _subjects(messages) == ["after"]


def test_wait_times_out_without_mail(
    mailstack: MailStack, account: tuple[str, str], closing: list[ImapInbound]
) -> None:
    user, password = account
    source = _source(mailstack, user, password)
    closing.append(source)
    started = time.monotonic()
    assert source.wait(0.6) is False
    assert 0.55 <= time.monotonic() - started < 3


def test_wait_returns_at_once_for_mail_not_yet_fetched(
    mailstack: MailStack, account: tuple[str, str], closing: list[ImapInbound]
) -> None:
    user, password = account
    source = _source(mailstack, user, password)
    closing.append(source)
    source.fetch()
    _append(mailstack, user, password, "already here")
    started = time.monotonic()
    assert source.wait(10) is True
    assert time.monotonic() - started < 1
    source.fetch()
    assert source.wait(0.3) is False  # fetched, not acked: not news


def _wait_in_thread(
    source: ImapInbound, timeout: float
) -> tuple[threading.Thread, dict[str, float]]:
    outcome: dict[str, float] = {}

    def run() -> None:
        outcome["result"] = float(source.wait(timeout))
        outcome["at"] = time.monotonic()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def test_idle_wakes_up_soon_after_delivery(
    mailstack: MailStack, account: tuple[str, str], closing: list[ImapInbound]
) -> None:
    user, password = account
    source = _source(mailstack, user, password)
    closing.append(source)
    source.fetch()
    thread, outcome = _wait_in_thread(source, 20)
    time.sleep(0.5)  # let it enter IDLE
    assert thread.is_alive()
    sent = time.monotonic()
    _deliver(mailstack, user, "wake up")
    thread.join(10)
    assert outcome["result"] == 1.0
    assert outcome["at"] - sent < 1.5, f"woke {outcome['at'] - sent:.2f} s after sending"
    assert _subjects(source.fetch()) == ["wake up"]


def test_wait_polls_without_idle(
    mailstack: MailStack, account: tuple[str, str], closing: list[ImapInbound]
) -> None:
    user, password = account
    source = _source(mailstack, user, password, idle="no", poll=0.2)
    closing.append(source)
    source.fetch()
    thread, outcome = _wait_in_thread(source, 20)
    time.sleep(0.3)
    sent = time.monotonic()
    _append(mailstack, user, password, "polled")
    thread.join(10)
    assert outcome["result"] == 1.0
    assert outcome["at"] - sent < 1.5


def test_idle_is_renewed_before_the_server_drops_it(
    mailstack: MailStack,
    account: tuple[str, str],
    closing: list[ImapInbound],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user, password = account
    monkeypatch.setattr(imap_module, "IDLE_RENEW_SECONDS", 0.3)
    starts: list[float] = []
    real_idle = IMAPClient.idle

    def counting_idle(self: IMAPClient) -> None:
        starts.append(time.monotonic())
        real_idle(self)

    monkeypatch.setattr(IMAPClient, "idle", counting_idle)
    source = _source(mailstack, user, password)
    closing.append(source)
    assert source.wait(1.2) is False
    assert len(starts) >= 3
    _append(mailstack, user, password, "still listening")
    assert source.wait(5) is True


@pytest.mark.serial  # restarts or stops a server of the shared stack
def test_dovecot_restart_during_wait_then_fetch_works(
    mailstack: MailStack, account: tuple[str, str], closing: list[ImapInbound]
) -> None:
    user, password = account
    source = _source(mailstack, user, password)
    closing.append(source)
    source.fetch()
    thread, outcome = _wait_in_thread(source, 60)
    time.sleep(0.5)
    mailstack.restart("dovecot")
    thread.join(30)
    assert not thread.is_alive()
    assert outcome["result"] == 1.0  # back again: mail may have come meanwhile
    _deliver(mailstack, user, "after the restart")
    assert _subjects(_fetch_until(source, 1)) == ["after the restart"]
    assert source.connected


@pytest.mark.serial  # restarts or stops a server of the shared stack
def test_dovecot_restart_between_calls(
    mailstack: MailStack, account: tuple[str, str], closing: list[ImapInbound]
) -> None:
    user, password = account
    source = _source(mailstack, user, password)
    closing.append(source)
    source.fetch()
    mailstack.restart("dovecot")
    _deliver(mailstack, user, "while away")
    [message] = _fetch_until(source, 1)
    source.ack(message.key)
    assert message_flags(mailstack, user, password) == [{"\\Seen"}]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_server(caplog: pytest.LogCaptureFixture) -> None:
    port = _free_port()
    source = open_inbound(f"imap://u:Pw-Secret-91@127.0.0.1:{port}/INBOX?tls=none&timeout=2")
    with pytest.raises(TransportError) as info:
        source.fetch()
    assert info.value.temporary
    started = time.monotonic()
    with caplog.at_level(logging.DEBUG):
        assert source.wait(0.8) is False  # retries with backoff, never raises
    assert time.monotonic() - started < 3
    source.ack(f"1:{1}")  # logged, not raised
    assert "Pw-Secret-91" not in str(info.value)
    assert "Pw-Secret-91" not in caplog.text
    source.close()


def test_refused_login_is_permanent_and_keeps_the_password_out(
    mailstack: MailStack, account: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    user, _password = account
    source = _source(mailstack, user, "Wrong-Pass-42")
    with caplog.at_level(logging.DEBUG), pytest.raises(TransportError) as info:
        source.fetch()
    assert not info.value.temporary
    assert "login refused" in str(info.value)
    for text in (str(info.value), repr(source), caplog.text):
        assert "Wrong-Pass-42" not in text
    source.close()


def test_password_is_masked_in_repr(mailstack: MailStack, account: tuple[str, str]) -> None:
    user, password = account
    source = _source(mailstack, user, password)
    assert password not in repr(source)
    assert password not in repr(source.config)
    assert password not in str(source.config)
    assert "***" in repr(source)


def test_closed_source_refuses_work(mailstack: MailStack, account: tuple[str, str]) -> None:
    user, password = account
    source = _source(mailstack, user, password)
    source.fetch()
    source.close()
    source.close()
    with pytest.raises(TransportError):
        source.fetch()


def test_bad_key() -> None:
    source = open_inbound("imap://u:p@127.0.0.1:1/?tls=none")
    with pytest.raises(ValueError):
        source.ack("not-a-key")


def test_missing_folder_is_a_permanent_error(
    mailstack: MailStack, account: tuple[str, str]
) -> None:
    user, password = account
    source = _source(mailstack, user, password, folder="No Such Folder")
    with pytest.raises(TransportError) as info:
        source.fetch()
    assert not info.value.temporary
    assert isinstance(info.value.__cause__, imaplib.IMAP4.error)
