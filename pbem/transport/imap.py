"""IMAP in: read one folder, mark what is done, wait with IDLE, survive server restarts.

What :meth:`ImapInbound.fetch` returns: the folder's messages that are unseen, plus any
seen ones above the saved cursor (a person may have opened one in a mail client first),
oldest first, at most ``batch`` of them. Bodies are read with ``BODY.PEEK[]``, so fetching
never sets ``\\Seen``: only :meth:`~ImapInbound.ack` does, or moves the message to the
``processed`` folder when one is configured (created if missing).

The cursor ``(UIDVALIDITY, last UID)`` is kept in a :class:`~pbem.transport.base.CursorStore`
under :attr:`ImapConfig.mailbox_name`; it advances over a UID only once that UID and all
below it that were fetched are acknowledged. The first time a folder is read, or when its
UIDVALIDITY changed (the folder was recreated), the cursor restarts at the folder's
current end and every unseen message is fetched again; the caller deduplicates.

A message larger than ``max_size`` comes back with its header section only and
``oversize=True`` (see :class:`~pbem.transport.base.InboundMessage`).

Connections are opened lazily and reopened after a loss. :meth:`~ImapInbound.fetch`
retries once on a fresh connection, then raises a temporary ``TransportError``;
:meth:`~ImapInbound.wait` reconnects with exponential backoff (0.25 s doubling to 30 s)
within its timeout. IDLE is renewed every 25 minutes (servers may drop it after 30);
without IDLE (or with ``idle=no``) ``wait`` polls every ``poll`` seconds.
"""

from __future__ import annotations

import contextlib
import imaplib
import logging
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from imapclient import IMAPClient

from pbem.transport.base import (
    CursorStore,
    InboundMessage,
    MemoryCursorStore,
    TransportError,
)
from pbem.transport.imap_link import (
    LINK_ERRORS,
    WAIT_ERRORS,
    error_text,
    fetch_messages,
    idle_news,
    open_client,
    select_readable,
    shutdown,
    wait_readable,
    waking,
)
from pbem.transport.urls import ImapConfig

log = logging.getLogger(__name__)

T = TypeVar("T")

SEEN = b"\\Seen"
IDLE_RENEW_SECONDS = 25 * 60
BACKOFF_FIRST = 0.25
BACKOFF_MAX = 30.0


