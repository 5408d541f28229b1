"""SMTP out through the real Postfix, read back from the real Dovecot."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import aiosmtplib
import pytest
from aiosmtplib.protocol import PERIOD_REGEX, normalize_message_line_endings
from hypothesis import given
from hypothesis import strategies as st

from pbem.transport.base import DeliveryResult, OutgoingMail
from pbem.transport.opening import open_outbound
from pbem.transport.smtp import NOOP_AFTER, SmtpOutbound
from pbem.transport.smtp_pipeline import can_pipeline, wire_body
from tests.fixtures.mailstack import MailStack, read_messages, wait_for_messages


def _raw(subject: str, body: str = "Your turn: play a card.\r\n", to: str = "p@pbem.test") -> bytes:
    return (
        f"From: Cribbage <game@pbem.test>\r\nTo: {to}\r\nSubject: {subject}\r\n"
        f"Message-ID: <{subject.replace(' ', '.')}@pbem.test>\r\n"
        "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
        "Content-Transfer-Encoding: 8bit\r\n\r\n" + body
    ).encode()


def _send(stack: MailStack, items: list[OutgoingMail], **params: str) -> list[DeliveryResult]:
    sink = open_outbound(stack.smtp_url(**params))
    return asyncio.run(sink.send_batch(items))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts SMTP connections opened (a spy around the real client)."""
    opened: list[int] = []
    real_connect = aiosmtplib.SMTP.connect

    async def counting_connect(self: aiosmtplib.SMTP, *args: object, **kwargs: object) -> object:
        opened.append(1)
        return await real_connect(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(aiosmtplib.SMTP, "connect", counting_connect)
    yield opened


def test_batch_round_trip_over_one_connection(mailstack: MailStack, connections: list[int]) -> None:
    alice, alice_pw = mailstack.new_user("alice")
    bob, bob_pw = mailstack.new_user("bob")
    items = [
        OutgoingMail("1", f"game@{mailstack.domain}", [alice, bob], _raw("hand 1", to=alice)),
        OutgoingMail("2", f"game@{mailstack.domain}", [alice], _raw("hand 2", to=alice)),
        OutgoingMail("3", f"game@{mailstack.domain}", [bob], _raw("hand 3", to=bob)),
    ]
    results = _send(mailstack, items)
    assert [(r.id, r.recipient, r.ok) for r in results] == [
        ("1", alice, True),
        ("1", bob, True),
        ("2", alice, True),
        ("3", bob, True),
    ]
    assert all(r.error is None and not r.temporary for r in results)
    assert len(connections) == 1
    alice_mail = wait_for_messages(mailstack, alice, alice_pw, 2)
    bob_mail = wait_for_messages(mailstack, bob, bob_pw, 2)
    assert sorted(b"hand 1" in m for m in alice_mail) == [False, True]
    assert any(b"Subject: hand 3" in m for m in bob_mail)


def test_bytes_survive_dots_and_eight_bit(mailstack: MailStack) -> None:
    user, password = mailstack.new_user("bytes")
    body = ".a line with a leading dot\r\n..two dots\r\nunicode: 5♥ café\r\n.\r\nend\r\n"
    [result] = _send(mailstack, [OutgoingMail("8", "game@pbem.test", [user], _raw("b", body))])
    assert result.ok, result.error
    [message] = wait_for_messages(mailstack, user, password, 1)
    assert body.encode() in message.replace(b"\n", b"\r\n").replace(b"\r\r\n", b"\r\n")


def test_refused_recipient_does_not_stop_the_others(mailstack: MailStack) -> None:
    user, password = mailstack.new_user("kept")
    unknown = f"nobody-here@{mailstack.domain}"
    deferred = f"tempfail@{mailstack.domain}"
    outside = "someone@example.com"
    item = OutgoingMail("5", "game@pbem.test", [unknown, user, deferred, outside], _raw("mixed"))
    results = {r.recipient: r for r in _send(mailstack, [item])}
    assert results[user].ok
    assert (results[unknown].ok, results[unknown].temporary) == (False, False)
    assert (results[unknown].error or "").startswith("recipient refused: 550")
    assert (results[deferred].ok, results[deferred].temporary) == (False, True)
    assert "450" in (results[deferred].error or "")
    assert (results[outside].ok, results[outside].temporary) == (False, False)
    wait_for_messages(mailstack, user, password, 1)


def test_all_recipients_refused_leaves_the_connection_usable(
    mailstack: MailStack, connections: list[int]
) -> None:
    user, password = mailstack.new_user("after")
    items = [
        OutgoingMail("1", "game@pbem.test", [f"ghost@{mailstack.domain}"], _raw("lost")),
        OutgoingMail("2", "game@pbem.test", [user], _raw("found")),
    ]
    results = _send(mailstack, items)
    assert [(r.id, r.ok) for r in results] == [("1", False), ("2", True)]
    assert len(connections) == 1
    [message] = wait_for_messages(mailstack, user, password, 1)
    assert b"Subject: found" in message


def test_connection_refused_is_temporary_for_every_recipient() -> None:
    sink = open_outbound(f"smtp://127.0.0.1:{_free_port()}?tls=none&timeout=5")
    items = [
        OutgoingMail("1", "game@pbem.test", ["a@pbem.test", "b@pbem.test"], _raw("x")),
        OutgoingMail("2", "game@pbem.test", ["c@pbem.test"], _raw("y")),
    ]
    results = asyncio.run(sink.send_batch(items))
    assert [(r.id, r.recipient) for r in results] == [
        ("1", "a@pbem.test"),
        ("1", "b@pbem.test"),
        ("2", "c@pbem.test"),
    ]
    assert all(not r.ok and r.temporary and r.error for r in results)
    assert "cannot connect" in (results[0].error or "")


def test_empty_batch_sends_nothing(connections: list[int]) -> None:
    sink = open_outbound("smtp://127.0.0.1:1?tls=none")
    assert asyncio.run(sink.send_batch([])) == []
    assert connections == []


def test_auth_with_a_mailbox_login(mailstack: MailStack) -> None:
    user, password = mailstack.new_user("sender")
    url = mailstack.smtp_url(user, password)
    [result] = asyncio.run(
        open_outbound(url).send_batch([OutgoingMail("1", user, [user], _raw("authenticated"))])
    )
    assert result.ok, result.error
    wait_for_messages(mailstack, user, password, 1)


def test_bad_auth_is_a_temporary_failure_without_the_password(mailstack: MailStack) -> None:
    user, _password = mailstack.new_user("badauth")
    url = mailstack.smtp_url(user, "Wrong-Secret-77")
    sink = open_outbound(url)
    [result] = asyncio.run(sink.send_batch([OutgoingMail("1", user, [user], _raw("no"))]))
    assert (result.ok, result.temporary) == (False, True)
    assert "authentication failed" in (result.error or "")
    assert "Wrong-Secret-77" not in (result.error or "")
    assert "Wrong-Secret-77" not in repr(sink)


def test_starttls_required_but_not_offered_fails_temporarily(mailstack: MailStack) -> None:
    results = _send(
        mailstack,
        [OutgoingMail("1", "game@pbem.test", [f"x@{mailstack.domain}"], _raw("tls"))],
        tls="starttls",
    )
    assert [(r.ok, r.temporary) for r in results] == [(False, True)]


def test_tls_none_does_not_upgrade(mailstack: MailStack) -> None:
    sink = open_outbound(mailstack.smtp_url())
    assert isinstance(sink, SmtpOutbound)
    client = sink._client()
    assert client._start_tls_on_connect is False
    assert client.use_tls is False


# ---------------------------------------------------------------- injected faults


class _DroppingServer:
    """A minimal SMTP server that hangs up in the middle of the Nth message.

    Postfix cannot be made to drop a connection mid-transaction on demand, so this one
    fault is injected with a stand-in server.
    """

    def __init__(self, drop_on_message: int, data_reply: bytes = b"250 2.0.0 queued") -> None:
        self.drop_on_message = drop_on_message
        self.data_reply = data_reply
        self.messages = 0
        self.connections = 0
        self.delivered: list[bytes] = []
        self.noops = 0

    def rcpt_reply(self, command: bytes, connection: int) -> bytes:
        """The answer to ``RCPT`` on the ``connection``-th connection (from 1)."""
        return b"250 ok"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        connection = self.connections
        writer.write(b"220 fake ESMTP\r\n")
        try:
            while line := await reader.readline():
                command = line.strip().upper()
                if command.startswith(b"EHLO"):
                    writer.write(b"250-fake\r\n250 8BITMIME\r\n")
                elif command.startswith(b"MAIL"):
                    self.messages += 1
                    if self.messages == self.drop_on_message:
                        writer.close()
                        return
                    writer.write(b"250 ok\r\n")
                elif command.startswith(b"RCPT"):
                    writer.write(self.rcpt_reply(command, connection) + b"\r\n")
                elif command.startswith((b"RSET", b"NOOP")):
                    self.noops += command.startswith(b"NOOP")
                    writer.write(b"250 ok\r\n")
                elif command == b"DATA":
                    writer.write(b"354 go\r\n")
                    await writer.drain()
                    body = b""
                    while (chunk := await reader.readline()) != b".\r\n":
                        body += chunk
                    self.delivered.append(body)
                    writer.write(self.data_reply + b"\r\n")
                elif command == b"QUIT":
                    writer.write(b"221 bye\r\n")
                    await writer.drain()
                    writer.close()
                    return
                else:
                    writer.write(b"502 no\r\n")
                await writer.drain()
        except ConnectionError:
            pass


async def _against(
    server: _DroppingServer | _PipeliningServer, items: list[OutgoingMail]
) -> list[DeliveryResult]:
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        sink = open_outbound(f"smtp://127.0.0.1:{port}?tls=none&timeout=5")
        return await sink.send_batch(items)
    finally:
        listener.close()


def test_a_lost_connection_fails_the_message_in_flight_and_reconnects_once() -> None:
    server = _DroppingServer(drop_on_message=2)
    items = [OutgoingMail(str(n), "g@x.test", [f"p{n}@x.test"], _raw(f"m{n}")) for n in range(4)]
    results = asyncio.run(_against(server, items))
    assert [(r.id, r.ok, r.temporary) for r in results] == [
        ("0", True, False),
        ("1", False, True),
        ("2", True, False),
        ("3", True, False),
    ]
    assert "connection lost" in (results[1].error or "")
    assert server.connections == 2
    assert len(server.delivered) == 3


def test_data_refused_with_5xx_is_permanent() -> None:
    server = _DroppingServer(drop_on_message=0, data_reply=b"554 5.6.0 content refused")
    results = asyncio.run(
        _against(server, [OutgoingMail("1", "g@x.test", ["a@x.test", "b@x.test"], _raw("spam"))])
    )
    assert [(r.ok, r.temporary) for r in results] == [(False, False), (False, False)]
    assert "554" in (results[0].error or "")


class _PipeliningServer:
    """A relay that offers PIPELINING and holds back its replies to ``MAIL`` and ``RCPT``
    until ``DATA`` comes (RFC 2920 lets it): a client that waited for each reply before
    its next command would wait forever. ``split`` sends each held reply in a write of its
    own; otherwise they go out together."""

    def __init__(self, *, split: bool = False, refuse: bytes = b"", mail_reply: bytes = b"250 ok"):
        self.split = split
        self.refuse = refuse  # an address every RCPT of it is refused (upper case)
        self.mail_reply = mail_reply
        self.delivered: list[bytes] = []
        self.commands: list[bytes] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"220 fake ESMTP\r\n")
        held: list[bytes] = []
        accepted = 0
        mail_ok = False
        while line := await reader.readline():
            command = line.strip().upper()
            self.commands.append(command.split(b":")[0])
            if command.startswith(b"EHLO"):
                writer.write(b"250-fake\r\n250-PIPELINING\r\n250 8BITMIME\r\n")
            elif command.startswith(b"MAIL"):
                mail_ok = self.mail_reply.startswith(b"250")
                held.append(self.mail_reply)
            elif command.startswith(b"RCPT"):
                ok = mail_ok and not (self.refuse and self.refuse in command)
                accepted += ok
                held.append(
                    b"250 ok" if ok else b"550 5.1.1 unknown user" if mail_ok else b"503 no"
                )
            elif command == b"DATA":
                held.append(b"354 go" if accepted else b"554 5.5.1 no valid recipients")
                for reply in held if self.split else [b"\r\n".join(held)]:
                    writer.write(reply + b"\r\n")
                    await writer.drain()
                held.clear()
                if accepted:
                    body = b""
                    while (chunk := await reader.readline()) != b".\r\n":
                        body += chunk
                    self.delivered.append(body)
                    writer.write(b"250 2.0.0 queued\r\n")
                accepted = 0
            elif command == b"RSET":
                writer.write(b"250 ok\r\n")
            elif command == b"QUIT":
                writer.write(b"221 bye\r\n")
                await writer.drain()
                writer.close()
                return
            else:
                writer.write(b"502 no\r\n")
            await writer.drain()


