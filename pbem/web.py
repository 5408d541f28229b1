"""The one-click unsubscribe listener (RFC 8058) that ``pbem serve`` runs when
``unsubscribe_url`` is set.

It is meant to sit behind an HTTPS reverse proxy that forwards ``unsubscribe_url`` to
``http_listen``. It answers only ``PATH/TOKEN``, where PATH is the path of
``unsubscribe_url`` and TOKEN a seat's reply token:

- ``POST`` (the mail client's one-click, body ``List-Unsubscribe=One-Click``) stops the
  seat's player as the mail command ``stop`` does, and answers 200 with a short page;
- ``GET`` (a person following the link, or a link scanner) shows a page with a button
  that POSTs; it never unsubscribes (RFC 8058 §3);
- an unknown token is 404 without detail, any other path 404, any other method 405, a
  body over `MAX_BODY` bytes 413, anything malformed 400.
"""

from __future__ import annotations

import logging
import socket
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pbem.config import split_listen
from pbem.service import Service
from pbem.service.unsubscribe import TOKEN_RE, is_known

log = logging.getLogger("pbem.web")

MAX_BODY = 1024
"""The largest request body read (a one-click body is 26 bytes)."""

TIMEOUT_SECONDS = 10.0
"""How long a connection may take to send its request."""

_DONE = "You are unsubscribed: the service sends you no more mail but the answers to your own mail. Send 'start' to a game mail's address to get your mails again.\n"  # noqa: E501

_FORM = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Unsubscribe</title>
<meta name="robots" content="noindex"></head>
<body><p>Stop the game mails from the service? You will still get the answers to your
own mail, and your games go on.</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button></form></body></html>
"""


def mask_token(token: str) -> str:
    """A token fit for a log line: its first four characters, then "…"."""
    return token[:4] + "…"


class UnsubscribeServer(ThreadingHTTPServer):
    """A threading HTTP server that knows the service and the path it answers."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], service: Service, prefix: str) -> None:
        self.service = service
        self.prefix = prefix
        self.thread: threading.Thread | None = None
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, UnsubscribeHandler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that failed (the client went away mid-answer): one debug line,
        no traceback on stderr."""
        log.debug("unsubscribe connection failed", exc_info=True)

    def start(self) -> None:
        """Serve in a daemon thread."""
        self.thread = threading.Thread(
            target=self.serve_forever, name="pbem-unsubscribe", daemon=True
        )
        self.thread.start()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self.thread is not None:
            self.shutdown()
            self.thread.join(5)
            self.thread = None
        self.server_close()


class UnsubscribeHandler(BaseHTTPRequestHandler):
    server: UnsubscribeServer
    server_version = "pbem"
    sys_version = ""
    protocol_version = "HTTP/1.0"
    timeout = TIMEOUT_SECONDS

    # -- the methods -------------------------------------------------------------------

    def do_GET(self) -> None:
        try:
            token = self._token()
            known = token is not None and is_known(self.server.service.db, token)
        except Exception:
            log.exception("unsubscribe page failed")
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, "Server error\n")
            return
        if not known:
            self._send(HTTPStatus.NOT_FOUND, "Not found\n")
        else:
            self._send(HTTPStatus.OK, _FORM, "text/html")

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_POST(self) -> None:
        try:
            self._post()
        except Exception:
            log.exception("unsubscribe request failed")
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, "Server error\n")

    def _post(self) -> None:
        token = self._token()
        if token is None:
            self._send(HTTPStatus.NOT_FOUND, "Not found\n")
            return
        body = self._body()
        if body is None:
            return
        try:
            form = parse_qs(body.decode("ascii"), strict_parsing=bool(body), max_num_fields=10)
        except (UnicodeDecodeError, ValueError):
            self._send(HTTPStatus.BAD_REQUEST, "Bad request\n")
            return
        if form.get("List-Unsubscribe") != ["One-Click"]:
            self._send(HTTPStatus.BAD_REQUEST, "Bad request\n")
            return
        if not self.server.service.unsubscribe(token):
            self._send(HTTPStatus.NOT_FOUND, "Not found\n")
            return
        log.info("unsubscribed seat %s (one-click)", mask_token(token))
        self._send(HTTPStatus.OK, _DONE)

    def _other(self) -> None:
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, "Method not allowed\n", allow="GET, POST")

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _other

    # -- reading and answering ---------------------------------------------------------

    def _token(self) -> str | None:
        """The token the path names, or None when the path is not ``PREFIX/TOKEN``."""
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        prefix = self.server.prefix
        if not path.startswith(prefix + "/"):
            return None
        token = path[len(prefix) + 1 :]
        return token if TOKEN_RE.fullmatch(token) else None

    def _body(self) -> bytes | None:
        """The request body, or None after answering 400 or 413."""
        if self.headers.get("Transfer-Encoding"):
            self._send(HTTPStatus.BAD_REQUEST, "Bad request\n")
            return None
        length = self.headers.get("Content-Length", "0").strip()
        if not length.isdigit():
            self._send(HTTPStatus.BAD_REQUEST, "Bad request\n")
            return None
        if len(length) > 6 or int(length) > MAX_BODY:
            self._send(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "Too large\n")
            return None
        return self.rfile.read(int(length))

    def _send(self, status: HTTPStatus, text: str, kind: str = "text/plain", **extra: str) -> None:
        data = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        for name, value in extra.items():
            self.send_header(name.title(), value)
        self.end_headers()
        if getattr(self, "command", None) != "HEAD":
            self.wfile.write(data)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Malformed requests (a bad request line, headers too long): the status alone."""
        try:
            self._send(HTTPStatus(code), f"{HTTPStatus(code).phrase}\n")
        except Exception:
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        """Requests are not logged one by one (the path holds the token); see `_post`."""


def start_listener(service: Service, listen: str, unsubscribe_url: str) -> UnsubscribeServer:
    """Listen on ``listen`` (HOST:PORT; port 0: any free one) for the one-click unsubscribe
    of ``unsubscribe_url`` and serve it in a daemon thread. Raises OSError when the
    address cannot be bound."""
    host, port = split_listen(listen)
    prefix = urlsplit(unsubscribe_url).path.rstrip("/")
    server = UnsubscribeServer((host, port), service, prefix)
    server.start()
    log.info(
        "one-click unsubscribe on %s:%d for %s",
        host,
        server.port,
        unsubscribe_url,
        extra={"listen": f"{host}:{server.port}", "unsubscribe_url": unsubscribe_url},
    )
    return server
