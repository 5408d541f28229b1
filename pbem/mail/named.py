"""The mailboxes a stored mail names, for the index of stored mail by address.

`named_mailboxes` finds every address in a raw message: in its headers (RFC 2047 words
decoded; not the ids of Message-ID, References and the like, which read like addresses)
and in each text part once its transfer encoding is undone (base64 and quoted-printable
hide an address from a byte search), but the service's own (every mail names it). Each
is folded as the policy folds mailboxes (lowercase, no ``+tag``), so ``pbem player
forget`` finds a player's mail by their mailbox alone. A message that names more than `MAX_NAMED`
mailboxes is marked `MANY` instead of listed: forgetting anyone reads it. Never raises.

A mail the service composed (`pbem.mail.compose`) or read already (`pbem.mail.reading`)
comes as `NamedMail`: its bytes with the mailboxes found where it was made, so indexing
it parses nothing again (`named_mailboxes` takes them as they are).
"""

from __future__ import annotations

import email
import email.policy
import re
from collections.abc import Collection, Iterable
from email.message import Message
from email.policy import compat32

__all__ = [
    "MANY",
    "MAX_NAMED",
    "NamedMail",
    "fold_mailbox",
    "mailboxes_in",
    "named_in_message",
    "named_mailboxes",
]

MAX_NAMED = 200
"""The most mailboxes listed for one message; past that it is indexed as `MANY`."""
MANY = "*"
"""The index's key of a message that names too many mailboxes to list."""
MAILBOX_MAX = 254
"""The longest address kept (RFC 5321); anything longer is no mailbox we could mail."""

_ADDRESS = re.compile(
    r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}[A-Za-z0-9])?"
)
_ESCAPE = re.compile(r"\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}")
_ENCODED_WORD = re.compile(r"=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=")


def fold_mailbox(address: str) -> str:
    """``address`` folded as a mailbox: lowercase, without a ``+tag`` (as
    `pbem.service.policy.mailbox_of` folds it)."""
    local, at, domain = address.strip().lower().rpartition("@")
    if not at:
        return address.strip().lower()
    base = local.split("+", 1)[0]
    return (base or local) + at + domain


# The characters of a local part, and the run of them (and of "@") around an "@".
_LOCAL = "A-Za-z0-9!#$%&'*+/=?^_`{|}~.-"
_BEFORE = re.compile(f"[{_LOCAL}]{{0,64}}\\Z")
_AFTER = re.compile(f"[@{_LOCAL}]*")


def _found(text: str, into: set[str]) -> None:
    """Add the addresses of ``text`` to ``into``: `_ADDRESS`'s matches over the whole text,
    looked for only in the runs of address characters around each "@" (no match can
    start more than 64 characters before the first "@" of its run, or end past it)."""
    text = _ESCAPE.sub(" ", text)  # "\u003calice@…" in JSON is "<alice@…"
    at = text.find("@")
    while at >= 0:
        start = _BEFORE.search(text, max(0, at - 64), at)
        end = _AFTER.match(text, at + 1)
        assert start is not None and end is not None  # (both may match nothing)
        for match in _ADDRESS.finditer(text, start.start(), end.end()):
            address = match.group(0).strip(".")
            if "@" in address and len(address) <= MAILBOX_MAX:
                into.add(fold_mailbox(address))
        at = text.find("@", end.end())


ID_HEADERS = frozenset(
    {"message-id", "in-reply-to", "references", "list-id", "content-id", "resent-message-id"}
)
"""Headers of ids, not addresses (a Message-ID reads like one): not indexed."""


class NamedMail(bytes):
    """The bytes of a mail with the mailboxes it names (``named``: folded, the service's
    own among them, as `named_in_message` finds them), found where the mail was made or
    read. Any change to the bytes gives plain bytes, which are parsed again."""

    named: frozenset[str] = frozenset()

    def __new__(cls, raw: bytes, named: Iterable[str] = ()) -> NamedMail:
        mail = super().__new__(cls, raw)
        mail.named = frozenset(named)
        return mail


def _header_texts(items: Iterable[tuple[str, object]]) -> Iterable[str]:
    """Each header's value (but `ID_HEADERS`), its RFC 2047 words decoded."""
    from pbem.mail.decoding import decode_rfc2047

    for name, value in items:
        if name.lower() in ID_HEADERS:
            continue
        text = str(value)
        yield _ENCODED_WORD.sub(" ", text)  # an encoded word's letters are no address
        for word in _ENCODED_WORD.findall(text):
            yield decode_rfc2047(word)


def mailboxes_in(headers: Iterable[tuple[str, str]], texts: Iterable[str]) -> set[str]:
    """The mailboxes (folded) named by ``headers`` (name, value as written: RFC 2047 words
    are decoded here) and by ``texts`` (the text parts as their readers see them): what
    `named_mailboxes` finds in a mail made of them."""
    found: set[str] = set()
    for text in _header_texts(headers):
        _found(text, found)
    for text in texts:
        _found(text, found)
    return found


def named_in_message(msg: Message, found: set[str] | None = None) -> set[str]:
    """Every mailbox (folded) the parsed message ``msg`` names, added to ``found``: in the
    headers of each of its parts and in each text part, its transfer encoding undone.
    Raises what the message's parts raise when they cannot be read (``found`` then
    holds what was found before)."""
    found = set() if found is None else found
    for part in msg.walk():
        # Each value as compat32 gives it, whatever policy ``msg`` was parsed with.
        items = [(k, compat32.header_fetch_parse(k, v)) for k, v in part.raw_items()]
        for text in _header_texts(items):
            _found(text, found)
        if part.is_multipart() or part.get_content_maintype() not in ("text", "message"):
            continue
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            try:
                _found(payload.decode(part.get_content_charset() or "utf-8", "replace"), found)
            except LookupError:  # a charset Python does not know
                _found(payload.decode("utf-8", "replace"), found)
    return found


def named_mailboxes(raw: bytes, own: Collection[str] = ()) -> set[str]:
    """Every mailbox ``raw`` names (folded), but those of ``own`` (the service's own
    address: every mail names it), or ``{MANY}`` past `MAX_NAMED` of them. A `NamedMail`
    is not parsed again."""
    if isinstance(raw, NamedMail):
        found = set(raw.named)
    else:
        found = set()
        try:
            named_in_message(email.message_from_bytes(raw, policy=email.policy.compat32), found)
        except Exception:  # a message too broken to parse: what a byte search finds
            _found(raw.decode("utf-8", "replace"), found)
    found.difference_update(fold_mailbox(box) for box in own)
    if len(found) > MAX_NAMED:
        return {MANY}
    return found
