"""Implicit TLS for IMAP and SMTP, through a TLS front in front of the real servers.

The test stack runs without TLS, so a small TLS-terminating relay (with a throwaway
self-signed certificate) stands in front of Dovecot and Postfix: the transports speak TLS
to it and the real servers answer behind it. STARTTLS cannot be tested this way.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.transport.base import MemoryCursorStore, OutgoingMail, TransportError
from pbem.transport.opening import open_inbound, open_outbound
from tests.fixtures.mailstack import MailStack, send_raw, wait_for_messages


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


class TlsFront:
    """Accepts TLS on a free loopback port and relays the plain bytes to ``target``."""

    def __init__(self, cert: Path, key: Path, target: tuple[str, int]) -> None:
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(cert, key)
        self.target = target
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TlsFront:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(
            asyncio.start_server(self._relay, "127.0.0.1", 0, ssl=self.context)
        )
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self.loop.run_forever()
        server.close()
        # Relays still open when the front stops are cancelled and awaited, so none is
        # left pending when the loop closes (asyncio would log each one at exit).
        pending = asyncio.all_tasks(self.loop)
        for task in pending:
            task.cancel()
        self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self.loop.close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            back_reader, back_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, ssl.SSLError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            with contextlib.suppress(Exception):
                sink.close()

        await asyncio.gather(pipe(reader, back_writer), pipe(back_reader, writer))


@pytest.fixture
def imap_front(mailstack: MailStack, certificate: tuple[Path, Path]) -> Iterator[TlsFront]:
    with TlsFront(*certificate, (mailstack.imap_host, mailstack.imap_port)) as front:
        yield front


@pytest.fixture
def smtp_front(mailstack: MailStack, certificate: tuple[Path, Path]) -> Iterator[TlsFront]:
    with TlsFront(*certificate, (mailstack.smtp_host, mailstack.smtp_port)) as front:
        yield front


def _imap_url(user: str, password: str, port: int, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in {"tls": "implicit", **params}.items())
    return f"imap://{user.replace('@', '%40')}:{password}@127.0.0.1:{port}/INBOX?{query}"


def _raw(subject: str) -> bytes:
    return f"From: p@example.com\r\nSubject: {subject}\r\n\r\nbody\r\n".encode()


def test_imap_implicit_tls_without_verification(mailstack: MailStack, imap_front: TlsFront) -> None:
    user, password = mailstack.new_user("tls")
    source = open_inbound(
        _imap_url(user, password, imap_front.port, verify="no"), cursor_store=MemoryCursorStore()
    )
    try:
        source.fetch()
        send_raw(mailstack, "p@example.com", [user], _raw("over tls"))
        wait_for_messages(mailstack, user, password, 1)
        [message] = source.fetch()
        assert b"Subject: over tls" in message.raw
        source.ack(message.key)
        assert source.fetch() == []
    finally:
        source.close()


def test_imap_implicit_tls_verifies_the_certificate(
    mailstack: MailStack,
    imap_front: TlsFront,
    certificate: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user, password = mailstack.new_user("tlsverify")
    untrusted = open_inbound(_imap_url(user, password, imap_front.port, timeout="5"))
    with pytest.raises(TransportError, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify"):
        untrusted.fetch()
    untrusted.close()
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    trusted = open_inbound(_imap_url(user, password, imap_front.port))
    try:
        assert trusted.fetch() == []
    finally:
        trusted.close()


def test_smtp_implicit_tls(mailstack: MailStack, smtp_front: TlsFront) -> None:
    user, password = mailstack.new_user("smtps")
    sink = open_outbound(f"smtp://127.0.0.1:{smtp_front.port}?tls=implicit&verify=no")
    [result] = asyncio.run(sink.send_batch([OutgoingMail("1", "g@pbem.test", [user], _raw("s"))]))
    assert result.ok, result.error
    wait_for_messages(mailstack, user, password, 1)


def test_smtp_untrusted_certificate_is_a_temporary_failure(
    mailstack: MailStack, smtp_front: TlsFront
) -> None:
    sink = open_outbound(f"smtps://127.0.0.1:{smtp_front.port}?timeout=5")
    [result] = asyncio.run(
        sink.send_batch([OutgoingMail("1", "g@pbem.test", ["x@pbem.test"], _raw("s"))])
    )
    assert (result.ok, result.temporary) == (False, True)
    assert "certificate" in (result.error or "").lower()