@pytest.mark.parametrize("split", [False, True], ids=["one-write", "a-write-each"])
def test_mail_rcpt_and_data_go_out_pipelined(split: bool) -> None:
    server = _PipeliningServer(split=split, refuse=b"BAD@X.TEST")
    items = [
        OutgoingMail("1", "g@x.test", ["a@x.test", "b@x.test"], _raw("one", ".dot\r\n")),
        OutgoingMail("2", "g@x.test", ["bad@x.test", "c@x.test"], _raw("two")),
        OutgoingMail("3", "g@x.test", ["bad@x.test"], _raw("three")),
        OutgoingMail("4", "g@x.test", ["d@x.test"], _raw("four")),
    ]
    results = asyncio.run(_against(server, items))
    assert [(r.id, r.recipient, r.ok, r.address_refused) for r in results] == [
        ("1", "a@x.test", True, False),
        ("1", "b@x.test", True, False),
        ("2", "bad@x.test", False, True),
        ("2", "c@x.test", True, False),
        ("3", "bad@x.test", False, True),
        ("4", "d@x.test", True, False),
    ]
    assert "550 5.1.1" in (results[2].error or "")
    assert len(server.delivered) == 3
    assert b"\r\n..dot\r\n" in server.delivered[0]  # a leading dot is doubled on the wire
    # The third message had no recipient left: DATA refused, then RSET.
    assert server.commands.count(b"RSET") == 1


