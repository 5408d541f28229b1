"""Reading an inbound message: from raw bytes to the few things the service needs.

:func:`read_message` never raises: a message that cannot be read properly still
becomes an :class:`IncomingMail`, with what could be recovered and a
``problem`` saying what went wrong, so the service can log and shunt it instead
of losing it.
"""

from __future__ import annotations

import email
import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from email.message import Message
from email.policy import compat32
from email.utils import parsedate_to_datetime

from pbem.mail.address import from_mailbox, parse_addresses
from pbem.mail.autoreply import AutoKind, BounceInfo, bounce_details, classify, message_ids
from pbem.mail.decoding import (
    RAW_POLICY,
    header_text,
    html_to_text,
    part_text,
    printable,
    raw_headers,
)
from pbem.mail.named import NamedMail, named_in_message
from pbem.mail.quotes import strip_quoted
from pbem.names import NAME_LIMIT, clean_name

__all__ = [
    "FirstRead",
    "IncomingMail",
    "clean_subject",
    "find_body",
    "is_own_subject",
    "read_message",
    "read_received",
    "reply_subject",
    "stored_headers",
]


@dataclass(frozen=True)
class IncomingMail:
    """One inbound message as the service sees it.

    Addresses are normalized (bare, lowercased); Message-IDs have no angle
    brackets; ``sender_name``, the From's display name, is cleaned
    (`pbem.names.clean_name`, at most `pbem.names.NAME_LIMIT` characters). ``body`` is
    the whole decoded text (text/plain preferred, else the HTML converted to text);
    ``reply_text`` is what the sender wrote, with quoted history, attribution,
    signature and mobile footer removed. ``auto``
    names the machine that sent the message, if any, with ``auto_reason``;
    ``bounce`` is filled for bounces. ``problem`` is None for a readable message.
    ``auth_results`` holds the raw Authentication-Results values, topmost first.
    """

    message_id: str | None
    sender: str
    sender_name: str
    reply_to: str | None
    to: tuple[str, ...]
    cc: tuple[str, ...]
    delivered_to: tuple[str, ...]
    original_to: tuple[str, ...]
    return_path: str | None
    subject: str
    in_reply_to: tuple[str, ...]
    references: tuple[str, ...]
    date: datetime | None
    body: str
    reply_text: str
    auto: AutoKind | None = None
    auto_reason: str = ""
    bounce: BounceInfo | None = None
    problem: str | None = None
    auth_results: tuple[str, ...] = ()


def _empty(problem: str) -> IncomingMail:
    return IncomingMail(
        message_id=None,
        sender="",
        sender_name="",
        reply_to=None,
        to=(),
        cc=(),
        delivered_to=(),
        original_to=(),
        return_path=None,
        subject="",
        in_reply_to=(),
        references=(),
        date=None,
        body="",
        reply_text="",
        problem=problem,
    )


def _is_attachment(part: Message) -> bool:
    disposition = (part.get("Content-Disposition") or "").split(";", 1)[0].strip().lower()
    if disposition == "attachment":
        return True
    try:
        return part.get_filename() is not None
    except Exception:
        return True


def _leaf_body(part: Message) -> tuple[str, str] | None:
    ctype = part.get_content_type()
    if ctype == "text/plain":
        return "plain", part_text(part)
    if ctype == "text/html":
        return "html", html_to_text(part_text(part))
    return None


def find_body(msg: Message) -> tuple[str, str] | None:
    """The readable text of ``msg`` as ``(kind, text)`` with kind "plain" or "html".

    multipart/alternative prefers a non-blank text/plain part and falls back to
    HTML converted to text; multipart/mixed joins its inline text parts (Apple
    Mail splits a body around an inline image); other multiparts (related,
    signed, report) use their first readable part. Attachments and attached
    messages are ignored. None when nothing readable is found.
    """
    return _find_body(msg, top=True)


def _find_body(part: Message, top: bool = False) -> tuple[str, str] | None:
    if not top and (_is_attachment(part) or part.get_content_maintype() == "message"):
        return None  # attachments and attached (forwarded, bounced) messages
    if not part.is_multipart():
        if part.get_content_maintype() == "multipart":
            # a multipart whose boundary never appears: its text is all there is
            return "plain", part_text(part)
        return _leaf_body(part)
    children = [p for p in part.get_payload() if isinstance(p, Message)]
    subtype = part.get_content_subtype()
    if subtype == "alternative":
        found = [b for b in (_find_body(c) for c in children) if b is not None]
        for kind in ("plain", "html"):
            for body_kind, text in found:
                if body_kind == kind and text.strip():
                    return body_kind, text
        return found[0] if found else None
    if subtype == "mixed":
        bodies = [b for b in (_find_body(c) for c in children) if b is not None and b[1].strip()]
        if not bodies:
            return None
        kind = "plain" if all(k == "plain" for k, _ in bodies) else "html"
        return kind, "\n".join(text for _, text in bodies)
    for child in children:
        body = _find_body(child)
        if body is not None:
            return body
    return None


