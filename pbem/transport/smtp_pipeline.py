"""One SMTP transaction with its commands pipelined (RFC 2920) on an aiosmtplib connection.

aiosmtplib sends one command and waits for its reply before the next: ``MAIL``, each
``RCPT`` and ``DATA`` cost a round trip each, and the event loop wakes for every reply.
When the server offers ``PIPELINING`` (Postfix does), :func:`send_pipelined` writes
``MAIL``, every ``RCPT`` and ``DATA`` in one go and reads their replies in order, then
sends the message and reads its reply: two round trips a message.

It works on the client's own protocol object, holding its command lock so that no other
command comes in between, and reads the replies with the client's own parser. The
client parses one reply per packet it receives; when several replies come in one packet
(the server answers a pipelined group at once), the later ones stay in the protocol's
buffer and are taken from there rather than waited for. (A packet arriving while a
parsed reply waits to be picked up would be dropped by the client, but the event loop
runs the task that awaits a reply before it reads the socket again.)
:func:`can_pipeline` says whether both the server and the client allow this.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import aiosmtplib
from aiosmtplib.email import quote_address
from aiosmtplib.protocol import (
    COMMAND_INJECTION_REGEX,
    SMTPProtocol,
    normalize_message_line_endings,
)
from aiosmtplib.response import SMTPResponse

OK = 250
FORWARD = 251
START_INPUT = 354


class SessionGone(aiosmtplib.SMTPServerDisconnected):
    """The connection failed before the server answered the transaction's first
    command: the server took nothing of it (a kept session the server had closed)."""


@dataclass
class Transaction:
    """The server's replies to one pipelined transaction."""

    mail: SMTPResponse
    rcpt: list[SMTPResponse] = field(default_factory=list)
    data: SMTPResponse | None = None  # the reply to DATA (354 to go on)
    end: SMTPResponse | None = None  # the reply to the message (None if it was not sent)

    @property
    def mail_ok(self) -> bool:
        return self.mail.code == OK

    def accepted(self, recipients: Sequence[str]) -> list[str]:
        """The recipients the server took (``RCPT`` answered 250 or 251)."""
        return [r for r, reply in zip(recipients, self.rcpt, strict=True) if _took(reply)]


def _took(reply: SMTPResponse) -> bool:
    return reply.code in (OK, FORWARD)


def wire_body(message: bytes) -> bytes:
    """``message`` as ``DATA`` carries it: every line ending CRLF, the last one too, and
    a line starting with "." given another (RFC 5321 4.5.2): what aiosmtplib sends, with
    no regular expression over every line (the service's own mail is CRLF throughout
    already: it is checked, not rewritten)."""
    crlf = message.count(b"\r\n")
    if crlf != message.count(b"\n") or crlf != message.count(b"\r"):
        message = normalize_message_line_endings(message)
    elif not message.endswith(b"\r\n"):
        message += b"\r\n"
    if message.startswith(b"."):
        message = b"." + message
    return message.replace(b"\n.", b"\n..")


def can_pipeline(smtp: aiosmtplib.SMTP) -> bool:
    """Whether the server offered PIPELINING and the client's protocol can be driven so."""
    protocol = smtp.protocol
    return (
        smtp.supports_extension("pipelining")
        and protocol is not None
        and hasattr(protocol, "_read_response_from_buffer")
        and hasattr(protocol, "_command_lock")
    )


def _command(*parts: bytes) -> bytes:
    for part in parts:
        if COMMAND_INJECTION_REGEX.search(part):
            raise ValueError("an SMTP command argument holds a control character")
    return b" ".join(parts) + b"\r\n"


async def _reply(protocol: SMTPProtocol, timeout: float | None) -> SMTPResponse:
    """The next reply: one already in the buffer, or the next to arrive."""
    buffered: SMTPResponse | None = protocol._read_response_from_buffer()
    if buffered is not None:
        return buffered
    protocol._response_pending = True  # (what execute_command sets before it waits)
    return await protocol.read_response(timeout=timeout)


async def send_pipelined(
    smtp: aiosmtplib.SMTP,
    sender: str,
    recipients: Sequence[str],
    message: bytes,
    *,
    options: Sequence[str] = (),
    encoding: str = "ascii",
) -> Transaction:
    """Send ``message`` from ``sender`` to ``recipients`` in one pipelined transaction.

    Returns every reply; the message itself is sent only if ``MAIL`` and at least one
    ``RCPT`` were accepted and ``DATA`` answered 354 (if ``DATA`` answered 354 though no
    recipient was taken, an empty message ends the transaction, as RFC 2920 asks; its
    reply is the server's refusal). A transaction that did not end in the message's
    acceptance leaves the session to a ``RSET`` by the caller. Raises on a lost or
    silent connection (closing it), as aiosmtplib's own commands do: `SessionGone` if
    that was before the first reply.
    """
    protocol = smtp.protocol
    if protocol is None or protocol._command_lock is None:
        raise aiosmtplib.SMTPServerDisconnected("Server not connected")
    opts = [option.encode("ascii") for option in options]
    commands = [_command(b"MAIL", b"FROM:" + quote_address(sender).encode(encoding), *opts)]
    commands += [_command(b"RCPT", b"TO:" + quote_address(r).encode(encoding)) for r in recipients]
    commands.append(b"DATA\r\n")
    timeout = smtp.timeout
    try:
        async with protocol._command_lock:
            try:
                protocol._response_pending = True
                protocol.write(b"".join(commands))
                done = Transaction(mail=await _reply(protocol, timeout))
            except (aiosmtplib.SMTPServerDisconnected, aiosmtplib.SMTPTimeoutError) as exc:
                raise SessionGone(str(exc)) from exc
            for _ in recipients:
                done.rcpt.append(await _reply(protocol, timeout))
            done.data = await _reply(protocol, timeout)
            if done.data.code != START_INPUT:
                return done
            body = b""
            if done.mail_ok and any(_took(reply) for reply in done.rcpt):
                body = wire_body(message)
            protocol._response_pending = True
            protocol.write(body + b".\r\n")
            done.end = await _reply(protocol, timeout)
            return done
    except (aiosmtplib.SMTPServerDisconnected, aiosmtplib.SMTPTimeoutError):
        # A silent server leaves replies owed: the session cannot be trusted any more.
        smtp.close()
        raise