def test_a_sender_refused_in_a_pipelined_transaction_fails_every_recipient() -> None:
    server = _PipeliningServer(mail_reply=b"451 4.3.0 try later")
    items = [OutgoingMail("1", "g@x.test", ["a@x.test", "b@x.test"], _raw("one"))]
    results = asyncio.run(_against(server, items))
    assert [(r.ok, r.temporary) for r in results] == [(False, True), (False, True)]
    assert "sender refused: 451" in (results[0].error or "")
    assert server.delivered == []


def test_postfix_offers_pipelining_and_the_sink_uses_it(mailstack: MailStack) -> None:
    user, password = mailstack.new_user("piped")

    async def scenario() -> bool:
        sink = open_outbound(mailstack.smtp_url())
        assert isinstance(sink, SmtpOutbound)
        sink.keep_open = True
        try:
            results = await sink.send_batch(
                [OutgoingMail("1", "g@pbem.test", [user], _raw("piped"))]
            )
            assert [r.ok for r in results] == [True]
            [(smtp, _)] = sink._idle
            return can_pipeline(smtp)
        finally:
            await sink.aclose()

    assert asyncio.run(scenario())
    wait_for_messages(mailstack, user, password, 1)


def test_read_messages_helper_does_not_mark_seen(mailstack: MailStack) -> None:
    user, password = mailstack.new_user("peek")
    assert _send(mailstack, [OutgoingMail("1", "g@pbem.test", [user], _raw("peek"))])[0].ok
    wait_for_messages(mailstack, user, password, 1)
    assert len(read_messages(mailstack, user, password)) == 1