class ImapInbound:
    """An :class:`~pbem.transport.base.InboundSource` over one IMAP folder.

    Not thread-safe: one source, one thread. ``sleep`` and ``clock`` are injectable for
    tests. ``repr`` masks the password.
    """

    def __init__(
        self,
        config: ImapConfig,
        cursor_store: CursorStore | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.cursor_store: CursorStore = cursor_store or MemoryCursorStore()
        self._sleep = sleep
        self._clock = clock
        self._client: IMAPClient | None = None
        self._uidvalidity: int | None = None
        self._last_uid = 0  # the saved cursor: every UID up to it is done
        self._high_uid = 0  # the highest UID handed out (or the baseline)
        self._pending: set[int] = set()  # fetched, not yet acknowledged
        self._done: set[int] = set()  # acknowledged, but above the cursor
        self._backoff = 0.0
        self._closed = False
        self._idling_now = False  # inside IDLE: the server awaits DONE, not a command
        self._idle_since = 0.0  # when the current IDLE began (clock)

    def __repr__(self) -> str:
        return f"ImapInbound({self.config.masked_url()!r})"

    def __enter__(self) -> ImapInbound:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def mailbox_name(self) -> str:
        """The cursor's key in the cursor store."""
        return self.config.mailbox_name

    @property
    def connected(self) -> bool:
        return self._client is not None

    @property
    def uidvalidity(self) -> int | None:
        """The folder's UIDVALIDITY as of the last connection."""
        return self._uidvalidity

    # ------------------------------------------------------------ connection

    def connect(self) -> None:
        """Connect, log in and select the folder now (normally done on first use).

        Raises:
            TransportError: temporary for network trouble, permanent for a refused login
                or a folder that cannot be selected.
        """
        self._check_open()
        if self._client is not None:
            return
        client, info = open_client(self.config, repr(self))
        self._client = client
        self._backoff = 0.0
        self._start_cursor(int(info[b"UIDVALIDITY"]), info.get(b"UIDNEXT"))
        log.info(
            "%r: connected (UIDVALIDITY %s, last UID %s)", self, self._uidvalidity, self._last_uid
        )

    def _start_cursor(self, uidvalidity: int, uidnext: int | None) -> None:
        assert self._client is not None
        saved = self.cursor_store.load(self.mailbox_name)
        if saved is not None and saved[0] == uidvalidity:
            if self._uidvalidity != uidvalidity:
                self._pending.clear()
                self._done.clear()
                self._high_uid = 0
            self._uidvalidity = uidvalidity
            self._last_uid = saved[1]
            self._high_uid = max(self._high_uid, self._last_uid)
            return
        if saved is not None:
            log.warning(
                "%r: UIDVALIDITY changed from %s to %s; rescanning unseen messages",
                self,
                saved[0],
                uidvalidity,
            )
        if uidnext is None:
            uids = self._client.search(["ALL"])
            end = max(uids, default=0)
        else:
            end = int(uidnext) - 1
        self._uidvalidity = uidvalidity
        self._last_uid = end
        self._high_uid = end
        self._pending.clear()
        self._done.clear()
        self.cursor_store.save(self.mailbox_name, uidvalidity, end)

    def _drop(self) -> None:
        self._idling_now = False
        client, self._client = self._client, None
        shutdown(client)

    def _run(self, operation: Callable[[IMAPClient], T]) -> T:
        """Run ``operation`` on a live connection, reconnecting and retrying once."""
        self._check_open()
        for attempt in (1, 2):
            self.connect()
            assert self._client is not None
            try:
                self._leave_idle(self._client)
                return operation(self._client)
            except LINK_ERRORS as exc:
                self._drop()
                if attempt == 2:
                    raise TransportError(
                        f"{self!r}: connection lost: {type(exc).__name__}: {error_text(exc)}",
                        temporary=True,
                    ) from exc
                log.info("%r: connection lost (%s); reconnecting", self, error_text(exc))
            except imaplib.IMAP4.error as exc:
                # A refused command leaves the session in doubt: start afresh next time.
                self._drop()
                raise TransportError(
                    f"{self!r}: {type(exc).__name__}: {error_text(exc)}", temporary=True
                ) from exc
        raise AssertionError("unreachable")

    # ------------------------------------------------------------ InboundSource

    def fetch(self) -> list[InboundMessage]:
        """Unseen messages and any above the cursor, oldest first, at most ``batch``.

        Raises:
            TransportError: the server cannot be reached (temporary) or refuses us.
        """
        return self._run(self._fetch)

    def _check_uidvalidity(self, client: IMAPClient) -> bool:
        """Select the folder afresh; True if it was recreated (a new UIDVALIDITY).

        A session is not always told that its selected folder was deleted and created
        anew: it may go on showing the old messages, and even STATUS answers from that
        stale view. A new SELECT sees the folder as it is now, new mail included.
        """
        info = client.select_folder(self.config.folder)
        uidvalidity = int(info[b"UIDVALIDITY"])
        if uidvalidity == self._uidvalidity:
            return False
        self._start_cursor(uidvalidity, info.get(b"UIDNEXT"))
        return True

    def _fetch(self, client: IMAPClient) -> list[InboundMessage]:
        self._check_uidvalidity(client)
        unseen = set(client.search(["UNSEEN", "NOT", "DELETED"]))
        above = {
            uid
            for uid in client.search(["UID", f"{self._last_uid + 1}:*", "NOT", "DELETED"])
            if uid > self._last_uid
        }
        uids = sorted((unseen | above) - self._done)[: self.config.batch]
        if not uids:
            return []
        cap = self.config.max_size
        sizes, bodies, headers = fetch_messages(client, uids, cap)
        messages: list[InboundMessage] = []
        for uid in uids:
            key = f"{self._uidvalidity}:{uid}"
            if uid in bodies:
                messages.append(InboundMessage(key, bodies[uid], size=sizes[uid]))
            elif uid in headers:
                log.warning(
                    "%r: message UID %d is %d bytes, over the cap of %s", self, uid, sizes[uid], cap
                )
                messages.append(InboundMessage(key, headers[uid], size=sizes[uid], oversize=True))
        for message in messages:
            uid = int(message.key.rpartition(":")[2])
            self._pending.add(uid)
            self._high_uid = max(self._high_uid, uid)
        return messages

    def ack(self, key: str) -> None:
        """Set ``\\Seen`` on the message (and move it to ``processed`` when configured).

        A key from before a UIDVALIDITY change is ignored (that message is rescanned as
        unseen and deduplicated by the caller). A temporary failure is logged, not raised:
        the message stays unseen and comes back from the next fetch.

        Raises:
            ValueError: ``key`` is not a key this source hands out.
            TransportError: a permanent failure (say, the login is now refused).
        """
        self.ack_many([key])

    def ack_many(self, keys: Sequence[str]) -> None:
        """:meth:`ack` for several messages at once: one command for all of them (and one
        cursor update), instead of a round trip and a cursor save per message."""
        parsed = [(key, *_parse_key(key)) for key in keys]
        if self._client is not None:
            for key, uidvalidity, _ in parsed:
                if uidvalidity != self._uidvalidity:
                    log.warning("%r: ignoring ack of %s from an older UIDVALIDITY", self, key)
            parsed = [item for item in parsed if item[1] == self._uidvalidity]
        if not parsed:
            return
        uidvalidity = parsed[0][1]
        if any(item[1] != uidvalidity for item in parsed):
            for uidvalidity_group in sorted({item[1] for item in parsed}):
                self.ack_many([key for key, v, _ in parsed if v == uidvalidity_group])
            return
        uids = sorted({uid for _, _, uid in parsed})
        where = ", ".join(key for key, _, _ in parsed)

        def mark(client: IMAPClient) -> bool:
            if uidvalidity != self._uidvalidity:
                return False
            client.add_flags(uids, [SEEN], silent=True)
            if self.config.processed:
                if client.has_capability("MOVE"):
                    client.move(uids, self.config.processed)
                else:
                    client.copy(uids, self.config.processed)
                    client.add_flags(uids, [b"\\Deleted"], silent=True)
                    if client.has_capability("UIDPLUS"):
                        client.uid_expunge(uids)
                    else:
                        client.expunge()
            return True

        try:
            done = self._run(mark)
        except TransportError as exc:
            if not exc.temporary:
                raise
            log.warning("%s; messages %s stay unseen and will be fetched again", exc, where)
            return
        if not done:
            log.warning("%r: ignoring ack of %s from an older UIDVALIDITY", self, where)
            return
        for uid in uids:
            self._pending.discard(uid)
            if uid > self._last_uid:
                self._done.add(uid)
        self._advance_cursor()

    def _advance_cursor(self) -> None:
        waiting = [uid for uid in self._pending if uid > self._last_uid]
        candidate = min(waiting) - 1 if waiting else self._high_uid
        if candidate > self._last_uid and self._uidvalidity is not None:
            self._last_uid = candidate
            self.cursor_store.save(self.mailbox_name, self._uidvalidity, candidate)
            self._done = {uid for uid in self._done if uid > candidate}

    def wait(self, timeout: float, wake: Sequence[int] = ()) -> bool:
        """Block until mail may have arrived (True), ``timeout`` seconds pass or one of the
        ``wake`` descriptors is readable (False).

        Uses IDLE when the server has it, else polls every ``poll`` seconds. IDLE goes on
        after the wait ends: the next wait carries on in it, without a command, and only
        a command (a fetch, an ack) or its renewal every 25 minutes ends it. After a lost
        connection it reconnects with exponential backoff and returns True once back (mail
        may have arrived meanwhile). Never raises for connection trouble.
        """
        self._check_open()
        deadline = self._clock() + max(0.0, timeout)
        while True:
            if self._client is None and not self._reconnect(deadline):
                return False
            try:
                return self._wait_connected(deadline, wake)
            except WAIT_ERRORS as exc:
                log.info(
                    "%r: connection lost while waiting (%s); reconnecting", self, error_text(exc)
                )
                self._drop()
                return self._reconnect(deadline)
            except imaplib.IMAP4.error as exc:
                log.warning("%r: error while waiting (%s); reconnecting", self, error_text(exc))
                self._drop()
                remaining = deadline - self._clock()
                if remaining <= 0:
                    return False
                self._sleep(min(self.config.poll, remaining))

    @property
    def pushes(self) -> bool:
        """Whether new mail is pushed (IDLE) rather than polled for; known once connected."""
        client = self._client
        return bool(client is not None and self.config.idle and client.has_capability("IDLE"))

    def _reconnect(self, deadline: float) -> bool:
        """Connect, retrying with exponential backoff until ``deadline``."""
        while True:
            try:
                self.connect()
                return True
            except TransportError as exc:
                self._backoff = (
                    BACKOFF_FIRST if self._backoff == 0 else min(self._backoff * 2, BACKOFF_MAX)
                )
                remaining = deadline - self._clock()
                log.warning("%r: %s; next try in %.2f s", self, exc, self._backoff)
                if remaining <= 0:
                    return False
                self._sleep(min(self._backoff, remaining))
                if self._clock() >= deadline:
                    # One last attempt at the deadline, then give up for this wait.
                    with contextlib.suppress(TransportError):
                        self.connect()
                        return True
                    return False

    def _has_new(self, client: IMAPClient) -> bool:
        if self._check_uidvalidity(client):
            return True
        found = client.search(["UID", f"{self._high_uid + 1}:*", "NOT", "DELETED"])
        return any(uid > self._high_uid for uid in found)

    def _wait_connected(self, deadline: float, wake: Sequence[int]) -> bool:
        client = self._client
        assert client is not None
        if not self.pushes:
            if self._has_new(client):
                return True
            while True:
                remaining = deadline - self._clock()
                if remaining <= 0:
                    return False
                if wait_readable(wake, min(self.config.poll, remaining), self._sleep):
                    return False
                if self._has_new(client):
                    return True
        if not self._idling_now:
            # Mail may have come since the last fetch, before IDLE: look once.
            if self._has_new(client):
                return True
            self._enter_idle(client)
        while True:
            remaining = deadline - self._clock()
            if remaining <= 0:
                return False  # still in IDLE: the next wait carries on
            renew_in = self._idle_since + IDLE_RENEW_SECONDS - self._clock()
            if renew_in <= 0:
                if self._leave_idle(client):
                    return True
                self._enter_idle(client)
                continue
            ready = select_readable([client.socket(), *wake], min(remaining, renew_in))
            if any(fd is not client.socket() for fd in ready):
                return False
            if ready and idle_news(client):
                return True

    def _enter_idle(self, client: IMAPClient) -> None:
        self._idling_now = True  # first: a signal may come before idle() returns
        client.idle()
        self._idle_since = self._clock()

    def _leave_idle(self, client: IMAPClient) -> bool:
        """End IDLE if in it (DONE); True if the server reported news meanwhile."""
        if not self._idling_now:
            return False
        _, responses = client.idle_done()
        self._idling_now = False
        return any(waking(response) for response in responses)

    def close(self) -> None:
        """Log out and forget the connection; the source cannot be used afterwards."""
        if self._closed:
            return
        self._closed = True
        client, self._client = self._client, None
        if client is not None and self._idling_now:
            # Left inside IDLE (a signal ended the wait): the server would not answer a
            # LOGOUT before DONE, and the logout would wait out its timeout.
            self._idling_now = False
            shutdown(client)
        elif client is not None:
            try:
                client.logout()
            except Exception:  # closing a dead link is fine
                shutdown(client)

    def _check_open(self) -> None:
        if self._closed:
            raise TransportError(f"{self!r} is closed", temporary=False)


def _parse_key(key: str) -> tuple[int, int]:
    uidvalidity, sep, uid = key.partition(":")
    if not sep or not uidvalidity.isdigit() or not uid.isdigit():
        raise ValueError(f"not an IMAP message key (UIDVALIDITY:UID): {key!r}")
    return int(uidvalidity), int(uid)
