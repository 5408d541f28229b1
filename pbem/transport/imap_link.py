"""The link to an IMAP server, below :class:`~pbem.transport.imap.ImapInbound`: opening
it (TLS, login, the ``processed`` folder, the folder to read), telling a lost link from a
refused command, reading messages without marking them seen, reading what the server
says inside IDLE, and waiting on sockets.

Nothing here keeps state: the source decides when to connect, what to fetch and when a
message is done.
"""

from __future__ import annotations

import contextlib
import imaplib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from imapclient import IMAPClient
from imapclient.exceptions import LoginError
from imapclient.imapclient import SocketTimeout

from pbem.transport._tls import client_tls_context
from pbem.transport.base import TransportError
from pbem.transport.readable import readable
from pbem.transport.urls import ImapConfig

_FETCH_CHUNK = 25
_WAKING_RESPONSES = {b"EXISTS", b"RECENT", b"FETCH"}

# Errors that mean the connection is gone (or unusable) rather than a refused command.
LINK_ERRORS: tuple[type[Exception], ...] = (imaplib.IMAP4.abort, OSError, EOFError)


class LinkLost(Exception):
    """The server said BYE or closed the connection."""


WAIT_ERRORS: tuple[type[Exception], ...] = (*LINK_ERRORS, LinkLost)


def open_client(config: ImapConfig, name: str) -> tuple[IMAPClient, dict[bytes, Any]]:
    """Connect, log in, create the ``processed`` folder if it is configured and missing,
    and select the folder; returns the client and the SELECT answer (``UIDVALIDITY``,
    ``UIDNEXT``). ``name`` (the source's masked ``repr``) begins every error message.

    Raises:
        TransportError: temporary for network trouble, permanent for a refused login
            or a folder that cannot be created or selected.
    """
    client: IMAPClient | None = None
    try:
        context = client_tls_context(config.verify) if config.tls != "none" else None
        client = IMAPClient(
            config.host,
            port=config.port,
            ssl=config.tls == "implicit",
            ssl_context=context,
            timeout=SocketTimeout(connect=config.timeout, read=config.timeout),
        )
        if config.tls == "starttls":
            client.starttls(context)
        client.login(config.username, config.password)
        if config.processed and not client.folder_exists(config.processed):
            with contextlib.suppress(imaplib.IMAP4.error):
                client.create_folder(config.processed)
            if not client.folder_exists(config.processed):
                raise TransportError(
                    f"{name}: cannot create folder {config.processed!r}", temporary=False
                )
        info = client.select_folder(config.folder)
    except LoginError as exc:
        shutdown(client)
        raise TransportError(f"{name}: login refused: {error_text(exc)}", temporary=False) from exc
    except LINK_ERRORS as exc:
        shutdown(client)
        raise TransportError(
            f"{name}: cannot connect: {type(exc).__name__}: {error_text(exc)}", temporary=True
        ) from exc
    except imaplib.IMAP4.error as exc:
        shutdown(client)
        raise TransportError(
            f"{name}: {type(exc).__name__}: {error_text(exc)}", temporary=False
        ) from exc
    except TransportError:
        shutdown(client)
        raise
    return client, info


def fetch_messages(
    client: IMAPClient, uids: list[int], cap: int | None
) -> tuple[dict[int, int], dict[int, bytes], dict[int, bytes]]:
    """The sizes of ``uids``, the whole of each message up to ``cap`` bytes (``None``: no
    cap) and the header section of each larger one, by UID; a UID gone meanwhile is in
    none of them. Read with ``BODY.PEEK``, so ``\\Seen`` is not set."""
    sizes: dict[int, int] = {}
    for chunk in _chunks(uids, 500):
        for uid, data in client.fetch(chunk, ["RFC822.SIZE"]).items():
            sizes[uid] = int(data[b"RFC822.SIZE"])
    small = [uid for uid in uids if uid in sizes and (cap is None or sizes[uid] <= cap)]
    large = [uid for uid in uids if uid in sizes and cap is not None and sizes[uid] > cap]
    bodies: dict[int, bytes] = {}
    for chunk in _chunks(small, _FETCH_CHUNK):
        for uid, data in client.fetch(chunk, ["BODY.PEEK[]"]).items():
            body = data.get(b"BODY[]")
            if body is not None:
                bodies[uid] = bytes(body)
    headers: dict[int, bytes] = {}
    for chunk in _chunks(large, _FETCH_CHUNK):
        for uid, data in client.fetch(chunk, ["BODY.PEEK[HEADER]"]).items():
            header = data.get(b"BODY[HEADER]")
            if header is not None:
                headers[uid] = bytes(header)
    return sizes, bodies, headers


def waking(response: Any) -> bool:
    """Whether an untagged response tells of news in the folder (EXISTS, RECENT, FETCH)."""
    return bool(len(response) >= 2 and response[1] in _WAKING_RESPONSES)


def idle_news(client: IMAPClient) -> bool:
    """Inside IDLE, with the socket readable: True on news of the folder.

    Raises:
        LinkLost: the server said BYE or closed the connection.
    """
    responses: list[Any] = client.idle_check(timeout=0)
    if not responses:
        # Readable with nothing to read: the server closed the connection.
        raise LinkLost("connection closed")
    for response in responses:
        if response and response[0] == b"BYE":
            raise LinkLost("server said BYE")
    return any(waking(response) for response in responses)


def select_readable(fds: Sequence[Any], timeout: float) -> list[Any]:
    """The readable ones of ``fds`` (sockets or descriptors) within ``timeout`` seconds."""
    return readable(fds, timeout)


def wait_readable(wake: Sequence[int], timeout: float, sleep: Callable[[float], None]) -> bool:
    """Wait ``timeout`` seconds, or less if a ``wake`` descriptor becomes readable (True)."""
    if not wake:
        sleep(timeout)
        return False
    return bool(select_readable(wake, timeout))


def error_text(exc: BaseException) -> str:
    """An exception's message as text (imaplib carries bytes)."""
    parts = [
        arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg) for arg in exc.args
    ]
    return " ".join(parts) or type(exc).__name__


def shutdown(client: IMAPClient | None) -> None:
    """Close ``client``'s socket without a word to the server (nothing if ``None``)."""
    if client is None:
        return
    with contextlib.suppress(Exception):
        client.shutdown()


def _chunks(items: list[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