# ---------------------------------------------------------------- kept open between batches


class _ClosingServer(_DroppingServer):
    """A relay that hangs up on every idle client when told to (Postfix closes an idle
    session only after its smtpd_timeout, minutes) or stops answering altogether."""

    def __init__(self, refused: dict[int, bytes] | None = None) -> None:
        super().__init__(drop_on_message=0)
        self.writers: list[asyncio.StreamWriter] = []
        self.silent = False
        self.refused = refused or {}  # connection number → the address it refuses

    def rcpt_reply(self, command: bytes, connection: int) -> bytes:
        refused = self.refused.get(connection)
        if refused is not None and refused in command:
            return b"550 5.1.1 unknown user"
        return b"250 ok"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        if self.silent:
            await reader.read()  # the greeting never comes
            return
        await super().handle(reader, writer)

    async def hang_up(self) -> None:
        for writer in self.writers:
            writer.close()
        self.writers.clear()
        await asyncio.sleep(0.05)


def _kept_sink(port: int, timeout: float = 5) -> SmtpOutbound:
    sink = open_outbound(f"smtp://127.0.0.1:{port}?tls=none&timeout={timeout}")
    assert isinstance(sink, SmtpOutbound)
    sink.keep_open = True
    return sink


def _one(n: int) -> list[OutgoingMail]:
    return [OutgoingMail(str(n), "g@x.test", [f"p{n}@x.test"], _raw(f"m{n}"))]


def test_a_connection_used_moments_ago_is_taken_back_without_noop() -> None:
    async def scenario() -> None:
        clock = [0.0]
        server = _ClosingServer()
        listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        sink = _kept_sink(listener.sockets[0].getsockname()[1])
        sink._monotonic = lambda: clock[0]
        try:
            assert [r.ok for r in await sink.send_batch(_one(1))] == [True]
            clock[0] += NOOP_AFTER
            assert [r.ok for r in await sink.send_batch(_one(2))] == [True]
            assert server.noops == 0  # used moments ago: no NOOP
            clock[0] += NOOP_AFTER + 1
            assert [r.ok for r in await sink.send_batch(_one(3))] == [True]
            assert server.noops == 1  # parked a while: NOOP first
            assert (server.connections, sink.opened) == (1, 1)
        finally:
            await sink.aclose()
            listener.close()

    asyncio.run(scenario())


