"""SMTP out: one connection per batch, one result per recipient.

A batch opens one connection (plain, STARTTLS or implicit TLS, then AUTH if a user is
given) and runs ``MAIL``/``RCPT``/``DATA`` for each message on it. A recipient refused
while others are accepted gets its own failure; the message still goes to the others.
Replies 4xx and connection trouble are temporary failures, 5xx permanent ones. If the
connection drops mid-batch the message in flight fails temporarily and the rest of the
batch gets one fresh connection.

``send_batch`` can also report each result the moment it is known (``on_result``), before
the next message goes out: a caller that records each delivery at once leaves only the
instant between the server's acceptance and that record in which a crash would make it
send the message again.

When the server offers ``PIPELINING`` a message's ``MAIL``, ``RCPT`` and ``DATA`` go
out together (`pbem.transport.smtp_pipeline`): two round trips a message instead of
three or more.

A sink with ``keep_open`` set (the daemon's) keeps its connections open between
batches: each batch ends with the connection parked instead of ``QUIT``, and the next
batch takes it back, after a ``NOOP`` if it was parked longer than ``NOOP_AFTER``
seconds. A kept connection that fails before the server answered its first command (the
server closed or timed out the session meanwhile: it took nothing) is dropped and the
message sent over a new one; if that fails too, the messages fail temporarily as usual.
A connection parked for ``idle_seconds`` is closed with ``QUIT`` by
:meth:`SmtpOutbound.close_idle`, so the server's session is not held forever, and
:meth:`SmtpOutbound.aclose` closes them all (the daemon stopping).
"""

from __future__ import annotations

import logging
import re
import socket
import ssl
import time
from collections.abc import Callable, Iterable
from dataclasses import replace

import aiosmtplib

from pbem.transport._tls import client_tls_context
from pbem.transport.base import DeliveryResult, OutgoingMail
from pbem.transport.smtp_pipeline import SessionGone, can_pipeline, send_pipelined
from pbem.transport.urls import SmtpConfig

log = logging.getLogger(__name__)

_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    aiosmtplib.SMTPServerDisconnected,
    aiosmtplib.SMTPConnectError,
    aiosmtplib.SMTPTimeoutError,
    ConnectionError,
    TimeoutError,
    OSError,
)
# How long a connection kept open between batches may sit unused before it is closed
# (Postfix's own smtpd_timeout is 300 s).
IDLE_SECONDS = 30.0
# A connection parked longer than this is asked ``NOOP`` before it is used again; one used
# moments ago is used at once (if the server closed it, the first command finds out before
# the server took anything, and the message goes over a new connection).
NOOP_AFTER = 5.0
_HOSTNAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?")


class _BatchFailure(Exception):
    """The connection could not be set up: every message left fails the same way."""

    def __init__(self, error: str, *, temporary: bool) -> None:
        super().__init__(error)
        self.error = error
        self.temporary = temporary


def _is_temporary(code: int) -> bool:
    """4xx and anything that is not a 5xx reply (connection trouble) is worth retrying."""
    return not 500 <= code < 600


def _reply_error(exc: aiosmtplib.SMTPResponseException) -> str:
    return f"{exc.code} {exc.message}".strip()


def _reply_text(reply: aiosmtplib.SMTPResponse) -> str:
    return f"{reply.code} {reply.message}".strip()


def _needs_smtputf8(addresses: Iterable[str]) -> bool:
    return any(not address.isascii() for address in addresses)


def _default_helo() -> str:
    name = socket.gethostname()
    return name if _HOSTNAME.fullmatch(name) else "localhost"


