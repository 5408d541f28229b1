"""Building outgoing messages: one function from text and headers to SMTP-ready bytes."""

from __future__ import annotations

import binascii
import email.policy
import re
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime
from email.header import Header
from email.headerregistry import Address, BaseHeader, HeaderRegistry, UnstructuredHeader
from email.message import EmailMessage
from email.policy import Policy
from email.utils import format_datetime, formataddr
from typing import Any

from pbem.mail.address import is_valid_address
from pbem.mail.autoreply import LOOP_HEADER
from pbem.mail.named import NamedMail, mailboxes_in
from pbem.names import clean_name

__all__ = ["MAX_REFERENCES", "compose", "reply_reference"]

#: References kept in a thread: the first (the game's opening mail) and the newest.
MAX_REFERENCES = 20

_HEADER_NAME = re.compile(r"[!-9;-~]+")  # printable ASCII except ":"
_CONTROLS = re.compile(r"[\x00-\x1f\x7f]")
#: The longest display name put in an address header (longer ones are cut).
_DISPLAY_NAME_MAX = 64
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
    return " ".join(_CONTROLS.sub(" ", value).split())


def reply_reference(message_id: str | None) -> str | None:
    """``<id>`` for threading a reply after a received message's Message-ID, or None when
    it has none we can repeat safely (not printable ASCII, or too long)."""
    if not message_id:
        return None
    bare = message_id.strip().strip("<>").strip()
    return f"<{bare}>" if _MESSAGE_ID.fullmatch(bare) else None


def _bracketed(value: str, what: str) -> str:
    bare = value.strip().strip("<>").strip()
    if not _MESSAGE_ID.fullmatch(bare):
        raise ValueError(f"not a Message-ID for {what}: {value!r}")
    return f"<{bare}>"


def _address(addr: str, name: str | None, what: str) -> Address:
    """``addr`` with ``name`` cleaned (`pbem.names.clean_name`: one line of visible text,
    no encoded-word markers). Raises ValueError unless ``addr`` is a plain ASCII address
    (`pbem.mail.address.is_valid_address`)."""
    if not is_valid_address(addr):
        raise ValueError(f"not a valid {what} address: {addr!r}")
    local, _, domain = addr.rpartition("@")
    shown = clean_name(name or "", _DISPLAY_NAME_MAX)
    return Address(display_name=shown, username=local, domain=domain)


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


def _format_address(addr: Address, field: str) -> str:
    """The value of the address header ``field``: the address alone, or the display name
    (a quoted string when it holds specials; RFC 2047 encoded-words, folded, when it is
    not ASCII) and the address in angle brackets, on a line of its own when the line
    would pass 78 characters. The address is plain ASCII (`_address` checked it), so
    this never raises."""
    bare = f"{addr.username}@{addr.domain}"
    if not addr.display_name:
        return bare
    if addr.display_name.isascii():
        name = formataddr((addr.display_name, bare)).rpartition(" <")[0]
    else:
        name = Header(addr.display_name, "utf-8", header_name=field).encode(linesep="\r\n")
    _, folded, last = name.rpartition("\r\n")
    used = len(last) if folded else len(field) + 2 + len(name)
    if used + len(bare) + 3 <= 78:
        return f"{name} <{bare}>"
    return f"{name}\r\n <{bare}>"


def _header(name: str, value: str) -> str:
    """``Name: value``, RFC 2047-encoded and folded when needed (no line over 78)."""
    line = f"{name}: {value}"
    # Plain ASCII goes as it is, but for text that looks like an encoded-word ("=?"),
    # which a reader would decode: that is encoded, so it reads back as written.
    if value.isascii() and "=?" not in value and len(line) <= 78:
        return line
    if value.isascii() and "=?" not in value:
        return f"{name}: " + Header(value, "us-ascii", header_name=name).encode(linesep="\r\n")
    return f"{name}: " + "\r\n ".join(_encoded_words(value, 78 - len(name) - 2))


# Characters an RFC 2047 "Q" encoded-word may carry as they are in unstructured text.
_Q_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!*+-/")
_Q_BYTE = {b: chr(b) if b in _Q_SAFE else "_" if b == 0x20 else f"={b:02X}" for b in range(256)}
_WORD_OVERHEAD = len("=?utf-8?q??=")
_Q_CHAR: dict[str, str] = {}


def _q_char(char: str) -> str:
    encoded = "".join(_Q_BYTE[b] for b in char.encode("utf-8"))
    if len(_Q_CHAR) < 4096:
        _Q_CHAR[char] = encoded
    return encoded


