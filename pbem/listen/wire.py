"""HTTP/1.1 on the wire, as the HTTP listener (`pbem.listen.web`) speaks it: a request
read whole (`read_request`), and an answer written whole (`Answer`).

HTTP/1.1 is parsed by h11, one request a connection (every answer says ``Connection:
close``). What is refused before the request's end raises `Refused` with its answer: a
body over `MAX_BODY` bytes 413, anything malformed 400 (two ``Content-Length`` headers,
or one with two values, or one beside ``Transfer-Encoding``, included); request line and
headers over `MAX_HEAD` bytes are h11's to refuse (431).

The answers say as little as they can: a status and a short text, never the detail of an
error. The handlers behind the listener (`pbem.listen.unsubscribe`,
`pbem.listen.metrics`) take a `Request` and give an `Answer`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Protocol, TypeVar

import h11

T = TypeVar("T")

MAX_BODY = 1024
"""The largest request body read (a one-click body is 26 bytes)."""

MAX_HEAD = 8 * 1024
"""The largest request line and headers, together (more: 431)."""

READ_SIZE = 4096

_ALLOW = "GET, HEAD, POST"

# A Content-Length header line in the raw head (h11 allows no space before the colon,
# and reads a line that starts with a space as the previous one's continuation).
_CONTENT_LENGTH_RE = re.compile(rb"\ncontent-length:([^\n]*)", re.IGNORECASE)
_HEAD_END_RE = re.compile(rb"\n\r?\n")


@dataclass(frozen=True)
class Answer:
    """A response: a status and a short text (nothing else: no detail of an error)."""

    status: HTTPStatus
    text: str
    kind: str = "text/plain"
    extra: dict[str, str] = field(default_factory=dict)

    def encode(self, head_only: bool = False) -> bytes:
        """The bytes on the wire: the body is left out for a ``HEAD``."""
        data = self.text.encode("utf-8")
        headers = [
            ("Content-Type", f"{self.kind}; charset=utf-8"),
            ("Content-Length", str(len(data))),
            ("Cache-Control", "no-store"),
            ("Connection", "close"),
            *self.extra.items(),
        ]
        # A connection of its own: the answer does not depend on how far the request
        # got (an error may come before h11 saw a request at all).
        out = h11.Connection(h11.SERVER)
        response = h11.Response(
            status_code=int(self.status), reason=self.status.phrase, headers=headers
        )
        wire = out.send(response) or b""
        if not head_only:
            wire += out.send(h11.Data(data=data)) or b""
        return wire


def _plain(status: HTTPStatus, **extra: str) -> Answer:
    return Answer(status, f"{status.phrase}\n", extra=extra)


NOT_FOUND = Answer(HTTPStatus.NOT_FOUND, "Not found\n")
BAD_REQUEST = Answer(HTTPStatus.BAD_REQUEST, "Bad request\n")
TOO_LARGE = Answer(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "Too large\n")
SERVER_ERROR = Answer(HTTPStatus.INTERNAL_SERVER_ERROR, "Server error\n")
TIMED_OUT = _plain(HTTPStatus.REQUEST_TIMEOUT)
HEAD_TOO_LARGE = _plain(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE)
BUSY = _plain(HTTPStatus.SERVICE_UNAVAILABLE, **{"Retry-After": "1"})
_CONTINUE = h11.InformationalResponse(status_code=100, headers=[], reason=b"Continue")
NOT_ALLOWED = Answer(HTTPStatus.METHOD_NOT_ALLOWED, "Method not allowed\n", extra={"Allow": _ALLOW})


class Refused(Exception):
    """A request answered before its end (malformed, too large)."""

    def __init__(self, answer: Answer) -> None:
        super().__init__(answer.status.phrase)
        self.answer = answer


@dataclass(frozen=True)
class Request:
    """A whole request, body included; ``headers`` lowercase names; ``peer`` the client's
    IP address."""

    method: str
    target: str
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    peer: str = ""

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k == name), None)


class Blocking(Protocol):
    """How a handler calls what may block (the database): ``await blocking(fn, *args)``
    runs ``fn(*args)`` in the listener's database threads, off its event loop."""

    def __call__(self, fn: Callable[..., T], /, *args: Any) -> Awaitable[T]: ...


def path_of(target: str) -> str:
    """A request target's path: without its query and fragment."""
    return target.split("?", 1)[0].split("#", 1)[0]


async def read_request(
    conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> Request | None:
    """The whole request, or None when the client closed before sending any. Raises
    Refused, or h11.RemoteProtocolError for what h11 finds malformed."""
    raw = bytearray()  # the bytes up to the Request event, the head among them
    start: h11.Request | None = None
    body = bytearray()
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            data = await reader.read(READ_SIZE)
            if start is None:
                raw += data
            conn.receive_data(data)
        elif isinstance(event, h11.Request):
            start = event
            check_framing(event, bytes(raw))
            if conn.they_are_waiting_for_100_continue:
                writer.write(conn.send(_CONTINUE) or b"")
        elif isinstance(event, h11.Data):
            body += event.data
            if len(body) > MAX_BODY:
                raise Refused(TOO_LARGE)
        elif isinstance(event, h11.EndOfMessage):
            assert start is not None
            peer = writer.get_extra_info("peername")
            return Request(
                start.method.decode("ascii", "replace"),
                start.target.decode("ascii", "replace"),
                bytes(body),
                tuple(
                    (k.decode("ascii", "replace").lower(), v.decode("latin-1"))
                    for k, v in start.headers
                ),
                str(peer[0]) if isinstance(peer, tuple) and peer else "",
            )
        elif isinstance(event, h11.ConnectionClosed):
            return None
        else:  # nothing else comes before the end of a request
            raise Refused(BAD_REQUEST)


def check_framing(request: h11.Request, raw: bytes) -> None:
    """Refuse a body whose length is not told once and plainly: h11 takes two equal
    Content-Length headers as one and lets Transfer-Encoding override Content-Length,
    where a proxy in front may read them otherwise. Refuse a body over `MAX_BODY` from
    its Content-Length, before reading it."""
    end = _HEAD_END_RE.search(raw)
    head = raw[: end.end()] if end else raw
    values = [v for line in _CONTENT_LENGTH_RE.findall(head) for v in line.split(b",")]
    if len(values) > 1:
        raise Refused(BAD_REQUEST)
    length = None
    chunked = False
    for name, value in request.headers:
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding":
            chunked = True
    if length is not None and chunked:
        raise Refused(BAD_REQUEST)
    if length is not None and length > MAX_BODY:
        raise Refused(TOO_LARGE)
