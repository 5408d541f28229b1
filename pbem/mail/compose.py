"""Building outgoing messages: one function from text and headers to SMTP-ready bytes."""

from __future__ import annotations

import email.policy
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from email.headerregistry import Address, BaseHeader, HeaderRegistry, UnstructuredHeader
from email.message import EmailMessage
from email.policy import Policy
from email.utils import format_datetime
from typing import Any

from pbem.mail.address import is_valid_address
from pbem.mail.autoreply import LOOP_HEADER

__all__ = ["MAX_REFERENCES", "compose"]

#: References kept in a thread: the first (the game's opening mail) and the newest.
MAX_REFERENCES = 20

_HEADER_NAME = re.compile(r"[!-9;-~]+")  # printable ASCII except ":"
_MESSAGE_ID = re.compile(r"[!-;=?-~]{1,900}")  # printable ASCII except "<" and ">"
_RESERVED = {
    "from",
    "to",
    "subject",
    "date",
    "message-id",
    "in-reply-to",
    "references",
    "reply-to",
    "auto-submitted",
    LOOP_HEADER.lower(),
    "mime-version",
    "content-type",
    "content-transfer-encoding",
}


class _IdListHeader(UnstructuredHeader, BaseHeader):
    """Message-ID, In-Reply-To, References: one id per folded line, never encoded.

    The stdlib folds these as unstructured text, and an id longer than the line
    limit (Gmail's often are) comes out RFC 2047-encoded, which breaks threading.
    """

    def fold(self, *, policy: Policy) -> str:
        linesep = policy.linesep
        return f"{self.name}: " + f"{linesep} ".join(str(self).split()) + linesep


def _policy() -> Policy:
    registry = HeaderRegistry()
    for name in ("message-id", "in-reply-to", "references"):
        registry.map_to_type(name, _IdListHeader)
    return email.policy.SMTP.clone(header_factory=registry)


_SMTP = _policy()


def _one_line(value: str) -> str:
    return " ".join(value.split())


def _bracketed(value: str, what: str) -> str:
    bare = value.strip().strip("<>").strip()
    if not _MESSAGE_ID.fullmatch(bare):
        raise ValueError(f"not a Message-ID for {what}: {value!r}")
    return f"<{bare}>"


def _address(addr: str, name: str | None, what: str) -> Address:
    if not is_valid_address(addr):
        raise ValueError(f"not a valid {what} address: {addr!r}")
    local, _, domain = addr.rpartition("@")
    return Address(display_name=_one_line(name or ""), username=local, domain=domain)


def _set_text(msg: EmailMessage, text: str, subtype: str, alternative: bool) -> None:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.endswith("\n"):
        text += "\n"
    plain = text.isascii() and all(len(line) <= 78 for line in text.split("\n"))
    cte = "7bit" if plain else "quoted-printable"
    kwargs: dict[str, Any] = {"subtype": subtype, "charset": "utf-8", "cte": cte}
    if alternative:
        msg.add_alternative(text, **kwargs)
    else:
        msg.set_content(text, **kwargs)


def _trim_references(ids: list[str]) -> list[str]:
    unique = list(dict.fromkeys(ids))
    if len(unique) <= MAX_REFERENCES:
        return unique
    return [unique[0], *unique[-(MAX_REFERENCES - 1) :]]


def compose(
    *,
    sender: str,
    sender_name: str,
    to: str,
    to_name: str | None,
    subject: str,
    text: str,
    html: str | None,
    message_id: str,
    in_reply_to: str | None,
    references: list[str],
    reply_to: str | None,
    loop_value: str,
    date: datetime | None = None,
    extra_headers: dict[str, str] | None = None,
    attachments: Sequence[tuple[str, str, bytes]] = (),
) -> bytes:
    """One outgoing message as SMTP-ready bytes (CRLF line ends, no line over 78 octets
    except for long Message-IDs, which are never split, and none near 998).

    With ``html`` the body is multipart/alternative (text/plain then text/html,
    both UTF-8); without it, a single text/plain part. Non-ASCII text is
    quoted-printable, ASCII text with short lines 7bit. A non-ASCII subject or
    name is RFC 2047-encoded. Every message carries ``Auto-Submitted:
    auto-generated`` (so well-behaved autoresponders stay silent) and
    ``X-PBEM-Loop: loop_value`` (so we recognise our own mail coming back).
    ``References`` keeps the first and the newest ids, at most
    :data:`MAX_REFERENCES`. ``date`` defaults to now (UTC); a naive datetime is
    taken as UTC. ``extra_headers`` adds headers but cannot replace the ones
    above. ``attachments`` are ``(filename, "type/subtype", data)`` triples,
    sent base64 after the body in a multipart/mixed (readers ignore them).

    Raises ValueError on an invalid address, Message-ID, header name or content
    type, or an empty ``loop_value``.
    """
    if not loop_value.strip():
        raise ValueError("compose needs a loop value for the X-PBEM-Loop header")
    msg = EmailMessage(policy=_SMTP)
    msg["From"] = _address(sender, sender_name, "sender")
    msg["To"] = _address(to, to_name, "recipient")
    if reply_to:
        msg["Reply-To"] = _address(reply_to, sender_name, "reply-to")
    msg["Subject"] = _one_line(subject)
    when = date or datetime.now(UTC)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    msg["Date"] = format_datetime(when)
    msg["Message-ID"] = _bracketed(message_id, "this message")
    if in_reply_to:
        msg["In-Reply-To"] = _bracketed(in_reply_to, "In-Reply-To")
    refs = _trim_references([_bracketed(ref, "References") for ref in references])
    if refs:
        msg["References"] = " ".join(refs)
    msg["Auto-Submitted"] = "auto-generated"
    msg[LOOP_HEADER] = _one_line(loop_value)
    for name, value in (extra_headers or {}).items():
        if not _HEADER_NAME.fullmatch(name) or name.lower() in _RESERVED:
            raise ValueError(f"cannot add header {name!r}")
        msg[name] = _one_line(value)
    _set_text(msg, text, "plain", alternative=False)
    if html is not None:
        _set_text(msg, html, "html", alternative=True)
    for filename, content_type, data in attachments:
        maintype, slash, subtype = content_type.partition("/")
        if not slash or not _HEADER_NAME.fullmatch(maintype) or not _HEADER_NAME.fullmatch(subtype):
            raise ValueError(f"not a content type for {filename!r}: {content_type!r}")
        msg.add_attachment(
            bytes(data), maintype=maintype, subtype=subtype, filename=_one_line(filename)
        )
    return msg.as_bytes()