class SmtpOutbound:
    """An :class:`~pbem.transport.base.OutboundSink` sending through one SMTP server.

    ``repr`` masks the password. ``opened`` counts the connections opened so far.
    """

    def __init__(
        self,
        config: SmtpConfig,
        *,
        keep_open: bool = False,
        idle_seconds: float = IDLE_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.keep_open = keep_open
        self.idle_seconds = idle_seconds
        self.opened = 0
        self._monotonic = monotonic
        # Connections parked between batches, each with the moment it was parked.
        self._idle: list[tuple[aiosmtplib.SMTP, float]] = []

    def __repr__(self) -> str:
        return f"SmtpOutbound({self.config.masked_url()!r})"

    async def send_batch(
        self,
        items: list[OutgoingMail],
        *,
        on_result: Callable[[DeliveryResult], None] | None = None,
    ) -> list[DeliveryResult]:
        """Send every item over one connection; one result per (item, recipient), in order.

        ``on_result`` is called with each result as soon as it is known, before the next
        message is sent; an exception it raises ends the batch and propagates.
        """
        results = _Results(on_result)
        smtp: aiosmtplib.SMTP | None = None
        reused = False  # smtp is a connection kept from an earlier batch
        reconnects_left = 1
        finished = False
        untested = False  # smtp is a kept connection that has not answered in this batch
        index = -1
        try:
            while index + 1 < len(items):
                index += 1
                item = items[index]
                if not item.recipients:
                    continue
                if smtp is None:
                    try:
                        smtp = await self._take_idle()
                        reused = untested = smtp is not None
                        smtp = smtp or await self._connect()
                    except _BatchFailure as failure:
                        for rest in items[index:]:
                            results.extend(
                                _failed(
                                    rest,
                                    rest.recipients,
                                    failure.error,
                                    temporary=failure.temporary,
                                )
                            )
                        break
                outcome: dict[str, DeliveryResult] = {}
                try:
                    await self._send_item(smtp, item, outcome)
                    untested = False
                    refused = [r for r in outcome if not (outcome[r].ok or outcome[r].temporary)]
                    if reused and refused:
                        # A session kept open answers from the tables the server had when
                        # it began (Postfix reads a changed table, such as a mailbox added
                        # meanwhile, only between sessions): a refusal for good there
                        # counts only once a new session repeats it.
                        reused = False
                        await _quit(smtp)
                        smtp = None
                        for recipient in refused:
                            del outcome[recipient]
                        try:
                            smtp = await self._connect()
                        except _BatchFailure as failure:
                            outcome.update(
                                (r, DeliveryResult(item.id, r, False, True, failure.error))
                                for r in refused
                            )
                        else:
                            await self._send_item(smtp, replace(item, recipients=refused), outcome)
                except _CONNECTION_ERRORS as exc:
                    if smtp is not None:
                        smtp.close()
                    smtp = None
                    if untested and isinstance(exc, SessionGone):
                        # The server had closed the kept session: it took nothing.
                        log.info("%r: a kept connection is gone (%s); opening a new one", self, exc)
                        untested = False
                        index -= 1  # the same message, over another connection
                        continue
                    error = f"connection lost: {type(exc).__name__}: {exc}"
                    log.warning("%r: %s while sending %s", self, error, item.id)
                    for recipient in item.recipients:
                        outcome.setdefault(
                            recipient,
                            DeliveryResult(
                                item.id, recipient, ok=False, temporary=True, error=error
                            ),
                        )
                    results.extend(outcome[r] for r in item.recipients)
                    if reconnects_left == 0:
                        for rest in items[index + 1 :]:
                            results.extend(_failed(rest, rest.recipients, error, temporary=True))
                        break
                    reconnects_left -= 1
                    continue
                results.extend(outcome[r] for r in item.recipients)
            finished = True
        finally:
            if smtp is not None:
                if self.keep_open and finished:
                    self._idle.append((smtp, self._monotonic()))
                else:
                    await _quit(smtp)
        return results.all

    # ------------------------------------------------------------ kept open

    def idle_count(self) -> int:
        """How many connections are parked between batches."""
        return len(self._idle)

    def seconds_until_idle_close(self) -> float | None:
        """Seconds until the oldest parked connection is due to be closed, or None."""
        if not self._idle:
            return None
        oldest = min(since for _, since in self._idle)
        return max(0.0, oldest + self.idle_seconds - self._monotonic())

    async def close_idle(self) -> int:
        """``QUIT`` every connection parked for ``idle_seconds``; returns how many."""
        now = self._monotonic()
        stale = [smtp for smtp, since in self._idle if now - since >= self.idle_seconds]
        self._idle = [
            (smtp, since) for smtp, since in self._idle if now - since < self.idle_seconds
        ]
        for smtp in stale:
            await _quit(smtp)
        return len(stale)

    async def aclose(self) -> None:
        """``QUIT`` every parked connection (the sender stops)."""
        idle, self._idle = self._idle, []
        for smtp, _ in idle:
            await _quit(smtp)

    async def _take_idle(self) -> aiosmtplib.SMTP | None:
        """A parked connection, or None (closing those parked too long). One parked for
        more than ``NOOP_AFTER`` seconds must answer ``NOOP`` first (those that do not
        are closed)."""
        await self.close_idle()
        while self._idle:
            smtp, since = self._idle.pop()
            if self._monotonic() - since <= NOOP_AFTER and smtp.is_connected:
                return smtp
            try:
                await smtp.noop()
            except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
                log.info("%r: a kept connection is gone (%s); opening a new one", self, exc)
                smtp.close()
                continue
            return smtp
        return None

    # ------------------------------------------------------------ connection

    def _client(self) -> aiosmtplib.SMTP:
        config = self.config
        return aiosmtplib.SMTP(
            hostname=config.host,
            port=config.port,
            username=config.username,
            password=config.password,
            use_tls=config.tls == "implicit",
            # Without an explicit False aiosmtplib upgrades whenever STARTTLS is offered.
            start_tls=config.tls == "starttls",
            tls_context=client_tls_context(config.verify) if config.tls != "none" else None,
            timeout=config.timeout,
            local_hostname=config.helo or _default_helo(),
        )

    async def _connect(self) -> aiosmtplib.SMTP:
        smtp = self._client()
        self.opened += 1
        try:
            await smtp.connect()
            if smtp.is_ehlo_or_helo_needed:  # so the extensions are known for the first message
                try:
                    await smtp.ehlo()
                except aiosmtplib.SMTPHeloError:
                    await smtp.helo()
        except aiosmtplib.SMTPAuthenticationError as exc:
            smtp.close()
            # A configuration problem: retried later rather than dropping the mail.
            raise _BatchFailure(
                f"authentication failed: {_reply_error(exc)}", temporary=True
            ) from exc
        except aiosmtplib.SMTPResponseException as exc:
            smtp.close()
            raise _BatchFailure(
                f"server refused the session: {_reply_error(exc)}",
                temporary=_is_temporary(exc.code),
            ) from exc
        except _CONNECTION_ERRORS as exc:
            smtp.close()
            log.warning("%r: cannot connect: %s", self, exc)
            raise _BatchFailure(
                f"cannot connect to {self.config.host}:{self.config.port}: "
                f"{type(exc).__name__}: {exc}",
                temporary=True,
            ) from exc
        except (aiosmtplib.SMTPException, ssl.SSLError, ValueError) as exc:
            smtp.close()
            raise _BatchFailure(
                f"cannot set up the session: {type(exc).__name__}: {exc}", temporary=True
            ) from exc
        return smtp

    # ------------------------------------------------------------ one message

    async def _send_item(
        self, smtp: aiosmtplib.SMTP, item: OutgoingMail, outcome: dict[str, DeliveryResult]
    ) -> None:
        """Run one transaction, filling ``outcome`` per recipient; raises on a lost link."""
        recipients = list(dict.fromkeys(item.recipients))
        utf8 = _needs_smtputf8([item.sender, *recipients])
        if utf8 and not smtp.supports_extension("smtputf8"):
            for recipient in recipients:
                outcome[recipient] = DeliveryResult(
                    item.id,
                    recipient,
                    ok=False,
                    temporary=False,
                    error="non-ASCII address but the server lacks SMTPUTF8",
                )
            return
        options: list[str] = []
        if smtp.supports_extension("size"):
            options.append(f"SIZE={len(item.raw)}")
        if not item.raw.isascii() and smtp.supports_extension("8bitmime"):
            options.append("BODY=8BITMIME")
        if utf8:
            options.append("SMTPUTF8")
        encoding = "utf-8" if utf8 else "ascii"
        raw = item.raw if item.raw.endswith(b"\n") else item.raw + b"\r\n"
        if can_pipeline(smtp):
            await self._send_pipelined(smtp, item, recipients, raw, options, encoding, outcome)
            return

        try:
            await smtp.mail(item.sender, options=options, encoding=encoding)
        except (aiosmtplib.SMTPServerDisconnected, aiosmtplib.SMTPTimeoutError) as exc:
            raise SessionGone(str(exc)) from exc
        except aiosmtplib.SMTPSenderRefused as exc:
            error = f"sender refused: {_reply_error(exc)}"
            for recipient in recipients:
                outcome[recipient] = DeliveryResult(
                    item.id, recipient, ok=False, temporary=_is_temporary(exc.code), error=error
                )
            await _reset(smtp)
            return

        accepted: list[str] = []
        for recipient in recipients:
            try:
                await smtp.rcpt(recipient, encoding=encoding)
            except aiosmtplib.SMTPRecipientRefused as exc:
                outcome[recipient] = DeliveryResult(
                    item.id,
                    recipient,
                    ok=False,
                    temporary=_is_temporary(exc.code),
                    error=f"recipient refused: {_reply_error(exc)}",
                    address_refused=not _is_temporary(exc.code),
                )
            else:
                accepted.append(recipient)
        if not accepted:
            await _reset(smtp)
            return

        try:
            await smtp.data(raw)
        except aiosmtplib.SMTPDataError as exc:
            for recipient in accepted:
                outcome[recipient] = DeliveryResult(
                    item.id,
                    recipient,
                    ok=False,
                    temporary=_is_temporary(exc.code),
                    error=f"message refused: {_reply_error(exc)}",
                )
            await _reset(smtp)
            return
        for recipient in accepted:
            outcome[recipient] = DeliveryResult(item.id, recipient, ok=True)

    async def _send_pipelined(
        self,
        smtp: aiosmtplib.SMTP,
        item: OutgoingMail,
        recipients: list[str],
        raw: bytes,
        options: list[str],
        encoding: str,
        outcome: dict[str, DeliveryResult],
    ) -> None:
        """`_send_item` with ``MAIL``, ``RCPT`` and ``DATA`` pipelined."""
        done = await send_pipelined(
            smtp, item.sender, recipients, raw, options=options, encoding=encoding
        )
        if not done.mail_ok:
            error = f"sender refused: {_reply_text(done.mail)}"
            temporary = _is_temporary(done.mail.code)
            for recipient in recipients:
                outcome[recipient] = DeliveryResult(item.id, recipient, False, temporary, error)
            await _reset(smtp)
            return
        accepted = done.accepted(recipients)
        for recipient, reply in zip(recipients, done.rcpt, strict=True):
            if recipient not in accepted:
                outcome[recipient] = DeliveryResult(
                    item.id,
                    recipient,
                    ok=False,
                    temporary=_is_temporary(reply.code),
                    error=f"recipient refused: {_reply_text(reply)}",
                    address_refused=not _is_temporary(reply.code),
                )
        if not accepted:
            await _reset(smtp)
            return
        end = done.end or done.data
        assert end is not None
        if end is done.data or end.code != 250:
            for recipient in accepted:
                outcome[recipient] = DeliveryResult(
                    item.id,
                    recipient,
                    ok=False,
                    temporary=_is_temporary(end.code),
                    error=f"message refused: {_reply_text(end)}",
                )
            await _reset(smtp)
            return
        for recipient in accepted:
            outcome[recipient] = DeliveryResult(item.id, recipient, ok=True)


class _Results:
    """The results of a batch so far, each also handed to the caller's callback."""

    def __init__(self, callback: Callable[[DeliveryResult], None] | None) -> None:
        self.all: list[DeliveryResult] = []
        self._callback = callback

    def extend(self, results: Iterable[DeliveryResult]) -> None:
        for result in results:
            self.all.append(result)
            if self._callback is not None:
                self._callback(result)


def _failed(
    item: OutgoingMail, recipients: Iterable[str], error: str, *, temporary: bool
) -> list[DeliveryResult]:
    return [
        DeliveryResult(item.id, recipient, ok=False, temporary=temporary, error=error)
        for recipient in recipients
    ]


async def _reset(smtp: aiosmtplib.SMTP) -> None:
    """End a failed transaction; a refused RSET means the link is no good (raises)."""
    try:
        await smtp.rset()
    except aiosmtplib.SMTPResponseException as exc:
        raise aiosmtplib.SMTPServerDisconnected(f"RSET refused: {_reply_error(exc)}") from exc


async def _quit(smtp: aiosmtplib.SMTP) -> None:
    try:
        await smtp.quit(timeout=5)
    except (aiosmtplib.SMTPException, OSError, TimeoutError):
        smtp.close()
