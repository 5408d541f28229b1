"""The one-click unsubscribe listener (RFC 8058) that ``pbem serve`` runs when
``unsubscribe_url`` is set.

It is meant to sit behind an HTTPS reverse proxy that forwards ``unsubscribe_url`` to
``http_listen``. It answers only ``PATH/TOKEN``, where PATH is the path of
``unsubscribe_url`` and TOKEN a seat's reply token:

- ``POST`` (the mail client's one-click, body ``List-Unsubscribe=One-Click``) stops the
  seat's player as the mail command ``stop`` does, and answers 200 with a short page;
- ``GET`` (a person following the link, or a link scanner) shows a page with a button
  that POSTs; it never unsubscribes (RFC 8058 §3); ``HEAD`` answers as ``GET`` does,
  without the page;
- an unknown token is 404 without detail, any other path 404, any other method 405, a
  body over `MAX_BODY` bytes 413, anything malformed 400 (two ``Content-Length``
  headers, or one with two values, or one beside ``Transfer-Encoding``, included).

HTTP/1.1 is parsed by h11; the connections are served by an asyncio loop in a thread of
their own, one request a connection (every answer says ``Connection: close``). The
token lookups, which read the database, run in a small pool of threads, so a slow
database does not stall the loop. Limits against a client that would hold the listener:
at most `MAX_CONNECTIONS` connections at once (one more is answered 503 and closed at
once), `REQUEST_DEADLINE` seconds in all from the accept to the end of the body (then
408 and the connection closed), `MAX_HEAD` bytes of request line and headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import h11

from pbem.config import split_listen
from pbem.service import Service
from pbem.service.unsubscribe import TOKEN_RE, is_known

log = logging.getLogger("pbem.web")

T = TypeVar("T")

MAX_BODY = 1024
"""The largest request body read (a one-click body is 26 bytes)."""

MAX_HEAD = 8 * 1024
"""The largest request line and headers, together (more: 431)."""

MAX_CONNECTIONS = 64
"""Connections served at once; one more is answered 503 and closed at once."""

REQUEST_DEADLINE = 10.0
"""Seconds from the accept of a connection to the end of its request's body, in all
(not a read's): then 408 and the connection is closed."""

SEND_TIMEOUT = 10.0
"""Seconds to hand the answer to a client that does not read it."""

LINGER_SECONDS = 1.0
"""After the answer, how long what the client still sends is read and dropped (at most
`LINGER_BYTES`), so that closing with unread data does not reset the answer away."""

LINGER_BYTES = 64 * 1024

DB_THREADS = 4
"""Threads for the database calls (the token lookup and the unsubscribe)."""

READ_SIZE = 4096

_ALLOW = "GET, HEAD, POST"

_DONE = "You are unsubscribed: the service sends you no more mail but the answers to your own mail. Send 'start' to a game mail's address to get your mails again.\n"  # noqa: E501

_FORM = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Unsubscribe</title>
<meta name="robots" content="noindex"></head>
<body><p>Stop the game mails from the service? You will still get the answers to your
own mail, and your games go on.</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button></form></body></html>
"""

# A Content-Length header line in the raw head (h11 allows no space before the colon,
# and reads a line that starts with a space as the previous one's continuation).
_CONTENT_LENGTH_RE = re.compile(rb"\ncontent-length:([^\n]*)", re.IGNORECASE)
_HEAD_END_RE = re.compile(rb"\n\r?\n")


def mask_token(token: str) -> str:
    """A token fit for a log line: its first four characters, then "…"."""
    return token[:4] + "…"


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
FORBIDDEN = Answer(HTTPStatus.FORBIDDEN, "Forbidden\n")
METRICS_PATH = "/metrics"
METRICS_TYPE = "text/plain; version=0.0.4"
_FORWARD_HEADERS = {"forwarded", "x-forwarded-for", "x-real-ip"}
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


class UnsubscribeServer:
    """The listening socket and the asyncio loop, in a daemon thread, that serves it."""

    def __init__(
        self,
        sock: socket.socket,
        service: Service,
        prefix: str | None,
        *,
        metrics: bool = False,
        metrics_token: str = "",
    ) -> None:
        self.sock = sock
        self._port = int(sock.getsockname()[1])
        self.service = service
        self.prefix = prefix  # None: no unsubscribe
        self.metrics = metrics
        self.metrics_token = metrics_token
        self.thread: threading.Thread | None = None
        self.active = 0
        self._executor = ThreadPoolExecutor(DB_THREADS, thread_name_prefix="pbem-unsubscribe-db")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._warned_at = -60.0

    @property
    def port(self) -> int:
        return self._port

    # -- starting and stopping ---------------------------------------------------------

    def start(self) -> None:
        """Serve in a daemon thread; back once the loop accepts."""
        self.thread = threading.Thread(target=self._run, name="pbem-unsubscribe", daemon=True)
        self.thread.start()
        self._ready.wait(10)

    def stop(self) -> None:
        """Stop serving: close the socket and every connection."""
        loop, stopping, thread = self._loop, self._stopping, self.thread
        self.thread = None
        if thread is not None:
            if loop is not None and stopping is not None:
                with contextlib.suppress(RuntimeError):  # the loop is already closed
                    loop.call_soon_threadsafe(stopping.set)
            thread.join(5)
        self.sock.close()
        self._executor.shutdown(wait=False, cancel_futures=True)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except Exception:
            log.exception("the unsubscribe listener failed")
        finally:
            self._ready.set()

    async def _main(self) -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(_loop_error)
        self._loop = loop
        self._stopping = asyncio.Event()
        server = await asyncio.start_server(self._accept, sock=self.sock)
        self._ready.set()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await server.wait_closed()

    # -- a connection ------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _no_delay(writer)
        if self.active >= MAX_CONNECTIONS:
            now = time.monotonic()
            if now - self._warned_at >= 60:  # one line a minute, however many are refused
                self._warned_at = now
                log.warning("unsubscribe listener busy: %d connections open", self.active)
            writer.write(BUSY.encode())
            writer.close()
            return
        self.active += 1
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._serve(reader, writer)
        except asyncio.CancelledError:  # the listener stops: the task ends as any other
            pass
        except OSError as exc:  # the client went away: no traceback, even with -v
            log.debug("unsubscribe connection failed: %r", exc)
        except Exception:
            log.exception("unsubscribe connection failed")
        finally:
            self.active -= 1
            if task is not None:
                self._tasks.discard(task)
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        request: Request | None = None
        try:
            async with asyncio.timeout(REQUEST_DEADLINE):
                request = await self._read(conn, reader, writer)
        except TimeoutError:
            answer = TIMED_OUT
        except Refused as exc:
            answer = exc.answer
        except h11.RemoteProtocolError as exc:
            answer = HEAD_TOO_LARGE if exc.error_status_hint == 431 else BAD_REQUEST
        else:
            if request is None:  # closed without a request
                return
            answer = await self._answer(request)
        await self._send(
            reader, writer, answer.encode(request is not None and request.method == "HEAD")
        )

    async def _read(
        self, conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
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
                _check_framing(event, bytes(raw))
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

    async def _send(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, wire: bytes
    ) -> None:
        """Write the answer, say the end, and drop what the client still sends for a
        moment (a close with unread data would reset the answer away)."""
        writer.write(wire)
        try:
            async with asyncio.timeout(SEND_TIMEOUT):
                await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()
            async with asyncio.timeout(LINGER_SECONDS):
                dropped = 0
                while dropped < LINGER_BYTES:
                    data = await reader.read(READ_SIZE)
                    if not data:
                        break
                    dropped += len(data)
        except TimeoutError:
            pass

    # -- the answers -------------------------------------------------------------------

    async def _answer(self, request: Request) -> Answer:
        if request.method not in ("GET", "HEAD", "POST"):
            return NOT_ALLOWED
        if self.metrics and _path(request.target) == METRICS_PATH:
            return await self._metrics(request)
        try:
            if request.method == "POST":
                return await self._post(request)
            token = self._token(request.target)
            if token is None or not await self._blocking(is_known, self.service.db, token):
                return NOT_FOUND
            return Answer(HTTPStatus.OK, _FORM, "text/html")
        except Exception:
            log.exception("unsubscribe request failed")
            return SERVER_ERROR

    async def _post(self, request: Request) -> Answer:
        token = self._token(request.target)
        if token is None:
            return NOT_FOUND
        body = request.body
        try:
            form = parse_qs(body.decode("ascii"), strict_parsing=bool(body), max_num_fields=10)
        except (UnicodeDecodeError, ValueError):
            return BAD_REQUEST
        if form.get("List-Unsubscribe") != ["One-Click"]:
            return BAD_REQUEST
        if not await self._blocking(self.service.unsubscribe, token):
            return NOT_FOUND
        log.info("unsubscribed seat %s (one-click)", mask_token(token))
        return Answer(HTTPStatus.OK, _DONE)

    async def _metrics(self, request: Request) -> Answer:
        if request.method == "POST":
            return NOT_ALLOWED
        if not metrics_allowed(request, self.metrics_token):
            return FORBIDDEN
        try:
            text = await self._blocking(metrics_text, self.service)
        except Exception:
            log.exception("metrics request failed")
            return SERVER_ERROR
        return Answer(HTTPStatus.OK, text, METRICS_TYPE)

    def _token(self, target: str) -> str | None:
        """The token the path names, or None when the path is not ``PREFIX/TOKEN``."""
        path = _path(target)
        if self.prefix is None or not path.startswith(self.prefix + "/"):
            return None
        token = path[len(self.prefix) + 1 :]
        return token if TOKEN_RE.fullmatch(token) else None

    async def _blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in the database threads."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)


def _path(target: str) -> str:
    return target.split("?", 1)[0].split("#", 1)[0]


def metrics_allowed(request: Request, token: str) -> bool:
    """Whether ``/metrics`` is answered: to the ``metrics_token`` as a bearer token, or
    (without one) to a loopback client whose request no proxy forwarded (a reverse proxy
    on this host would make any client look local)."""
    given = request.header("authorization") or ""
    if token and given.startswith("Bearer "):
        return hmac.compare_digest(given[len("Bearer ") :].strip().encode(), token.encode())
    forwarded = any(name in _FORWARD_HEADERS for name, _ in request.headers)
    try:
        local = ipaddress.ip_address(request.peer.removeprefix("::ffff:")).is_loopback
    except ValueError:
        local = False
    return local and not forwarded and not given


def metrics_text(service: Service) -> str:
    """The Prometheus text of ``/metrics``: this process's counters (`pbem.metrics`) and
    the queues read from the database now."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.core import (
        CounterMetricFamily,
        GaugeMetricFamily,
        HistogramMetricFamily,
        Metric,
    )
    from prometheus_client.registry import Collector
    from sqlmodel import Session

    from pbem.metrics import METRICS, WAIT_BUCKETS
    from pbem.store.gauges import queues

    snap = METRICS.snapshot()
    with Session(service.db) as session:
        queue = queues(session, service.clock())

    def labelled(
        name: str, doc: str, label: str, values: dict[str, int], known: tuple[str, ...]
    ) -> CounterMetricFamily:
        family = CounterMetricFamily(name, doc, labels=[label])
        for key in sorted({*known, *values}):
            family.add_metric([key], values.get(key, 0))
        return family

    class Families(Collector):
        def collect(self) -> Iterator[Metric]:
            yield labelled(
                "pbem_messages",
                "Inbound messages processed, by outcome.",
                "outcome",
                snap.messages,
                ("applied", "rejected", "ignored", "failed"),
            )
            yield CounterMetricFamily(
                "pbem_moves", "The players' commands applied to games.", value=snap.moves
            )
            yield labelled(
                "pbem_deliveries",
                "Delivery attempts of outgoing mail, by result.",
                "result",
                snap.deliveries,
                ("sent", "deferred", "failed", "bounced"),
            )
            yield labelled(
                "pbem_transport_errors",
                "Failures of a mail transport (the inbox or the outbox).",
                "transport",
                snap.transport_errors,
                ("inbox", "outbox"),
            )
            cumulative: list[tuple[str, float]] = []
            total = 0
            bounds = (*map(str, WAIT_BUCKETS), "+Inf")
            for bound, count in zip(bounds, snap.wait_buckets, strict=True):
                total += count
                cumulative.append((bound, total))
            yield HistogramMetricFamily(
                "pbem_message_wait_seconds",
                "Seconds from a message's arrival to the end of its processing.",
                buckets=cumulative,
                sum_value=snap.wait_sum,
            )
            yield GaugeMetricFamily(
                "pbem_outbox_queue_depth",
                "Outgoing mails waiting to go (pending, deferred or being sent).",
                value=queue.outbox_depth,
            )
            yield GaugeMetricFamily(
                "pbem_outbox_oldest_due_seconds",
                "How long the oldest outgoing mail that is due has been due (0: none is).",
                value=queue.oldest_due_seconds,
            )
            yield GaugeMetricFamily(
                "pbem_inbound_pending",
                "Inbound messages stored and not yet processed.",
                value=queue.inbound_pending,
            )

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Families())
    return generate_latest(registry).decode("utf-8")