_SUBJECT_PREFIX = re.compile(
    r"^\s*(?:(?:re|fwd?|aw|wg|sv|vs|vb|antw|antwort|rif|r|i|tr|réf|ref|enc|res|odp|pd|yml"
    r"|fs|atb|ynt|πρθ|отв|ответ|回复|转发|答复)"
    r"\s*(?:\[\d+\]|\(\d+\)|\^\d+)?\s*[:：]\s*)",
    re.I,
)


def clean_subject(subject: str, tag: str = "Cribbage") -> str:
    """The subject without reply/forward prefixes and our ``[Cribbage N]`` tag.

    Strips any mix and repetition of "Re:", "RE[2]:", "Fwd:", "FW:", "AW:",
    "WG:", "SV:", "VS:", "Antw:", "R:", "TR:", "Odp:" … and a ``[tag]`` or
    ``[tag N]`` anywhere among them; collapses whitespace.
    "Re: AW: [Cribbage 12] Re: play 7♣" → "play 7♣".
    """
    tag_pattern = re.compile(rf"^\s*\[\s*{re.escape(tag)}(?:\s*#?\s*\d+)?\s*\]\s*", re.I)
    text = " ".join((subject or "").split())
    while True:
        stripped = tag_pattern.sub("", _SUBJECT_PREFIX.sub("", text, count=1), count=1)
        if stripped == text:
            return text.strip()
        text = stripped


def _without_prefixes(subject: str) -> str:
    """The subject without reply/forward prefixes ("Re:", "AW:", "Fwd:" …), whitespace
    collapsed; our tag, when it follows them, stays."""
    text = " ".join((subject or "").split())
    while True:
        stripped = _SUBJECT_PREFIX.sub("", text, count=1)
        if stripped == text:
            return text.strip()
        text = stripped


# The state line our game mails carry after the tag ("Hand 3 — your turn: discard"): a
# reply whose client dropped the tag keeps it, and its "Hand" would read as "hand".
_OUR_STATE_SUBJECT = re.compile(r"^hand\s+\d+\b", re.I)


def is_own_subject(subject: str, tag: str = "Cribbage") -> bool:
    """Whether ``subject`` is one of the service's own subjects, or a reply to or forward
    of one: after its "Re:" / "Fwd:" / "AW:" … prefixes it starts with our ``[tag]`` or
    ``[tag N]`` (every subject the service writes does: "[Cribbage 12] Hint: your play",
    "[Cribbage] Standings"), or with a game mail's state line ("Hand 3 — …")."""
    text = _without_prefixes(subject)
    tag_pattern = re.compile(rf"^\[\s*{re.escape(tag)}(?:\s*#?\s*\d+)?\s*\]", re.I)
    return bool(tag_pattern.match(text) or _OUR_STATE_SUBJECT.match(text))


# What the game mails said after the tag before every mail of a game had its one
# Subject ("[Cribbage 12] Hint: your play"): a reply to one of them is never a command.
_OLD_GAME_SUBJECT = re.compile(
    r"^(?:hand\s+\d+\b|game\s+(?:over|paused|resumed|aborted)\b|hint:|watching\b|reminder\b"
    r"|table talk\b|the game's archive\b|the moves so far\b|your cut is in\b|please cut\b"
    r"|how to play by mail\b|your mail could not\b)",
    re.I,
)


def reply_subject(subject: str, tag: str = "Cribbage", sent: str = "") -> str:
    """What the writer of a mail may have put in its subject as a command: the subject
    without prefixes (`clean_subject`) — or "" when it is one of the service's own
    subjects or a reply to one (`is_own_subject`), which is never read as a command,
    whatever the writer added to it: a reply to "[Cribbage] Standings" asks for no
    standings. "Re: stop" → "stop"; "Re: [Cribbage] Standings" → "".

    ``sent``: the one Subject the service gives every mail of the game the mail answers
    ("[Cribbage 1] Nia v Computer"). A tagged subject that differs from it was edited by
    the writer, and is read: "Re: [Cribbage 1] discard 5D 5S" → "discard 5D 5S"; the
    Subject as sent, and what older game mails said after the tag ("Hand 3 — …",
    "Hint: your play"), never are.
    (`pbem.commands.parse_reply` reads it only when the body holds no command.)"""
    if sent:
        text = _without_prefixes(subject).casefold()
        given = " ".join(sent.split()).casefold()
        rest = clean_subject(subject, tag)
        if text == given or rest.casefold() == clean_subject(sent, tag).casefold():
            return ""
        tagged = re.match(rf"^\[\s*{re.escape(tag)}\s*#?\s*\d+\s*\]", text, re.I)
        if tagged:
            return "" if _OLD_GAME_SUBJECT.match(rest) else rest
    if is_own_subject(subject, tag):
        return ""
    return clean_subject(subject, tag)


def _date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _addresses(msg: Message, *names: str) -> tuple[str, ...]:
    values = [v for name in names for v in raw_headers(msg, name)]
    return tuple(address for _, address in parse_addresses(values))


