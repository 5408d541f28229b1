"""The LMTP listener (RFC 2033) that ``pbem serve`` runs when ``inbound_url`` is
``lmtp://HOST:PORT`` or ``lmtp:/abs/socket``: the mail server hands each message to the
service, which answers only once the message is safely stored. The one module of the
LMTP protocol: the loop's side of it is an inbox that is only woken
(`pbem.transport.woken.LmtpInbound`, made by ``open_inbound``).

What it answers, recipient by recipient:

- ``RCPT TO``: 250 for the service's own addresses (``local_part`` and
  ``local_part+anything`` at ``domain``, any case: `policy.takes_mail_for`), 550 for any
  other, before a byte of the message is read.
- ``MAIL FROM`` with a ``SIZE`` over ``max_message_bytes``, or a message that turns out
  larger at ``DATA``: 552 (at ``DATA`` once for each recipient, as LMTP wants), and
  nothing stored. The mail server then tells the sender.
- after ``DATA``: 250 for each recipient once the raw message is stored and committed in
  the inbound table (deduplicated by Message-ID, exactly as mail read over IMAP); 451 for
  each when the database cannot take it, so the mail server keeps the message and tries
  again later. Nothing is lost, and nothing is stored twice.

The stored message is the mail as received, with the envelope put in front as a mail
server's delivery agent does: ``Return-Path`` (the sender, ``<>`` for a bounce) and one
``Delivered-To`` per recipient (which carries the reply token when the mail was sent to
``local_part+TOKEN@domain`` without naming it in To or Cc). From there it goes the one
way every mail goes — intake, policy, route — when the loop processes it; storing it
wakes the loop at once (`LmtpInbound.stored`) and, on PostgreSQL while that loop is
busy, the other workers (a ``NOTIFY``), so a free one takes it.

The protocol is aiosmtpd's, served by an asyncio loop in a thread of its own. The
messages are stored by one thread beside it (`Store`), which stores all the messages
waiting at once in one transaction (a group commit: under load the mail server delivers
over many connections at once) and answers each connection after that commit; a slow
commit does not stall the loop. On TCP the socket is opened with ``SO_REUSEPORT``, so
several workers may listen on one port and the kernel spreads the connections among
them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import socket
import stat
import threading
from concurrent.futures import Future
from typing import Any

from pbem.listen.lmtp_protocol import protocol_class
from pbem.run.wakeup import inbound_poke, poke
from pbem.service import Service
from pbem.service.policy import may_hand_over, takes_mail_for
from pbem.transport.urls import LmtpConfig
from pbem.transport.woken import LmtpInbound

log = logging.getLogger("pbem.lmtp")

STORE_BATCH = 50
"""The most messages stored in one transaction."""

IDLE_TIMEOUT = 300
"""Seconds a connection may stay silent before it is closed (RFC 5321's 5 minutes)."""

SOURCE = "lmtp"
"""The source the inbound rows of this listener are stored under."""


def with_envelope(raw: bytes, mail_from: str | None, recipients: list[str]) -> bytes:
    """``raw`` with ``Return-Path`` and one ``Delivered-To`` per recipient in front, as a
    delivery agent writes them. The same envelope and mail always give the same bytes,
    so a message the mail server delivers again is recognised even without a
    Message-ID."""
    sender = (mail_from or "").strip()
    if sender.startswith("<") and sender.endswith(">"):
        sender = sender[1:-1]  # the null sender comes as "<>"
    lines = [f"Return-Path: <{sender}>"]
    lines += [f"Delivered-To: {recipient}" for recipient in recipients]
    head = "".join(line + "\r\n" for line in lines)
    return head.encode("utf-8", "surrogateescape") + raw


class Store:
    """The thread that stores the messages the connections took: every message waiting
    when it looks, up to `STORE_BATCH`, in one transaction (`Service.receive_many`,
    deduplicated by Message-ID), then each connection's future is resolved — with
    ``(inbound id, is new)`` after the commit, or with the error when the transaction
    failed, for every message in it. After a commit that stored something new it wakes
    the loop and, on PostgreSQL when the loop is not waiting for mail, the other workers
    (so a free one takes the mail; `pbem.run.wakeup.inbound_poke`)."""

    def __init__(self, service: Service, inbox: LmtpInbound) -> None:
        self.service = service
        self.inbox = inbox
        self._postgres = service.db.dialect.name == "postgresql"
        self._queue: queue.SimpleQueue[tuple[bytes, Future[tuple[int, bool]]] | None] = (
            queue.SimpleQueue()
        )
        self._thread = threading.Thread(target=self._run, name="pbem-lmtp-store", daemon=True)
        self._thread.start()

    def store(self, raw: bytes) -> Future[tuple[int, bool]]:
        """Queue ``raw``; the future holds ``(inbound id, is new)`` once committed."""
        future: Future[tuple[int, bool]] = Future()
        self._queue.put((raw, future))
        return future

    def stop(self) -> None:
        """End the thread after what is queued (those stored, or failed, first)."""
        self._queue.put(None)
        self._thread.join(10)

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            stop = False
            while len(batch) < STORE_BATCH:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                batch.append(item)
            self._store(batch)
            if stop:
                return

    def _store(self, batch: list[tuple[bytes, Future[tuple[int, bool]]]]) -> None:
        try:
            stored = self.service.receive_many([(raw, False) for raw, _ in batch], SOURCE)
        except Exception as exc:
            for _, future in batch:
                future.set_exception(exc)
            return
        if any(created for _, created in stored):
            busy = not self.inbox.waiting  # (read before the loop is woken)
            self.inbox.stored([inbound_id for inbound_id, created in stored if created])
            if self._postgres and busy:
                poke(self.service.db, inbound_poke(self.inbox.worker))
        for (_, future), result in zip(batch, stored, strict=True):
            future.set_result(result)


class LmtpHandler:
    """aiosmtpd's handler: who may be written to, and storing what was written."""

    def __init__(self, service: Service, store: Store) -> None:
        self.service = service
        self.store = store

    async def handle_EHLO(
        self, server: Any, session: Any, envelope: Any, hostname: str, responses: list[str]
    ) -> list[str]:
        """The LHLO answer, with what RFC 2033 asks of every LMTP server: PIPELINING (the
        commands are read in order, however many come at once) and
        ENHANCEDSTATUSCODES."""
        session.host_name = hostname
        last = responses.pop() if responses else "250 HELP"
        return [*responses, "250-PIPELINING", "250-ENHANCEDSTATUSCODES", last]

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        peer = session.peer[0] if isinstance(session.peer, tuple) and session.peer else None
        if not may_hand_over(self.service.settings, peer):
            # A client past the mail server could write its own Authentication-Results.
            log.info("LMTP: refused a mail handed over by %s (not in lmtp_peers)", peer)
            return "550 5.7.1 mail is not taken from this client here"
        if not takes_mail_for(self.service.settings, address):
            log.info("LMTP: refused a mail to %s (not the service's address)", address)
            return f"550 5.1.1 <{address}>: no such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        recipients: list[str] = list(envelope.rcpt_tos)
        raw = with_envelope(bytes(envelope.original_content), envelope.mail_from, recipients)
        try:
            inbound_id, created = await asyncio.wrap_future(self.store.store(raw))
        except Exception as exc:
            log.warning("LMTP: cannot store a message now (%s); answered 451", exc)
            return "\r\n".join(
                f"451 4.3.0 <{r}>: cannot store the message now; try again later"
                for r in recipients
            )
        what = "stored" if created else "stored already"
        log.debug("LMTP: inbound %s %s for %d recipient(s)", inbound_id, what, len(recipients))
        return "\r\n".join(f"250 2.0.0 <{r}> {what} as inbound {inbound_id}" for r in recipients)


class LmtpListener:
    """The LMTP server of one ``pbem serve``: :meth:`start` binds (raising ``OSError`` at
    once when it cannot) and serves in a thread; :meth:`stop` ends it."""

    def __init__(self, service: Service, inbox: LmtpInbound) -> None:
        self.service = service
        self.inbox = inbox
        self.config: LmtpConfig = inbox.config
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._store: Store | None = None

    @property
    def address(self) -> str:
        """Where it listens: ``HOST:PORT`` or the socket's path."""
        if self._sock is not None and self.config.path is None:
            host, port = self._sock.getsockname()[:2]
            return f"{host}:{port}"
        return str(self.config.path) if self.config.path else self.config.masked_url()

    def start(self) -> None:
        """Bind and serve. Raises OSError when the address cannot be bound."""
        self._sock = self._bind()
        settings = self.service.settings
        if settings.trusted_authserv_id and self.config.path is None:
            log.warning(
                "LMTP on TCP with a trusted server (trusted_authserv_id): only %s may hand "
                "mail over (lmtp_peers); a Unix socket in a folder of the mail server's "
                "group is safer",
                ", ".join(settings.lmtp_peers) or "loopback",
            )
        logging.getLogger("mail.log").setLevel(logging.WARNING)  # aiosmtpd's per-command log
        self._thread = threading.Thread(target=self._run, name="pbem-lmtp", daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise OSError(f"the LMTP listener did not start: {self._error}")

    def _bind(self) -> socket.socket:
        if self.config.path is None:
            assert self.config.host is not None
            family = socket.AF_INET6 if ":" in self.config.host else socket.AF_INET
            # IPPROTO_TCP named, not left 0: asyncio turns Nagle's algorithm off only on
            # sockets that say they are TCP, and with it on, each multi-line answer (LHLO)
            # waits for the client's delayed ACK, 40 ms.
            sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
                sock.bind((self.config.host, self.config.port))
                sock.listen(128)
            except OSError:
                sock.close()
                raise
            return sock
        path = self.config.path
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISSOCK(path.lstat().st_mode):
                if _answers(str(path)):
                    raise OSError(f"{path}: another listener answers on this socket")
                path.unlink()  # a dead listener's socket
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(str(path))
            # The mail server runs as a user of its own, in the socket's group: who may
            # reach the socket is decided by its group and the folder the operator names.
            os.chmod(path, 0o660)
            sock.listen(128)
        except OSError:
            sock.close()
            raise
        return sock

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._open())
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _open(self) -> None:
        protocol = protocol_class()
        self._store = Store(self.service, self.inbox)
        handler = LmtpHandler(self.service, self._store)
        settings = self.service.settings

        def factory() -> Any:
            return protocol(
                handler,
                data_size_limit=settings.max_message_bytes,
                enable_SMTPUTF8=True,
                decode_data=False,
                hostname=settings.domain,
                ident="pbem LMTP",
                timeout=IDLE_TIMEOUT,
            )

        loop = asyncio.get_running_loop()
        assert self._sock is not None
        if self.config.path is None:
            self._server = await loop.create_server(factory, sock=self._sock)
        else:
            self._server = await loop.create_unix_server(factory, sock=self._sock)

    def stop(self) -> None:
        """Stop listening, end the connections and the thread; remove a Unix socket."""
        loop, server = self._loop, self._server
        if loop is not None and server is not None and not loop.is_closed():

            async def close() -> None:
                server.close()
                for task in asyncio.all_tasks():
                    if task is not asyncio.current_task():
                        task.cancel()

            with contextlib.suppress(RuntimeError):
                asyncio.run_coroutine_threadsafe(close(), loop).result(10)
                loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        if self._store is not None:
            self._store.stop()
            self._store = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self.config.path is not None:
            with contextlib.suppress(OSError):
                if stat.S_ISSOCK(self.config.path.lstat().st_mode):
                    self.config.path.unlink()


def _answers(path: str) -> bool:
    """Whether something accepts connections on the Unix socket ``path``."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(path)
    except OSError:
        return False
    finally:
        probe.close()
    return True


def start_listener(service: Service, inbox: LmtpInbound) -> LmtpListener:
    """Start the LMTP listener of ``inbox``'s address for ``service``.

    Raises:
        OSError: the address cannot be bound (in use, no permission, no such folder).
    """
    listener = LmtpListener(service, inbox)
    listener.start()
    return listener
