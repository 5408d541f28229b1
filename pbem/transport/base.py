"""What every transport promises: messages in, deliveries out, and the errors in between.

Inbound, a source hands out raw messages and forgets nothing until told::

    source = open_inbound("maildir:/srv/pbem/inbox")
    for message in source.fetch():      # messages not yet acknowledged, oldest first
        store(message.raw)              # ... and commit
        source.ack(message.key)         # only now is the message done
    source.wait(60)                     # until something may have arrived

A crash between fetch and ack means the message comes back from the next fetch: delivery
is at least once, and the caller deduplicates (by Message-ID).

Outbound, a sink delivers a batch and reports one result per recipient::

    sink = open_outbound("smtp://127.0.0.1:25?tls=none")
    results = await sink.send_batch([OutgoingMail(id="7", sender=..., recipients=[...], raw=...)])

An inbox fed over LMTP (`LmtpInbound`) is neither: the listener (:mod:`pbem.listen.lmtp`)
stores each message itself and only wakes the loop through it.

Transports move bytes; they know nothing of games, players or templates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

__all__ = [
    "CursorStore",
    "DeliveryResult",
    "InboundMessage",
    "InboundSource",
    "MemoryCursorStore",
    "OutboundSink",
    "OutgoingMail",
    "TransportConfigError",
    "TransportError",
    "reports_each_result",
]


class TransportConfigError(ValueError):
    """A transport URL or option that cannot work (bad scheme, port, parameter…).

    The message names the offending part; it never contains a password.
    """


class TransportError(Exception):
    """A transport could not do its job now.

    ``temporary`` is True when trying again later may succeed (connection refused or
    lost, timeouts, a server restart) and False when it will not without a change of
    configuration (bad credentials, a missing folder the server refuses to create).
    """

    def __init__(self, message: str, *, temporary: bool) -> None:
        super().__init__(message)
        self.temporary = temporary


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """One message from an inbound source.

    ``key`` identifies it for :meth:`InboundSource.ack`; it is opaque to the caller.

    ``oversize`` is True for a message larger than the source's ``max_size``: then
    ``raw`` holds only its header section (enough for Message-ID, From and Subject, so
    the caller can record it and answer "too large"), and ``size`` is its full size. Such
    a message is acknowledged like any other.
    """

    key: str
    raw: bytes = field(repr=False)
    size: int | None = None
    oversize: bool = False


@runtime_checkable
class InboundSource(Protocol):
    """Where inbound mail comes from: a Maildir folder, an IMAP folder, or the LMTP
    listener's wake-ups.

    Not thread-safe: use one source from one thread.
    """

    def fetch(self) -> list[InboundMessage]:
        """Messages not yet acknowledged, oldest first (a bounded batch).

        A message stays in every fetch until it is acknowledged.

        Raises:
            TransportError: the source cannot be read now (``temporary``) or at all.
        """
        ...

    def ack(self, key: str) -> None:
        """Mark the message done: call only after its processing was committed.

        Acknowledging twice, or a message that is gone, is harmless. A failed
        acknowledgement loses nothing: the message comes back from the next fetch.
        """
        ...

    def wait(self, timeout: float, wake: Sequence[int] = ()) -> bool:
        """Block until something may have arrived (True) or ``timeout`` seconds pass (False).

        Messages already returned by the last fetch do not count as new. The wait also
        ends (False) as soon as one of the ``wake`` file descriptors is readable: the
        caller's other reasons to wake up (it reads them itself).
        """
        ...

    def close(self) -> None:
        """Release connections and files; the source cannot be used afterwards."""
        ...


@dataclass(frozen=True, slots=True)
class OutgoingMail:
    """One message to deliver: the envelope (sender, recipients) and the bytes as sent.

    ``id`` is the caller's stable identity of the message (an outbox row): delivering the
    same id twice to the same Maildir recipient does not make a second copy.
    """

    id: str
    sender: str
    recipients: list[str]
    raw: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class DeliveryResult:
    """What happened to one message for one recipient.

    ``temporary`` tells a failure worth retrying (4xx, connection trouble) from a final
    one (5xx, an impossible address); it is False when ``ok``. ``address_refused`` says
    the server refused the recipient's address itself for good (a 5xx to ``RCPT TO``):
    no bounce will follow, so this is the bounce.
    """

    id: str
    recipient: str
    ok: bool
    temporary: bool = False
    error: str | None = None
    address_refused: bool = False


@runtime_checkable
class OutboundSink(Protocol):
    """Where outbound mail goes: per-recipient Maildir folders or an SMTP server."""

    async def send_batch(self, items: list[OutgoingMail]) -> list[DeliveryResult]:
        """Deliver every item; one result per (item, recipient), in order.

        Trouble with one recipient or one message is reported in its results, never
        raised; the batch as a whole does not raise for delivery problems.

        A sink may also take a keyword ``on_result`` (both shipped sinks do): a callable
        given each result as soon as it is known, before the next message goes out, so
        the caller can record each delivery at once (see :func:`reports_each_result`).
        """
        ...


def reports_each_result(sink: OutboundSink) -> bool:
    """Whether ``sink.send_batch`` takes ``on_result`` (reports each result at once)."""
    import inspect

    try:
        return "on_result" in inspect.signature(sink.send_batch).parameters
    except (TypeError, ValueError):
        return False


class CursorStore(Protocol):
    """Where an IMAP source keeps how far it has read a folder, across restarts."""

    def load(self, mailbox_name: str) -> tuple[int, int] | None:
        """The saved ``(uidvalidity, last_uid)`` of ``mailbox_name``, or None."""
        ...

    def save(self, mailbox_name: str, uidvalidity: int, last_uid: int) -> None:
        """Remember ``(uidvalidity, last_uid)`` for ``mailbox_name``."""
        ...


class MemoryCursorStore:
    """A :class:`CursorStore` in a dict: for tests, and for sources that may forget."""

    def __init__(self) -> None:
        self.cursors: dict[str, tuple[int, int]] = {}

    def load(self, mailbox_name: str) -> tuple[int, int] | None:
        return self.cursors.get(mailbox_name)

    def save(self, mailbox_name: str, uidvalidity: int, last_uid: int) -> None:
        self.cursors[mailbox_name] = (uidvalidity, last_uid)

    def __repr__(self) -> str:
        return f"MemoryCursorStore({self.cursors!r})"


# -- LMTP in, as the loop sees it -------------------------------------------------------
