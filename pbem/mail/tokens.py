"""Reply keys: the secret token that binds a reply to one seat in one game.

Every seat in every game has its own token. It travels in two places of every
message we send, so that a reply finds its way back whichever one the player's
client keeps:

- the reply address ``local+TOKEN@domain`` (From/Reply-To), which comes back in
  To, Cc, Delivered-To or X-Original-To;
- the Message-ID ``<gGAME.sSEQ.TOKEN@domain>``, which comes back in In-Reply-To
  and References.

Tokens found here are only candidates: the service looks them up and checks
that the sender is the player of that seat. An unknown token is dropped without
a reply, so forged mail causes no backscatter.
"""

from __future__ import annotations

import base64
import re
import secrets
from typing import NamedTuple

from pbem.mail.reading import IncomingMail

__all__ = [
    "TOKEN_BYTES",
    "OurMessageId",
    "find_tokens",
    "message_id",
    "new_token",
    "parse_message_id",
    "reply_address",
]

#: 96 random bits: 20 base32 characters.
TOKEN_BYTES = 12

# What we accept as a token when reading: lenient about length so that tokens
# from a future format still reach the database check, strict about alphabet.
_TOKEN = r"[a-z0-9]{8,64}"
_TOKEN_RE = re.compile(_TOKEN)
_SEQ_RE = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*")


def new_token() -> str:
    """A fresh secret token: 20 lowercase characters from ``a-z2-7`` (96 random bits)."""
    return base64.b32encode(secrets.token_bytes(TOKEN_BYTES)).decode("ascii").rstrip("=").lower()


def _check_token(token: str) -> str:
    if not _TOKEN_RE.fullmatch(token):
        raise ValueError(f"not a reply token: {token!r}")
    return token


def reply_address(local: str, token: str, domain: str) -> str:
    """The reply address ``local+token@domain`` for one seat.

    Raises ValueError when ``local`` contains "+", "@" or whitespace, when
    ``domain`` is empty or contains "@", or when ``token`` is not a token.
    """
    if not local or re.search(r"[+@\s<>]", local):
        raise ValueError(f"not a local part for reply addresses: {local!r}")
    if not domain or re.search(r"[@\s<>]", domain):
        raise ValueError(f"not a mail domain: {domain!r}")
    return f"{local}+{_check_token(token)}@{domain}"


def message_id(token: str, game_id: int, seq: str | int, domain: str) -> str:
    """The Message-ID of one message to one seat: ``<g{game_id}.s{seq}.{token}@{domain}>``.

    Example: ``<g12.s7.k5x2ablq7vrm4ysoyhd3@cribbage.example.org>``. The same
    inputs always give the same id, so a message sent again after a crash
    (at-least-once delivery) keeps its id and the player's client sees one
    message. The service makes ``seq`` unique per seat (e.g. the outbox row or
    the action number, or "p12.help"); ``seq`` may use letters, digits, "-", "_"
    and inner dots, up to 64 characters. The token is always the last dotted part
    before the "@", so :func:`parse_message_id` can split the id again.
    Raises ValueError for a bad token, seq, game id or domain.
    """
    seq_text = str(seq)
    if len(seq_text) > 64 or not _SEQ_RE.fullmatch(seq_text):
        raise ValueError(f"not a message sequence: {seq!r}")
    if game_id < 0:
        raise ValueError(f"not a game id: {game_id!r}")
    if not domain or re.search(r"[@\s<>]", domain):
        raise ValueError(f"not a mail domain: {domain!r}")
    return f"<g{game_id}.s{seq_text}.{_check_token(token)}@{domain}>"


class OurMessageId(NamedTuple):
    """The parts of a Message-ID made by :func:`message_id`."""

    game_id: int
    seq: str
    token: str


_OUR_ID = re.compile(rf"g(\d{{1,18}})\.s([A-Za-z0-9_.-]{{1,64}})\.({_TOKEN})@(.+)", re.I)


def parse_message_id(value: str, domain: str) -> OurMessageId | None:
    """Split one of our Message-IDs (with or without <>) made for ``domain``.

    Returns None for any other id, including ours made for another domain.
    Used on In-Reply-To/References and on a bounce's original Message-ID.
    """
    match = _OUR_ID.fullmatch(value.strip().strip("<>").strip())
    if not match or match.group(4).lower() != domain.lower():
        return None
    return OurMessageId(int(match.group(1)), match.group(2), match.group(3).lower())


def find_tokens(mail: IncomingMail, local: str, domain: str) -> list[str]:
    """Candidate tokens of ``mail``, best first, without duplicates.

    First the ``local+TOKEN@domain`` addresses among To, Cc, Delivered-To and
    X-Original-To (case-insensitive), then our Message-IDs in In-Reply-To, then
    in References from newest (last) to oldest.
    """
    address = re.compile(rf"{re.escape(local)}\+({_TOKEN})@{re.escape(domain)}", re.I)
    found: list[str] = []
    for addr in (*mail.to, *mail.cc, *mail.delivered_to, *mail.original_to):
        match = address.fullmatch(addr.strip())
        if match:
            found.append(match.group(1).lower())
    for ref in (*mail.in_reply_to, *reversed(mail.references)):
        parsed = parse_message_id(ref, domain)
        if parsed is not None:
            found.append(parsed.token)
    return list(dict.fromkeys(found))
