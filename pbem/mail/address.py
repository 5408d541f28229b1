"""Email addresses: normalizing what arrives and checking what an admin types in."""

from __future__ import annotations

import re
from email import errors, policy
from email.utils import getaddresses, parseaddr
from functools import lru_cache
from typing import Any

from pbem.mail.decoding import decode_rfc2047

__all__ = [
    "from_mailbox",
    "is_valid_address",
    "normalize_address",
    "parse_addresses",
    "without_tag",
]

_LOCAL_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LOCAL = re.compile(rf"{_LOCAL_ATOM}(?:\.{_LOCAL_ATOM})*")
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")


@lru_cache(maxsize=4096)  # the stdlib's address parser is slow; the same values recur
def normalize_address(value: str | None) -> str:
    """The bare address in ``value`` ("Bob <Bob@Example.org>" → "bob@example.org").

    Display names, angle brackets, comments and surrounding whitespace go; the
    whole address is lowercased (local parts are case-insensitive at every
    provider that matters). Returns "" when ``value`` holds no address.
    """
    if not value:
        return ""
    _, addr = parseaddr(value.strip())
    addr = addr.strip().strip("<>").strip()
    if not addr and "@" in value and "<" not in value:
        addr = value.strip()
    return addr.lower() if "@" in addr or addr.lower() in ("mailer-daemon", "postmaster") else ""


def is_valid_address(value: str) -> bool:
    """Whether ``value`` is one plain address ``local@domain`` we can send to.

    Accepts dot-atom local parts and domains of letters, digits and hyphens, including
    single-label ones such as ``localhost`` used on a test mail stack, all in plain
    ASCII: an international domain is written in its ``xn--`` form, and an address with
    other characters (which needs SMTPUTF8, and which no header of ours could carry) is
    refused. Rejects display names, quoted local parts, IP literals, whitespace and
    anything over the RFC 5321 lengths.
    """
    if not value or len(value) > 254 or value != value.strip() or not value.isascii():
        return False
    local, at, domain = value.rpartition("@")
    if not at or not local or not domain or len(local) > 64:
        return False
    if not _LOCAL.fullmatch(local):
        return False
    labels = domain.rstrip(".").split(".") if not domain.endswith("..") else [""]
    return all(_LABEL.fullmatch(label) for label in labels)


def parse_addresses(values: list[str]) -> list[tuple[str, str]]:
    """Split raw address header values into ``(display name, normalized address)``.

    ``values`` are raw header values with RFC 2047 words still encoded; names are
    decoded after the split so that an encoded comma cannot split an address.
    Entries without an address are dropped; duplicates keep their first place.
    """
    return list(_parse_addresses(tuple(values)))


@lru_cache(maxsize=4096)
def _parse_addresses(values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    seen: set[str] = set()
    result: list[tuple[str, str]] = []
    for name, addr in getaddresses(values):
        normalized = normalize_address(addr) if addr else ""
        if not normalized or normalized in seen:
            continue
        seen.add(normalized)
        result.append((decode_rfc2047(name).strip(), normalized))
    return tuple(result)


def from_mailbox(values: list[str]) -> tuple[str, str, str | None]:
    """The one mailbox of a message's From: ``(display name, normalized addr-spec,
    problem)``; the address is "" (and ``problem`` says why) unless it is unambiguous.

    ``values`` are the raw From header values (RFC 2047 words still encoded). Parsed
    strictly (the standard library's RFC 5322 header parser): the address is the
    addr-spec, never the display name ("a@x.test <eve@evil.test>" is not a@x.test), and
    no From header, several From headers, several mailboxes, a group, an address the
    parser had to guess (an invalid header) or one that is not a plain ``local@domain``
    gives no address.
    """
    return _from_mailbox(tuple(values))


# Longer than any one mailbox with a display name (an address is at most 254): not read,
# so a huge header neither costs parsing time nor fills the cache.
_FROM_MAX = 1000


_NAME_IS_ADDRESS = re.compile(r"\s*(?P<name>[^<>\"]+?)\s*<(?P<addr>[^<>\"]+)>\s*")


@lru_cache(maxsize=4096)
def _from_mailbox(values: tuple[str, ...]) -> tuple[str, str, str | None]:
    if not values:
        return "", "", "no sender address"
    if len(values) > 1:
        return "", "", f"ambiguous sender: {len(values)} From headers"
    if len(values[0]) > _FROM_MAX:
        return "", "", "the From header is too long"
    value = values[0]
    same = _NAME_IS_ADDRESS.fullmatch(value)
    if same and same["name"].strip().lower() == same["addr"].strip().lower():
        # "a@x.test <a@x.test>": invalid (an unquoted "@" in the name), as some clients
        # write it, but not ambiguous: the name is the address itself.
        value = f"<{same['addr'].strip()}>"
    try:
        header: Any = policy.default.header_factory("From", value)
        groups = header.groups
        defects = header.defects
    except Exception as exc:  # the parser is meant never to raise; be sure
        return "", "", f"unreadable From header ({type(exc).__name__})"
    mailboxes = [address for group in groups for address in group.addresses]
    if len(mailboxes) != 1:
        return "", "", f"ambiguous sender: {len(mailboxes)} addresses in From"
    if groups[0].display_name is not None:
        return "", "", "ambiguous sender: a group in From"
    if any(isinstance(defect, errors.InvalidHeaderDefect) for defect in defects):
        return "", "", "ambiguous sender: the From header is not a valid address"
    address = mailboxes[0].addr_spec.strip().lower()
    if not is_valid_address(address):
        return "", "", "the From address is not a plain address"
    return mailboxes[0].display_name.strip(), address, None


def without_tag(address: str) -> str:
    """``address`` without a sub-address tag: "a+games@x.test" → "a@x.test" (an address
    without one, or whose local part is only a tag, is returned as it is)."""
    local, at, domain = address.rpartition("@")
    base = local.split("+", 1)[0]
    return base + at + domain if at and base else address
