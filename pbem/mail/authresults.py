"""Whether the mail provider vouched for a message's From (RFC 8601 Authentication-Results).

Anyone can write an ``Authentication-Results`` header, so only those of the one server
the operator trusts count (its authserv-id, `Settings.trusted_authserv_id`), and of those
only the topmost: the provider adds its own above everything the message arrived with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import authres

__all__ = ["Verdict", "from_verdict"]


@dataclass(frozen=True)
class Verdict:
    """Whether the From is vouched for, and why (for the inbound row's reason)."""

    passed: bool
    reason: str


_VALUE_MAX = 8000


def _trusted_results(values: Sequence[str], authserv_id: str) -> list[tuple[str, str, dict]]:
    """(method, result, {ptype.property: value}) of the topmost header with
    ``authserv_id`` (``values`` in message order, top first); unreadable headers are
    skipped. Headers below it with the same id are not read: the provider added its own
    above everything the message came with, and those may be forged."""
    wanted = authserv_id.strip().lower()
    for value in values:
        if len(value) > _VALUE_MAX:
            continue  # no provider writes that much; not worth parsing
        try:
            header = authres.AuthenticationResultsHeader.parse_value(" ".join(value.split()))
        except Exception:
            continue
        if str(header.authserv_id or "").strip().lower() != wanted:
            continue
        found: list[tuple[str, str, dict]] = []
        for result in header.results:
            properties = {
                f"{p.type}.{p.name}".lower(): str(p.value or "").strip().lower()
                for p in (result.properties or [])
            }
            found.append((str(result.method).lower(), str(result.result).lower(), properties))
        return found
    return []


def _aligned(domain: str, from_domain: str) -> bool:
    """Relaxed alignment, simply: the same domain, or one a subdomain of the other."""
    domain = domain.strip().lower().rstrip(".")
    from_domain = from_domain.lower().rstrip(".")
    if not domain:
        return False
    return (
        domain == from_domain
        or from_domain.endswith("." + domain)
        or domain.endswith("." + from_domain)
    )


def from_verdict(values: Sequence[str], authserv_id: str, sender: str) -> Verdict:
    """Whether the trusted server ``authserv_id`` vouched for ``sender`` (the From
    address) in the ``Authentication-Results`` header values ``values`` (top first).

    Passes on ``dmarc=pass``; fails on ``dmarc=fail``; with no DMARC verdict (no policy,
    none, temperror…) passes on a DKIM pass whose ``header.d`` or an SPF pass whose
    ``smtp.mailfrom`` is aligned with the From domain; anything else — no header from the
    trusted server at all — fails.
    """
    results = _trusted_results(values, authserv_id)
    if not results:
        return Verdict(False, f"no Authentication-Results verdict from {authserv_id}")
    from_domain = sender.rpartition("@")[2]
    dmarc = [result for method, result, _ in results if method == "dmarc"]
    if "fail" in dmarc:
        return Verdict(False, f"DMARC failed at {authserv_id}")
    if "pass" in dmarc:
        return Verdict(True, "DMARC passed")
    for method, result, properties in results:
        if result != "pass":
            continue
        if method == "dkim" and _aligned(properties.get("header.d", ""), from_domain):
            return Verdict(True, "aligned DKIM passed")
        if method == "spf":
            mailfrom = properties.get("smtp.mailfrom", "").rpartition("@")[2]
            if _aligned(mailfrom, from_domain):
                return Verdict(True, "aligned SPF passed")
    return Verdict(False, f"neither DMARC nor an aligned DKIM or SPF passed at {authserv_id}")