def test_a_connection_the_relay_closed_between_batches_is_replaced_without_a_failure() -> None:
    async def scenario() -> None:
        server = _ClosingServer()
        listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        sink = _kept_sink(listener.sockets[0].getsockname()[1])
        try:
            assert [r.ok for r in await sink.send_batch(_one(1))] == [True]
            assert [r.ok for r in await sink.send_batch(_one(2))] == [True]
            assert (server.connections, sink.opened) == (1, 1)
            await server.hang_up()
            assert [r.ok for r in await sink.send_batch(_one(3))] == [True]
            assert (server.connections, sink.opened, len(server.delivered)) == (2, 2, 3)
        finally:
            await sink.aclose()
            listener.close()

    asyncio.run(scenario())


def test_when_the_new_connection_fails_too_the_batch_fails_temporarily() -> None:
    async def scenario() -> None:
        server = _ClosingServer()
        listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        sink = _kept_sink(listener.sockets[0].getsockname()[1])
        assert [r.ok for r in await sink.send_batch(_one(1))] == [True]
        listener.close()
        await listener.wait_closed()
        await server.hang_up()
        [result] = await sink.send_batch(_one(2))
        assert (result.ok, result.temporary) == (False, True)
        assert "cannot connect" in (result.error or "")
        assert (sink.opened, sink.idle_count()) == (2, 0)

    asyncio.run(scenario())


def test_a_kept_connection_that_stopped_answering_times_out_and_is_replaced() -> None:
    async def scenario() -> None:
        server = _ClosingServer()
        listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        sink = _kept_sink(listener.sockets[0].getsockname()[1], timeout=0.3)
        try:
            assert [r.ok for r in await sink.send_batch(_one(1))] == [True]
            # The relay freezes the parked session (NOOP gets no answer) but accepts anew.
            [frozen] = server.writers
            transport = frozen.transport
            assert isinstance(transport, asyncio.Transport)
            transport.pause_reading()
            assert [r.ok for r in await sink.send_batch(_one(2))] == [True]
            assert (server.connections, sink.opened, len(server.delivered)) == (2, 2, 2)
        finally:
            await sink.aclose()
            listener.close()

    asyncio.run(scenario())


def test_aclose_quits_every_kept_connection() -> None:
    async def scenario() -> None:
        server = _ClosingServer()
        listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        sink = _kept_sink(listener.sockets[0].getsockname()[1])
        try:
            await asyncio.gather(sink.send_batch(_one(1)), sink.send_batch(_one(2)))
            assert sink.idle_count() == 2
            await sink.aclose()
            await asyncio.sleep(0.05)
            assert sink.idle_count() == 0
            assert all(w.is_closing() for w in server.writers)
        finally:
            listener.close()

    asyncio.run(scenario())


def test_a_refusal_for_good_on_a_kept_connection_is_asked_again_on_a_new_one() -> None:
    """The mailbox p2 was added after the kept session began: that session still refuses
    it, a new one accepts it; p3 is refused by every session, so for good."""
    refused = {1: b"P2@X.TEST", 2: b"P3@X.TEST", 3: b"P3@X.TEST"}  # commands upper-cased

    async def scenario() -> None:
        server = _ClosingServer(refused)
        listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        sink = _kept_sink(listener.sockets[0].getsockname()[1])
        try:
            assert [r.ok for r in await sink.send_batch(_one(1))] == [True]
            assert [r.ok for r in await sink.send_batch(_one(2))] == [True]
            assert (sink.opened, len(server.delivered)) == (2, 2)
            [result] = await sink.send_batch(_one(3))
            assert (result.ok, result.temporary, result.address_refused) == (False, False, True)
            assert (sink.opened, len(server.delivered)) == (3, 2)
        finally:
            await sink.aclose()
            listener.close()

    asyncio.run(scenario())


@given(st.lists(st.sampled_from([b"a", b".", b"\r", b"\n", b"\r\n", b"\r\n."]), max_size=20))
def test_the_data_sent_is_aiosmtplibs_rewriting_of_the_message(parts: list[bytes]) -> None:
    """The body of ``DATA`` is what aiosmtplib would send (CRLF line ends, a leading "."
    doubled), checked in C for the service's CRLF mail rather than rewritten."""
    message = b"".join(parts)
    expected = PERIOD_REGEX.sub(b"..", normalize_message_line_endings(message))
    assert wire_body(message) == expected
