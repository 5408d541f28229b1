"""The one-click unsubscribe (RFC 8058) of the HTTP listener (`pbem.listen.web`), when
``unsubscribe_url`` is set.

It answers only ``PATH/TOKEN``, where PATH is the path of ``unsubscribe_url`` and TOKEN
a seat's reply token:

- ``POST`` (the mail client's one-click, body ``List-Unsubscribe=One-Click``) stops the
  seat's player as the mail command ``stop`` does (`Service.unsubscribe`), and answers
  200 with a short page;
- ``GET`` (a person following the link, or a link scanner) shows a page with a button
  that POSTs; it never unsubscribes (RFC 8058 §3); ``HEAD`` answers as ``GET`` does,
  without the page (the listener leaves the body out);
- an unknown token is 404 without detail, any other path 404.

The token lookups and the unsubscribe read and write the database: they run in the
listener's database threads (``blocking``), so a slow database does not stall its loop.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from urllib.parse import parse_qs

from pbem.listen.wire import (
    BAD_REQUEST,
    NOT_FOUND,
    SERVER_ERROR,
    Answer,
    Blocking,
    Request,
    path_of,
)
from pbem.service import Service
from pbem.service.unsubscribe import TOKEN_RE, is_known

log = logging.getLogger("pbem.web")  # the listener's name, which operators filter on

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


def token_of(target: str, prefix: str | None) -> str | None:
    """The token the path names, or None when the path is not ``PREFIX/TOKEN`` (or there
    is no unsubscribe: ``prefix`` None)."""
    path = path_of(target)
    if prefix is None or not path.startswith(prefix + "/"):
        return None
    token = path[len(prefix) + 1 :]
    return token if TOKEN_RE.fullmatch(token) else None


async def unsubscribe_answer(
    request: Request, service: Service, prefix: str | None, blocking: Blocking
) -> Answer:
    """The answer to a ``GET``, ``HEAD`` or ``POST`` under ``prefix`` (None: no
    unsubscribe, every path 404); a failure is logged and answered 500."""
    try:
        if request.method == "POST":
            return await _post(request, service, prefix, blocking)
        token = token_of(request.target, prefix)
        if token is None or not await blocking(is_known, service.db, token):
            return NOT_FOUND
        return Answer(HTTPStatus.OK, _FORM, "text/html")
    except Exception:
        log.exception("unsubscribe request failed")
        return SERVER_ERROR


async def _post(
    request: Request, service: Service, prefix: str | None, blocking: Blocking
) -> Answer:
    token = token_of(request.target, prefix)
    if token is None:
        return NOT_FOUND
    body = request.body
    try:
        form = parse_qs(body.decode("ascii"), strict_parsing=bool(body), max_num_fields=10)
    except (UnicodeDecodeError, ValueError):
        return BAD_REQUEST
    if form.get("List-Unsubscribe") != ["One-Click"]:
        return BAD_REQUEST
    if not await blocking(service.unsubscribe, token):
        return NOT_FOUND
    log.info("unsubscribed seat %s (one-click)", mask_token(token))
    return Answer(HTTPStatus.OK, _DONE)
