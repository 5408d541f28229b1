"""Replacing a person's traces in stored text and mail (for ``pbem player forget``).

`Traces` holds what names a person — their addresses (any ``+tag`` of their mailbox
included, any case), their display names (whole words, as written and as HTML writes
them) and the Message-IDs of their mails — each with the pseudonym that replaces it.
`scrub_message` rewrites a raw message: every header (RFC 2047 words decoded first),
every text part (its transfer encoding undone first; written back in base64), and what
is left between the parts; a part that is not text but holds a trace, or HTML that holds
one only in character references, is emptied. No I/O.
"""

from __future__ import annotations

import base64
import email
import email.policy
import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from email.header import Header, decode_header, make_header
from email.message import Message

_TEXT_TYPES = {"application/json", "application/xml", "application/javascript"}
_MIN_NAME = 3
"""Shorter display names are not replaced in text (they would hit common words)."""


@dataclass(frozen=True)
class Traces:
    """Patterns naming one person, each with its replacement, applied in order."""

    pairs: tuple[tuple[re.Pattern[str], str], ...]

    @classmethod
    def build(
        cls,
        *,
        mailboxes: Iterable[str],
        address_to: str,
        names: Iterable[str],
        name_to: str,
        message_ids: Mapping[str, str],
    ) -> Traces:
        """Traces of the ``mailboxes`` (bare lowercase ``local@domain``; any ``+tag``
        of them matches too), the display ``names`` and the ``message_ids`` (id → its
        pseudonym, both without angle brackets)."""
        pairs: list[tuple[re.Pattern[str], str]] = []
        for old, new in sorted(message_ids.items(), key=lambda kv: -len(kv[0])):
            if old:
                pairs.append((re.compile(re.escape(old)), new))
        for box in sorted(set(mailboxes), key=len, reverse=True):
            local, _, domain = box.partition("@")
            if not local or not domain:
                continue
            pattern = (
                rf"(?<![\w.%+\-]){re.escape(local)}(?:\+[\w.%+\-=]*)?@{re.escape(domain)}(?![\w\-])"
            )
            pairs.append((re.compile(pattern, re.IGNORECASE), address_to))
        long_enough = [name for name in names if len(name.strip()) >= _MIN_NAME]
        written = {form for name in long_enough for form in _forms(name)}
        for name in sorted(written, key=len, reverse=True):
            pairs.append((re.compile(rf"(?<!\w){re.escape(name)}(?!\w)"), name_to))
        return cls(tuple(pairs))

    def text(self, value: str) -> str:
        """``value`` with every trace replaced."""
        for pattern, new in self.pairs:
            value = pattern.sub(new, value)
        return value

    def found(self, value: str) -> bool:
        """Whether ``value`` holds a trace."""
        return any(pattern.search(value) for pattern, _ in self.pairs)

    def json(self, value: object) -> object:
        """A JSON document with every string (keys too) scrubbed."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, dict):
            return {self.text(str(k)): self.json(v) for k, v in value.items()}
        return value


def _forms(name: str) -> set[str]:
    name = " ".join(name.split())
    return {name, html.escape(name), html.escape(name, quote=False)}


def scrub_message(raw: bytes, traces: Traces, *, keep_headers: Iterable[str] = ()) -> bytes:
    """``raw`` with every trace replaced (``raw`` itself when it holds none). With
    ``keep_headers``, the top-level headers not named in it are dropped first (a
    forgotten player's own mail loses its Received lines, signatures and the like)."""
    msg = email.message_from_bytes(raw, policy=email.policy.compat32)
    keep = {name.lower() for name in keep_headers}
    changed = False
    if keep:
        for name in {n.lower() for n in msg} - keep:
            del msg[name]
            changed = True
    for part in msg.walk():
        changed |= _scrub_headers(part, traces)
        if not part.is_multipart():
            changed |= _scrub_payload(part, traces)
        else:
            for attr in ("preamble", "epilogue"):
                extra = getattr(part, attr)
                if isinstance(extra, str) and traces.found(extra):
                    setattr(part, attr, traces.text(extra))
                    changed = True
    out = msg.as_bytes(policy=email.policy.compat32) if changed else raw
    loose = out.decode("latin-1")  # a last pass over what the parser left as it was
    if traces.found(loose):
        out = traces.text(loose).encode("latin-1", "replace")
    return out


def _decoded(value: str) -> str:
    try:
        return str(make_header(decode_header(value)))
    except (ValueError, LookupError, UnicodeError):
        return value


def _scrub_headers(part: Message, traces: Traces) -> bool:
    items = list(part.raw_items())
    fixed: list[tuple[str, str]] = []
    changed = False
    for name, value in items:
        text = _decoded(str(value))
        if traces.found(text):
            new = traces.text(text)
            value = new if new.isascii() else Header(new, "utf-8").encode()
            changed = True
        fixed.append((name, str(value)))
    if changed:
        for name in {n.lower() for n, _ in items}:
            del part[name]
        for name, value in fixed:
            part[name] = value
    return changed


def _scrub_payload(part: Message, traces: Traces) -> bool:
    data = part.get_payload(decode=True)
    if not isinstance(data, bytes):
        return False
    kind = part.get_content_type()
    if part.get_content_maintype() == "text" or kind in _TEXT_TYPES:
        charset = part.get_content_charset() or "utf-8"
        try:
            text = data.decode(charset, "replace")
        except LookupError:
            charset, text = "utf-8", data.decode("utf-8", "replace")
        new = traces.text(text)
        if kind == "text/html" and traces.found(html.unescape(new)):
            # A trace hidden in character references ("&Oslash;"): the part goes.
            new = "(removed: it named a forgotten player)\n"
        if new == text:
            return False
        try:
            body = new.encode(charset)
        except (UnicodeError, LookupError):
            body = new.encode("utf-8")
            part.set_param("charset", "utf-8")
    else:
        if not traces.found(data.decode("latin-1")):
            return False
        body = b"(removed: it named a forgotten player)\n"
        part.set_type("text/plain")
    del part["Content-Transfer-Encoding"]
    part.set_payload(base64.encodebytes(body).decode("ascii"))
    part["Content-Transfer-Encoding"] = "base64"
    return True
