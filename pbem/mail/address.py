"""Email addresses: normalizing what arrives and checking what an admin types in."""

from __future__ import annotations

import re
from email.utils import getaddresses, parseaddr
from functools import lru_cache

from pbem.mail.decoding import decode_rfc2047

__all__ = ["is_valid_address", "normalize_address", "parse_addresses"]

_LOCAL_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\U0010ffff-]+"
_LOCAL = re.compile(rf"{_LOCAL_ATOM}(?:\.{_LOCAL_ATOM})*")
_LABEL = re.compile(r"(?!-)[A-Za-z0-9\u0080-\U0010ffff-]{1,63}(?<!-)")


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

    Accepts dot-atom local parts (UTF-8 allowed) and domains of letters, digits
    and hyphens, including single-label ones such as ``localhost`` used on a
    test mail stack. Rejects display names, quoted local parts, IP literals,
    whitespace and anything over the RFC 5321 lengths.
    """
    if not value or len(value) > 254 or value != value.strip():
        return False
    local, at, domain = value.rpartition("@")
    if not at or not local or not domain or len(local.encode("utf-8")) > 64:
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
