"""The HTTP listener that ``pbem serve`` runs when ``unsubscribe_url`` is set (the
one-click unsubscribe of RFC 8058, `pbem.listen.unsubscribe`) or ``metrics`` is on
(``/metrics``, `pbem.listen.metrics`).

It is meant to sit behind an HTTPS reverse proxy that forwards ``unsubscribe_url`` to
``http_listen``. Any method but ``GET``, ``HEAD`` and ``POST`` is 405; the requests are
read and the answers written by `pbem.listen.wire` (h11).

The connections are served by an asyncio loop in a thread of their own, one request a
connection (every answer says ``Connection: close``). The handlers' database calls run
in a small pool of threads, so a slow database does not stall the loop. Limits against a
client that would hold the listener: at most `MAX_PER_CLIENT` connections at once from
one client address (an IPv6 client by its /64), and `MAX_CONNECTIONS` in all (one more is
answered 503 and closed at once), `REQUEST_DEADLINE` seconds in all from the accept to the
end of the body (then 408 and the connection closed), `MAX_HEAD` bytes of request line
and headers. ``/metrics`` is kept apart: when every slot is taken, `METRICS_SLOTS` more
connections are taken for it alone (anything else on them is 503), so a monitoring
scrape still gets through while the listener is held.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import urlsplit

import h11

from pbem.config import split_listen
from pbem.listen.metrics import METRICS_PATH, metrics_answer
from pbem.listen.unsubscribe import unsubscribe_answer
from pbem.listen.wire import (
    BAD_REQUEST,
    BUSY,
    HEAD_TOO_LARGE,
    MAX_HEAD,
    NOT_ALLOWED,
    READ_SIZE,
    TIMED_OUT,
    Answer,
    Refused,
    Request,
    path_of,
    read_request,
)
from pbem.service import Service

log = logging.getLogger("pbem.web")

T = TypeVar("T")

MAX_CONNECTIONS = 64
"""Connections served at once; one more is answered 503 and closed at once."""

MAX_PER_CLIENT = 16
"""Connections served at once from one client address (an IPv6 one by its /64): one
client cannot hold every slot. (Behind a reverse proxy every request comes from the
proxy, which bounds its own clients; its requests take milliseconds each.)"""

METRICS_SLOTS = 4
"""Connections beyond `MAX_CONNECTIONS` kept for ``/metrics`` alone (with it on), with a
deadline of `METRICS_DEADLINE` seconds."""

METRICS_DEADLINE = 2.0

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
        self.reserved = 0  # of the active ones, on a slot kept for /metrics
        self.by_client: dict[str, int] = {}
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
        client = _client_of(writer.get_extra_info("peername"))
        held = self.by_client.get(client, 0)
        metrics_only = self.active - self.reserved >= MAX_CONNECTIONS
        if held >= MAX_PER_CLIENT or (
            metrics_only and (not self.metrics or self.reserved >= METRICS_SLOTS)
        ):
            self._busy(writer, client if held >= MAX_PER_CLIENT else "")
            return
        self.active += 1
        self.reserved += metrics_only
        self.by_client[client] = held + 1
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._serve(reader, writer, metrics_only=metrics_only)
        except asyncio.CancelledError:  # the listener stops: the task ends as any other
            pass
        except OSError as exc:  # the client went away: no traceback, even with -v
            log.debug("unsubscribe connection failed: %r", exc)
        except Exception:
            log.exception("unsubscribe connection failed")
        finally:
            self.active -= 1
            self.reserved -= metrics_only
            left = self.by_client[client] - 1
            if left:
                self.by_client[client] = left
            else:
                del self.by_client[client]
            if task is not None:
                self._tasks.discard(task)
            writer.close()

    def _busy(self, writer: asyncio.StreamWriter, client: str) -> None:
        """503 and close at once; one log line a minute, however many are refused."""
        now = time.monotonic()
        if now - self._warned_at >= 60:
            self._warned_at = now
            if client:
                log.warning("unsubscribe listener: %s holds %d connections", client, MAX_PER_CLIENT)
            else:
                log.warning("unsubscribe listener busy: %d connections open", self.active)
        writer.write(BUSY.encode())
        writer.close()

    async def _serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, metrics_only: bool
    ) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        request: Request | None = None
        try:
            async with asyncio.timeout(METRICS_DEADLINE if metrics_only else REQUEST_DEADLINE):
                request = await read_request(conn, reader, writer)
        except TimeoutError:
            answer = TIMED_OUT
        except Refused as exc:
            answer = exc.answer
        except h11.RemoteProtocolError as exc:
            answer = HEAD_TOO_LARGE if exc.error_status_hint == 431 else BAD_REQUEST
        else:
            if request is None:  # closed without a request
                return
            if metrics_only and path_of(request.target) != METRICS_PATH:
                answer = BUSY  # a slot kept for /metrics
            else:
                answer = await self._answer(request)
        await self._send(
            reader, writer, answer.encode(request is not None and request.method == "HEAD")
        )

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
        if self.metrics and path_of(request.target) == METRICS_PATH:
            return await metrics_answer(request, self.service, self.metrics_token, self._blocking)
        return await unsubscribe_answer(request, self.service, self.prefix, self._blocking)

    async def _blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in the database threads."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)


def _loop_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """What the loop itself reports (a transport that failed as the client went away, an
    accept out of file descriptors): one debug line, no traceback on stderr."""
    log.debug("unsubscribe loop: %s %r", context.get("message"), context.get("exception"))


def _client_of(peer: Any) -> str:
    """The client a peer address counts as: its IPv4 address, or its IPv6 /64 (one
    host usually holds a whole /64); "" when unknown (a Unix socket)."""
    if not isinstance(peer, tuple) or not peer:
        return ""
    host = str(peer[0])
    if ":" not in host:
        return host
    try:
        network = ipaddress.IPv6Network(f"{host.split('%')[0]}/64", strict=False)
    except ValueError:
        return host
    mapped = ipaddress.IPv6Address(host.split("%")[0]).ipv4_mapped
    return str(mapped) if mapped is not None else str(network)


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
