"""Deal proofs of a player who asked to be forgotten.

A cut's entropy text holds the Message-ID of the cut mail (which often names its
writer's domain) and the words they wrote, so forgetting a player replaces their
entropy entry ``{"seat": n, "text": E}`` by ``{"seat": n, "sha256": SHA-256(E)}``
(`forget_entry`), and each of their cut mails likewise.

- ``pbem-deal/2`` derives the key from the texts' SHA-256, so such an archive verifies
  fully: every check of the specification runs, the cuts compared by their hashes.
- ``pbem-deal/1`` derives it from the texts themselves: the key cannot be recomputed
  without ``E``. The archive's seed ``K`` is then taken as it is, every other check runs
  (the commitment, the entropy's form, the cuts by their hashes, the draws, deals, crib
  cards and starters against ``K``), and a note names each forgotten seat with the
  SHA-256 of its text, against which anyone holding the text can check it and then
  derive ``K`` themself (`engine.dealcheck.key_of`).

Pure: no clock, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def forget_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """An entropy entry with its text replaced by the text's SHA-256 (an entry already
    forgotten is returned as it is)."""
    if "text" not in entry:
        return dict(entry)
    text = str(entry["text"])
    return {"seat": int(entry["seat"]), "sha256": hashlib.sha256(text.encode()).hexdigest()}


def is_forgotten(entry: Any) -> bool:
    """Whether an entropy entry holds a text's SHA-256 in place of the text."""
    return (
        isinstance(entry, dict)
        and "text" not in entry
        and isinstance(entry.get("sha256"), str)
        and bool(_HEX64.match(entry["sha256"]))
    )


def verify_forgotten(record: dict[str, Any]) -> Any:
    """The `engine.fairness.Verdict` of an archive whose deal proof has forgotten
    entries (`engine.dealcheck.verify`, which handles them), or None when it has none."""
    from engine.dealcheck import verify

    raw = record.get("deal_proof")
    if not isinstance(raw, dict):
        return None
    entries = raw.get("entropy")
    if not isinstance(entries, list) or not any(is_forgotten(e) for e in entries):
        return None
    return verify(record)
