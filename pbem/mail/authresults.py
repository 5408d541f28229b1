"""Whether the mail provider vouched for a message's From (RFC 8601 Authentication-Results).

Anyone can write an ``Authentication-Results`` header, so only those of the one server
the operator trusts count (its authserv-id, `Settings.trusted_authserv_id`), and of those
only the topmost: the provider adds its own above everything the message arrived with.

That header is the provider's, but much of what it says comes from the sender: the HELO
name (``smtp.helo=[192.0.2.1]``), the envelope sender (``smtp.mailfrom=<a@b.example>``),
the From domain, 8-bit text. So it is read here by a tolerant reader of RFC 8601's
grammar, and when even that cannot read it the mail is unproven — never is a header
further down with the same authserv-id read instead, as that one may be forged.

The authserv-id is read on its own (:func:`authserv_id_of`), leniently, from the start
of the value, so that the provider's header is known as its own however odd the rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = ["Verdict", "authserv_id_of", "from_verdict", "organizational_domain"]


@dataclass(frozen=True)
class Verdict:
    """Whether the From is vouched for, and why (for the inbound row's reason)."""

    passed: bool
    reason: str


@dataclass(frozen=True)
class _Result:
    """One resinfo: ``method=result`` and its ``ptype.property`` values (lowercased)."""

    method: str
    result: str
    properties: Mapping[str, tuple[str, ...]]


# No provider writes that much; a longer value is not parsed (and, if it is the trusted
# server's, the mail is unproven).
_VALUE_MAX = 8000

_WSP = " \t\r\n"
_KEYWORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")

# A ``; method=`` anywhere in the raw value, inside quoted strings and comments too.
_RESINFO_START = re.compile(r";[ \t\r\n]*[A-Za-z0-9_-]+[ \t\r\n]*(?:/[ \t\r\n]*[0-9]+[ \t\r\n]*)?=")


class _Unreadable(Exception):
    """The header does not follow RFC 8601 even read tolerantly; the message says where."""


# -- lexing --------------------------------------------------------------------------


def _skip_wsp(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WSP:
        i += 1
    return i


def _end_of_comment(text: str, i: int) -> int:
    """Index just past the (nested) comment opening at ``text[i] == "("``, or -1 when it
    is never closed."""
    depth = 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def _end_of_quoted(text: str, i: int) -> int:
    """Index just past the quoted string opening at ``text[i] == '"'``, or -1."""
    i += 1
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == '"':
            return i + 1
        i += 1
    return -1


def _past_quoted(text: str, i: int) -> int:
    """Like :func:`_end_of_quoted`, for strings already known to be balanced."""
    end = _end_of_quoted(text, i)
    if end < 0:
        raise _Unreadable("a quoted string is not closed")
    return end


def _unquote(quoted: str) -> str:
    """The content of a quoted string (with its quotes), quoted-pairs resolved."""
    return re.sub(r"\\(.)", r"\1", quoted[1:-1], flags=re.DOTALL)


def _uncommented(text: str) -> str:
    """``text`` with each comment replaced by a space (quoted strings kept as written)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "(":
            end = _end_of_comment(text, i)
            if end < 0:
                raise _Unreadable("a comment is not closed")
            out.append(" ")
            i = end
        elif char == '"':
            end = _past_quoted(text, i)
            out.append(text[i:end])
            i = end
        elif char == ")":
            raise _Unreadable("a comment is closed that was never opened")
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _split_resinfo(text: str) -> list[str]:
    """``text`` (comments removed, quotes balanced) split on ``;`` outside quoted strings."""
    parts: list[str] = []
    start = i = 0
    while i < len(text):
        char = text[i]
        if char == '"':
            i = _past_quoted(text, i)
            continue
        if char == ";":
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


def _keyword(text: str, i: int) -> tuple[str, int]:
    """The RFC 8601 Keyword (letters, digits, hyphen; underscore tolerated) at ``i``."""
    start = i
    while i < len(text) and text[i] in _KEYWORD_CHARS:
        i += 1
    return text[start:i], i


def _value(text: str, i: int) -> tuple[str, int]:
    """A property or reason value at ``i``: a quoted string, an ``<addr>`` (brackets
    dropped), or anything else up to whitespace (a token, an addr-spec, an IP literal,
    8-bit text); quoted strings inside are kept whole (``"a b"@example.org``)."""
    if text.startswith("<", i):
        j = i + 1
        while j < len(text) and text[j] != ">":
            j = _past_quoted(text, j) if text[j] == '"' else j + 1
        if j >= len(text):
            raise _Unreadable("an <address> is not closed")
        return _value_text(text[i + 1 : j].strip(_WSP)), j + 1
    start = j = i
    while j < len(text) and text[j] not in _WSP:
        j = _past_quoted(text, j) if text[j] == '"' else j + 1
    return _value_text(text[start:j]), j


def _value_text(raw: str) -> str:
    """``raw`` with its quoted strings unquoted, lowercased."""
    return re.sub(
        r'"((?:[^"\\]|\\.)*)"', lambda m: _unquote(m.group(0)), raw, flags=re.DOTALL
    ).lower()


def _resinfo(text: str) -> _Result:
    """One ``method[/version]=result [reason=value] [ptype.property=value ...]``."""
    i = _skip_wsp(text, 0)
    method, i = _keyword(text, i)
    if not method:
        raise _Unreadable("a result without a method")
    i = _skip_wsp(text, i)
    if text.startswith("/", i):
        i = _skip_wsp(text, i + 1)
        version, i = _keyword(text, i)
        if not version.isdigit():
            raise _Unreadable(f"a bad version of method {method[:40]!r}")
        i = _skip_wsp(text, i)
    if not text.startswith("=", i):
        raise _Unreadable(f"no result for method {method[:40]!r}")
    result, i = _keyword(text, _skip_wsp(text, i + 1))
    if not result:
        raise _Unreadable(f"no result for method {method[:40]!r}")
    properties: dict[str, tuple[str, ...]] = {}
    while True:
        j = _skip_wsp(text, i)
        if j == len(text):
            break
        if j == i:
            raise _Unreadable(f"nothing between two items of method {method[:40]!r}")
        key, i = _keyword(text, j)
        i = _skip_wsp(text, i)
        if key and text.startswith(".", i):
            name, i = _keyword(text, _skip_wsp(text, i + 1))
            key = f"{key}.{name}" if name else ""
            i = _skip_wsp(text, i)
        # ``reason=``, and bare ``key=value`` too: some providers write ``action=none``.
        if not key or not text.startswith("=", i):
            raise _Unreadable(f"a bad property of method {method[:40]!r}")
        value, i = _value(text, _skip_wsp(text, i + 1))
        key = key.lower()
        properties[key] = (*properties.get(key, ()), value)
    return _Result(method.lower(), result.lower(), properties)


# -- the header ----------------------------------------------------------------------


def authserv_id_of(value: str) -> str | None:
    """The authserv-id an ``Authentication-Results`` value starts with, as written, or
    None when none can be read.

    Lenient on purpose, so that a header is known as the trusted server's even when the
    rest of it cannot be read: whitespace and comments first, then a quoted string or a
    token up to ``;``, whitespace or ``(``. Whatever follows is not looked at.
    """
    i = _skip_wsp(value, 0)
    while value.startswith("(", i):
        end = _end_of_comment(value, i)
        if end < 0:
            return None
        i = _skip_wsp(value, end)
    if value.startswith('"', i):
        end = _end_of_quoted(value, i)
        found = _unquote(value[i:end]) if end > 0 else ""
    else:
        end = i
        while end < len(value) and value[end] not in ";(" + _WSP:
            end += 1
        found = value[i:end]
    return found or None


def _read(value: str, authserv_id: str) -> list[_Result]:
    """The results of the header ``value`` of ``authserv_id`` (empty for ``none``)."""
    if len(value) > _VALUE_MAX:
        raise _Unreadable(f"over {_VALUE_MAX} characters")
    parts = _split_resinfo(_uncommented(value))
    head = parts[0].strip(_WSP)
    if head.startswith('"'):
        end = _past_quoted(head, 0)
        found = _unquote(head[:end])
    else:
        end = 0
        while end < len(head) and head[end] not in _WSP:
            end += 1
        found = head[:end]
    version = head[end:].strip(_WSP)
    if found.lower() != authserv_id:
        raise _Unreadable("its authserv-id is not alone before the first ';'")
    if version and (not version.isdigit() or version.lstrip("0") != "1"):
        raise _Unreadable(f"unknown version {version[:20]!r}")
    resinfo = [part for part in parts[1:] if part.strip(_WSP)]
    if [part.strip(_WSP).lower() for part in resinfo] == ["none"]:
        return []
    results = [_resinfo(part) for part in resinfo]
    # A "; method=" inside a quoted string or a comment is either odd prose or a result
    # hidden from this reader by quotes or parentheses from the sender: not decided here.
    if len(_RESINFO_START.findall(value)) > len(results):
        raise _Unreadable("a result inside a quoted string or comment")
    return results


# -- the verdict ---------------------------------------------------------------------


@cache
def _suffixes() -> Any:
    """The Public Suffix List (bundled with the library: no network), parsed once."""
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


def organizational_domain(domain: str) -> str | None:
    """The registrable ("organizational") domain of ``domain`` by the Public Suffix
    List — ``mail.example.co.uk`` → ``example.co.uk`` — or None when ``domain`` is a
    public suffix itself (``test``, ``co.uk``, ``github.io``)."""
    found = _suffixes().privatesuffix(domain.strip().lower().rstrip("."))
    return str(found) if found else None


def _aligned(domain: str, from_domain: str) -> bool:
    """Relaxed alignment (RFC 7489 3.1): the same domain, or the same organizational
    domain — never merely the same public suffix (``header.d=test`` does not align
    with ``victim.test``)."""
    domain = domain.strip().lower().rstrip(".")
    from_domain = from_domain.lower().rstrip(".")
    if not domain or not from_domain:
        return False
    if domain == from_domain:
        return True
    org = organizational_domain(from_domain)
    return org is not None and org == organizational_domain(domain)


def _all_aligned(domains: Sequence[str], from_domain: str) -> bool:
    """Every one of ``domains`` (a property given once, or oddly more often) aligned."""
    return bool(domains) and all(_aligned(domain, from_domain) for domain in domains)


def from_verdict(values: Sequence[str], authserv_id: str, sender: str) -> Verdict:
    """Whether the trusted server ``authserv_id`` vouched for ``sender`` (the From
    address) in the ``Authentication-Results`` header values ``values`` (top first).

    Only the topmost header with that authserv-id is read. It passes on ``dmarc=pass``
    whose ``header.from`` is the From's own domain; fails on ``dmarc=fail``; otherwise
    (no DMARC verdict, or one for another domain) passes on a DKIM pass whose
    ``header.d`` or an SPF pass whose ``smtp.mailfrom`` is aligned with the From domain
    (`_aligned`: up to the organizational domain, by the Public Suffix List). Anything
    else — no header from the trusted server, or one that cannot be read — fails.
    Never raises.
    """
    wanted = authserv_id.strip().lower()
    value = next((v for v in values if (authserv_id_of(v) or "").lower() == wanted), None)
    if value is None or not wanted:
        return Verdict(False, f"no Authentication-Results verdict from {authserv_id}")
    try:
        results = _read(value, wanted)
    except _Unreadable as problem:
        return Verdict(
            False, f"the Authentication-Results of {authserv_id} cannot be read: {problem}"
        )
    if not results:
        return Verdict(False, f"no Authentication-Results verdict from {authserv_id} (no results)")
    from_domain = sender.rpartition("@")[2]
    dmarc = [r for r in results if r.method == "dmarc"]
    if any(r.result == "fail" for r in dmarc):
        return Verdict(False, f"DMARC failed at {authserv_id}")
    for r in dmarc:
        # DMARC is judged on a From domain: the one it names must be the one parsed.
        if r.result == "pass" and r.properties.get("header.from") == (from_domain.lower(),):
            return Verdict(True, "DMARC passed")
    for r in results:
        if r.result != "pass":
            continue
        if r.method == "dkim" and _all_aligned(r.properties.get("header.d", ()), from_domain):
            return Verdict(True, "aligned DKIM passed")
        if r.method == "spf":
            mailfroms = [m.rpartition("@")[2] for m in r.properties.get("smtp.mailfrom", ())]
            if _all_aligned(mailfroms, from_domain):
                return Verdict(True, "aligned SPF passed")
    if any(r.result == "pass" for r in dmarc):
        return Verdict(False, f"DMARC passed at {authserv_id} for another domain than the From's")
    return Verdict(False, f"neither DMARC nor an aligned DKIM or SPF passed at {authserv_id}")
