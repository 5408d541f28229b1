"""Text that a database column can hold, whatever a sender put in it.

PostgreSQL refuses NUL in a text column, and neither backend can hold lone surrogates
(what ``surrogateescape`` decoding leaves of undecodable bytes) in UTF-8; a huge value
would make a btree index refuse the row. Every text column filled from received mail
(sender, subject, reason, display name, bounce reason, deduplication key) goes through
`db_text`, so no value a sender controls can make an INSERT or UPDATE fail.
"""

from __future__ import annotations

import hashlib
import re

__all__ = [
    "KEY_MAX",
    "LINE_MAX",
    "NAME_MAX",
    "REASON_MAX",
    "SENDER_MAX",
    "db_key",
    "db_text",
]

SENDER_MAX = 320
"""An address column (an RFC 5321 path is at most 256; a little room for anything odd)."""
NAME_MAX = 200
"""A display name."""
LINE_MAX = 998
"""A subject: the RFC 5322 line limit."""
REASON_MAX = 4000
"""A reason or an error kept for the admin (a traceback's last frames)."""
KEY_MAX = 500
"""A deduplication key kept as it is; longer ones are hashed (a btree index entry on
PostgreSQL holds at most about 2.7 kB)."""

# C0 controls but tab, DEL, and lone surrogates (which no UTF-8 database can store).
_MULTI_LINE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ONE_LINE = re.compile("[\x00-\x08\x0a-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def db_text(value: str | None, limit: int, *, multiline: bool = False) -> str | None:
    """``value`` made storable: C0 controls but tab (and, with ``multiline``, newline and
    carriage return) and DEL removed, lone surrogates replaced by U+FFFD, cut to ``limit``
    characters (ending in "…" when cut). None stays None; never raises."""
    if value is None:
        return None
    text = (_MULTI_LINE if multiline else _ONE_LINE).sub("", value)
    text = _SURROGATE.sub("\ufffd", text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def db_key(key: str) -> str:
    """A deduplication key made storable: kept when it is short printable text, else
    ``sha256:`` of it (so two deliveries of one odd Message-ID still meet)."""
    if len(key) <= KEY_MAX and db_text(key, KEY_MAX) == key:
        return key
    return "sha256:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
