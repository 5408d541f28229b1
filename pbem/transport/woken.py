"""woken: the inbox the LMTP listener fills — woken, never fetched from.

Fed over LMTP, the mail server hands each message to the listener
(`pbem.listen.lmtp`), which stores it and commits before it answers 250; the loop's inbox
then only needs waking. `LmtpInbound` is that inbox as the loop sees it: a pipe the
listener writes a byte to, and nothing to fetch.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
from collections.abc import Sequence

from pbem.transport.base import InboundMessage
from pbem.transport.readable import readable
from pbem.transport.urls import LmtpConfig

HANDED_MAX = 10_000
"""The most stored messages' ids kept for the loop; past that it asks the database."""


class LmtpInbound:
    """The inbox of a daemon fed over LMTP (``inbound_url = "lmtp://127.0.0.1:8024"`` or
    ``lmtp:/run/pbem/lmtp.sock``): an inbox that is never read, only woken.

    The mail server hands each message to the service's LMTP listener
    (:mod:`pbem.listen.lmtp`, the one module of the LMTP protocol), which stores it raw
    and commits before it answers 250. So there is nothing to fetch and nothing to
    acknowledge: this only carries the listener's "a message was stored" to the loop's
    wait, through a pipe (safe from any thread), with the stored messages' ids, which the
    loop takes (:meth:`taken`) instead of asking the database what is pending. ``wait``
    ends when the listener calls :meth:`stored`; ``fetch`` is always empty (the listener
    stored the messages).

    Every worker takes the mail its own listener is given (``listens``): no worker is
    the one reader of a shared inbox, as with IMAP. ``worker`` names this inbox among the
    workers' (in the listener's wake-up of the others, `pbem.run.wakeup.inbound_poke`);
    ``waiting`` says whether the loop waits on it now (then nobody else need be woken for
    what its listener stores).
    """

    pushes = True
    """The loop waits for a push (``stored``), and polls nothing."""

    listens = True
    """Each worker listens for its own mail: no reader lock, no fetch."""

    def __init__(self, config: LmtpConfig) -> None:
        self.config = config
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._closed = False
        self.worker = f"{os.getpid()}.{secrets.token_hex(4)}"
        self.waiting = False
        self._ids: list[int] | None = []  # None: more than HANDED_MAX, not kept
        self._ids_lock = threading.Lock()

    def stored(self, ids: Sequence[int] = ()) -> None:
        """Messages were stored and committed (``ids``: their inbound ids): the loop's
        wait ends (safe from any thread, and harmless after :meth:`close`)."""
        if self._closed:
            return
        with self._ids_lock:
            if self._ids is not None and ids:
                self._ids.extend(ids)
            if not ids or (self._ids is not None and len(self._ids) > HANDED_MAX):
                self._ids = None  # not known which: the loop asks the database
        with contextlib.suppress(BlockingIOError, OSError):  # full: a wake-up waits already
            os.write(self._write, b"!")

    def taken(self) -> list[int] | None:
        """The ids of the messages stored since the last call, in order (each once); None
        when they were too many to keep, or stored without them: the database is asked."""
        with self._ids_lock:
            ids, self._ids = self._ids, []
        return ids

    def fetch(self) -> list[InboundMessage]:
        """Nothing: every message came through the listener, stored already."""
        self._drain()
        return []

    def ack(self, key: str) -> None:
        """Nothing to acknowledge: the listener's 250 was the acknowledgement."""

    def wait(self, timeout: float, wake: Sequence[int] = ()) -> bool:
        """Until the listener stored a message (True), one of ``wake`` is readable or
        ``timeout`` passes (False)."""
        self.waiting = True
        try:
            ready = readable([self._read, *wake], timeout)
        finally:
            self.waiting = False
        if self._read in ready:
            self._drain()
            return True
        return False

    def _drain(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            while os.read(self._read, 512):
                pass

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __repr__(self) -> str:
        return f"LmtpInbound({self.config.masked_url()!r})"