def _encoded_words(value: str, first_room: int) -> list[str]:
    """``value`` as RFC 2047 encoded-words (UTF-8, "Q"), one per folded line, each at
    most 75 characters long (the first at most ``first_room``), never splitting a
    character's bytes."""
    words: list[str] = []
    room = min(first_room, 75) - _WORD_OVERHEAD
    current: list[str] = []
    used = 0
    for char in value:
        encoded = _Q_CHAR.get(char) or _q_char(char)
        if used + len(encoded) > room and current:
            words.append("=?utf-8?q?" + "".join(current) + "?=")
            current, used, room = [], 0, 75 - _WORD_OVERHEAD
        current.append(encoded)
        used += len(encoded)
    words.append("=?utf-8?q?" + "".join(current) + "?=")
    return words


def _text_part(text: str, subtype: str, texts: list[str]) -> bytes:
    """A text part; ``texts`` gets the text as its reader sees it."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.endswith("\n"):
        text += "\n"
    texts.append(text)
    lines = text.split("\n")[:-1] if text.isascii() else None
    if lines is not None and all(len(line) <= 78 for line in lines):
        cte = "7bit"
        payload = "".join(line + "\r\n" for line in lines).encode("ascii")
    else:
        cte, payload = _smaller_encoding(text.encode("utf-8"), text=True)
    head = (
        f'Content-Type: text/{subtype}; charset="utf-8"\r\nContent-Transfer-Encoding: {cte}\r\n\r\n'
    )
    return head.encode("ascii") + payload


def _quoted_printable(data: bytes, text: bool) -> bytes:
    """``data`` quoted-printable, in lines of at most 76 characters ending in CRLF. Text
    keeps its line breaks (as CRLF); other data has its CR and LF bytes encoded."""
    if text:
        encoded = binascii.b2a_qp(data.replace(b"\r\n", b"\n"))
        return encoded.replace(b"\n", b"\r\n") + (b"" if encoded.endswith(b"\n") else b"\r\n")
    encoded = binascii.b2a_qp(data, istext=False)  # soft breaks only: "=\n"
    # The data ends on a soft break: the line break before the boundary is not data.
    return encoded.replace(b"\n", b"\r\n") + b"=\r\n"


def _smaller_encoding(data: bytes, *, text: bool) -> tuple[str, bytes]:
    """(Content-Transfer-Encoding, payload): quoted-printable or base64, whichever is
    smaller for ``data`` (mostly ASCII text and markup: quoted-printable; text full of
    non-ASCII characters, such as a peg board: base64)."""
    b64 = _base64_lines(data)
    # Quoted-printable costs up to three characters a byte: base64 wins outright when
    # more than a sixth of the bytes would be escaped.
    escaped = len(data) - len(data.decode("ascii", "ignore")) if text else 0
    if escaped * 3 > len(b64):
        return "base64", b64
    qp = _quoted_printable(data, text)
    return ("quoted-printable", qp) if len(qp) < len(b64) else ("base64", b64)


def _base64_lines(data: bytes) -> bytes:
    """``data`` in base64, in lines of 76 characters each ending in CRLF."""
    encoded = binascii.b2a_base64(data, newline=False)
    return b"".join([encoded[i : i + 76] + b"\r\n" for i in range(0, len(encoded), 76)])


_TEXT_ATTACHMENTS = {"application/json", "application/xml", "application/javascript"}
"""Attachments that are text though their type is not ``text/*``: they name a charset."""


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _attachment(filename: str, maintype: str, subtype: str, data: bytes) -> bytes:
    name = filename if filename.isascii() else "attachment"
    cte, encoded = _smaller_encoding(data, text=False)
    content_type = f"{maintype}/{subtype}"
    if (maintype == "text" or content_type in _TEXT_ATTACHMENTS) and _is_utf8(data):
        # Text the service made is UTF-8: a client that previews it by its MIME
        # charset must not guess another.
        content_type += '; charset="utf-8"'
    head = (
        f"Content-Type: {content_type}\r\n"
        f"Content-Transfer-Encoding: {cte}\r\n"
        f'Content-Disposition: attachment; filename="{name}"\r\n\r\n'
    )
    return head.encode("ascii") + encoded


def _multipart(subtype: str, parts: list[bytes]) -> bytes:
    # "=_" never occurs in quoted-printable or base64 text, so the boundary cannot either.
    boundary = "=_" + secrets.token_hex(8)
    out = [f'Content-Type: multipart/{subtype};\r\n boundary="{boundary}"\r\n\r\n'.encode()]
    for part in parts:
        out.append(f"--{boundary}\r\n".encode())
        # The line break before a boundary belongs to the boundary (RFC 2046).
        out.append(part + b"\r\n")
    out.append(f"--{boundary}--\r\n".encode())
    return b"".join(out)


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
    parts: str = "both",
) -> bytes:
    """One outgoing message as SMTP-ready bytes (CRLF line ends, no line over 78 octets
    except for long Message-IDs, which are never split, and none near 998).

    With ``html`` the body is multipart/alternative (text/plain then text/html,
    both UTF-8); without it, a single text/plain part. ASCII text with short lines is
    7bit; other text, and attachments, quoted-printable or base64, whichever is smaller.
    A non-ASCII subject or name is RFC 2047-encoded, and so is a subject holding "=?"
    (so that it reads back as written); display names are cleaned first
    (`pbem.names.clean_name`). Every message carries ``Auto-Submitted:
    auto-generated`` (so well-behaved autoresponders stay silent) and
    ``X-PBEM-Loop: loop_value`` (so we recognise our own mail coming back).
    ``References`` keeps the first and the newest ids, at most
    :data:`MAX_REFERENCES`. ``date`` defaults to now (UTC); a naive datetime is
    taken as UTC. ``extra_headers`` adds headers but cannot replace the ones
    above. ``attachments`` are ``(filename, "type/subtype", data)`` triples,
    sent after the body in a multipart/mixed (readers ignore them). ``parts`` is the
    recipient's choice of body parts: ``"both"`` as above, ``"text"`` the text/plain part
    only, ``"html"`` the text/html part only (a mail with no ``html`` keeps its text).

    The bytes come with the mailboxes the message names (a `pbem.mail.named.NamedMail`),
    found in what it is made of, so that storing it parses nothing (but a message with
    an attached message, which is parsed as usual).

    Raises ValueError on an invalid address, Message-ID, header name or content
    type, an empty ``loop_value``, or ``parts`` not one of both, text, html.
    """
    if parts not in ("both", "text", "html"):
        raise ValueError(f"not a choice of parts: {parts!r}")
    if not loop_value.strip():
        raise ValueError("compose needs a loop value for the X-PBEM-Loop header")
    from_addr = _address(sender, sender_name, "sender")
    to_addr = _address(to, to_name, "recipient")
    reply_addr = _address(reply_to, sender_name, "reply-to") if reply_to else None
    when = date or datetime.now(UTC)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    own_id = _bracketed(message_id, "this message")
    refs = _trim_references([_bracketed(ref, "References") for ref in references])
    headers: list[str] = [
        f"From: {_format_address(from_addr, 'From')}",
        f"To: {_format_address(to_addr, 'To')}",
    ]
    if reply_addr is not None:
        headers.append(f"Reply-To: {_format_address(reply_addr, 'Reply-To')}")
    headers += [
        _header("Subject", _one_line(subject)),
        f"Date: {format_datetime(when)}",
        f"Message-ID: {own_id}",
    ]
    if in_reply_to:
        headers.append(f"In-Reply-To: {_bracketed(in_reply_to, 'In-Reply-To')}")
    if refs:
        headers.append("References: " + "\r\n ".join(refs))
    headers += ["Auto-Submitted: auto-generated", _header(LOOP_HEADER, _one_line(loop_value))]
    for name, value in (extra_headers or {}).items():
        if not _HEADER_NAME.fullmatch(name) or name.lower() in _RESERVED:
            raise ValueError(f"cannot add header {name!r}")
        headers.append(_header(name, _one_line(value)))
    headers.append("MIME-Version: 1.0")
    # What a reader of each part sees, for the mailboxes the message names.
    seen: list[tuple[str, str]] = [_split_header(line) for line in headers]
    texts: list[str] = []
    if html is not None and parts == "html":
        body = _text_part(html, "html", texts)
    elif html is not None and parts == "both":
        body = _multipart(
            "alternative", [_text_part(text, "plain", texts), _text_part(html, "html", texts)]
        )
    else:
        body = _text_part(text, "plain", texts)
    known = True  # whether the mailboxes found are all the message names
    if attachments:
        mixed = [body]
        for filename, content_type, data in attachments:
            maintype, slash, subtype = content_type.partition("/")
            if (
                not slash
                or not _HEADER_NAME.fullmatch(maintype)
                or not _HEADER_NAME.fullmatch(subtype)
            ):
                raise ValueError(f"not a content type for {filename!r}: {content_type!r}")
            part = _attachment(_one_line(filename), maintype, subtype, bytes(data))
            mixed.append(part)
            head = part.split(b"\r\n\r\n", 1)[0].decode("ascii")
            seen += [_split_header(line) for line in head.split("\r\n")]
            if maintype.lower() == "text":
                texts.append(bytes(data).decode("utf-8", "replace"))
            # An attached message or multipart is read as the parts it holds: parsed.
            known = known and maintype.lower() not in ("message", "multipart")
        body = _multipart("mixed", mixed)
    raw = ("\r\n".join(headers) + "\r\n").encode("ascii") + body
    return NamedMail(raw, mailboxes_in(seen, texts)) if known else raw


def _split_header(line: str) -> tuple[str, str]:
    """A header line ``Name: value`` as (name, value)."""
    name, _, value = line.partition(":")
    return name, value.lstrip()