def _check_framing(request: h11.Request, raw: bytes) -> None:
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


def _loop_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """What the loop itself reports (a transport that failed as the client went away, an
    accept out of file descriptors): one debug line, no traceback on stderr."""
    log.debug("unsubscribe loop: %s %r", context.get("message"), context.get("exception"))


def _no_delay(writer: asyncio.StreamWriter) -> None:
    """Turn Nagle's algorithm off for an accepted connection: asyncio does so only for
    sockets made with IPPROTO_TCP named (``socket.create_server`` leaves it 0), and with
    it on an answer written in two parts waits for the client's delayed ACK, 40 ms."""
    sock = writer.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def start_listener(
    service: Service,
    listen: str,
    unsubscribe_url: str,
    *,
    metrics: bool = False,
    metrics_token: str = "",
) -> UnsubscribeServer:
    """Listen on ``listen`` (HOST:PORT; port 0: any free one) for the one-click unsubscribe
    of ``unsubscribe_url`` (empty: none) and, with ``metrics``, ``/metrics``; serve them
    in a daemon thread. Raises OSError when the address cannot be bound."""
    host, port = split_listen(listen)
    prefix = urlsplit(unsubscribe_url).path.rstrip("/") if unsubscribe_url else None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=128)
    server = UnsubscribeServer(sock, service, prefix, metrics=metrics, metrics_token=metrics_token)
    server.start()
    if unsubscribe_url:
        log.info(
            "one-click unsubscribe on %s:%d for %s",
            host,
            server.port,
            unsubscribe_url,
            extra={"listen": f"{host}:{server.port}", "unsubscribe_url": unsubscribe_url},
        )
    if metrics:
        log.info(
            "metrics on http://%s:%d%s (%s)",
            host,
            server.port,
            METRICS_PATH,
            "loopback, or the metrics_token" if metrics_token else "loopback only",
            extra={"listen": f"{host}:{server.port}", "metrics": METRICS_PATH},
        )
    return server
