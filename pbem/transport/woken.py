"""woken: the inbox the LMTP listener fills — woken, never fetched from.

Fed over LMTP, the mail server hands each message to the listener
(`pbem.listen.lmtp`), which stores it and commits before it answers 250; the loop's inbox
then only needs waking. `LmtpInbound` is that inbox as the loop sees it: a pipe the
listener writes a byte to, and nothing to fetch.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence

from pbem.transport.base import InboundMessage
from pbem.transport.readable import readable
from pbem.transport.urls import LmtpConfig


class LmtpInbound:
    """The inbox of a daemon fed over LMTP (``inbound_url = "lmtp://127.0.0.1:8024"`` or
    ``lmtp:/run/pbem/lmtp.sock``): an inbox that is never read, only woken.

    The mail server hands each message to the service's LMTP listener
    (:mod:`pbem.listen.lmtp`, the one module of the LMTP protocol), which stores it raw
    and commits before it answers 250. So there is nothing to fetch and nothing to
    acknowledge: this only carries the listener's "a message was stored" to the loop's
    wait, through a pipe (safe from any thread). ``wait`` ends when the listener calls
    :meth:`stored`; ``fetch`` is always empty (the listener stored the messages).

    Every worker takes the mail its own listener is given (``listens``): no worker is
    the one reader of a shared inbox, as with IMAP.
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

    def stored(self) -> None:
        """A message was stored and committed: the loop's wait ends (safe from any thread,
        and harmless after :meth:`close`)."""
        if self._closed:
            return
        with contextlib.suppress(BlockingIOError, OSError):  # full: a wake-up waits already
            os.write(self._write, b"!")

    def fetch(self) -> list[InboundMessage]:
        """Nothing: every message came through the listener, stored already."""
        self._drain()
        return []

    def ack(self, key: str) -> None:
        """Nothing to acknowledge: the listener's 250 was the acknowledgement."""

    def wait(self, timeout: float, wake: Sequence[int] = ()) -> bool:
        """Until the listener stored a message (True), one of ``wake`` is readable or
        ``timeout`` passes (False)."""
        ready = readable([self._read, *wake], timeout)
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