def read_message(
    raw: bytes,
    *,
    our_addresses: Collection[str] = (),
    loop_value: str | None = None,
) -> IncomingMail:
    """Read one raw message (RFC 5322 bytes, CRLF or LF). Never raises.

    ``our_addresses`` and ``loop_value`` (the value of our ``X-PBEM-Loop``
    header) let the result flag our own mail coming back as ``AutoKind.LOOP``;
    without them, only a message carrying any ``X-PBEM-Loop`` header is.
    A message without a sender or a readable text body, or one that could not
    be parsed at all, has ``problem`` set.
    """
    if not raw or not raw.strip():
        return _empty("empty message")
    try:
        msg = email.message_from_bytes(raw, policy=RAW_POLICY)
    except Exception as exc:  # the parser is lenient; this is for the unforeseen
        return _empty(f"unparseable message: {type(exc).__name__}: {exc}")
    try:
        return _read(msg, frozenset(our_addresses), loop_value or "")
    except Exception as exc:
        return _empty(f"unreadable message: {type(exc).__name__}: {exc}")


def stored_headers(headers: Message) -> tuple[str | None, str | None, str | None]:
    """The sender, subject (at most 500 characters) and Message-ID that a received mail
    is stored with, from its parsed headers (whatever the policy: each value is taken
    as compat32 gives it). Raises what an unreadable header raises."""
    from pbem.mail.decoding import decode_rfc2047

    def values(name: str) -> list[str]:
        folded = name.lower()
        return [
            str(compat32.header_fetch_parse(k, v))
            for k, v in headers.raw_items()
            if k.lower() == folded
        ]

    sender = from_mailbox(values("From"))[1] or None
    subjects, ids = values("Subject"), values("Message-ID")
    subject = decode_rfc2047(subjects[0] if subjects else "")[:500] or None
    msg_id = (ids[0] if ids else "").strip() or None
    return sender, subject, msg_id


@dataclass(frozen=True)
class FirstRead:
    """A received mail read once, when it is stored: ``raw`` (its bytes, with the
    mailboxes it names: a `pbem.mail.named.NamedMail`), what it is stored with
    (`stored_headers`) and the mail as intake reads it (`read_message`)."""

    raw: bytes
    sender: str | None
    subject: str | None
    message_id: str | None
    mail: IncomingMail


def read_received(
    raw: bytes, *, our_addresses: Collection[str] = (), loop_value: str | None = None
) -> FirstRead | None:
    """``raw`` parsed once for everything storing and processing it needs: what
    `stored_headers`, `read_message` and `pbem.mail.named.named_mailboxes` would each find
    parsing it again. None when it cannot be parsed (each then reads it alone)."""
    if not raw or not raw.strip():
        return None
    try:
        msg = email.message_from_bytes(raw, policy=RAW_POLICY)
        sender, subject, msg_id = stored_headers(msg)
        named = named_in_message(msg)
        mail = _read(msg, frozenset(our_addresses), loop_value or "")
    except Exception:
        return None
    return FirstRead(NamedMail(raw, named), sender, subject, msg_id, mail)


def _read(msg: Message, our_addresses: frozenset[str], loop_value: str) -> IncomingMail:
    problems: list[str] = []
    from_values = raw_headers(msg, "From")
    # The sender is the one mailbox of the one From header, or nobody (see from_mailbox);
    # telling machines apart looks at the first address, however it is written.
    sender_name, sender, from_problem = from_mailbox(from_values)
    if from_problem is not None:
        problems.append(from_problem)
    senders = parse_addresses(from_values)
    first = senders[0][1] if senders else ""
    reply_to = _addresses(msg, "Reply-To")
    return_paths = _addresses(msg, "Return-Path")

    body = find_body(msg)
    text = printable(body[1]) if body is not None else ""
    if body is None or not text.strip():
        problems.append("no readable text body")

    auto, reason = classify(msg, sender or first, set(our_addresses), loop_value)
    bounce = bounce_details(msg) if auto is AutoKind.BOUNCE else None
    ids = message_ids(header_text(msg, "Message-ID"))
    return IncomingMail(
        message_id=ids[0] if ids else None,
        sender=sender,
        sender_name=clean_name(sender_name, NAME_LIMIT),
        reply_to=reply_to[0] if reply_to else None,
        to=_addresses(msg, "To"),
        cc=_addresses(msg, "Cc"),
        delivered_to=_addresses(msg, "Delivered-To", "Envelope-To", "X-Envelope-To"),
        original_to=_addresses(msg, "X-Original-To"),
        return_path=return_paths[0] if return_paths else None,
        subject=printable(header_text(msg, "Subject") or "").replace("\n", " "),
        in_reply_to=tuple(message_ids(header_text(msg, "In-Reply-To"))),
        references=tuple(message_ids(header_text(msg, "References"))),
        date=_date(header_text(msg, "Date")),
        body=text,
        reply_text=strip_quoted(text),
        auto=auto,
        auto_reason=reason,
        bounce=bounce,
        problem="; ".join(problems) or None,
        auth_results=tuple(raw_headers(msg, "Authentication-Results")),
    )
