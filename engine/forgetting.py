"""Deal proofs of a player who asked to be forgotten.

A cut's entropy text holds the Message-ID of the cut mail (which often names its
writer's domain) and the words they wrote, so forgetting a player replaces their
entropy entry ``{"seat": n, "text": E}`` by ``{"seat": n, "sha256": SHA-256(E)}``
(`forget_entry`). The engine seed ``K = derive(S, E…)`` cannot be recomputed without
``E``, so `verify_forgotten` checks what still can be checked, and says what cannot:

- (a) SHA-256(S) equals the commitment ``C``, as for any game;
- (b) is not recomputed: the archive's seed ``K`` is taken as it is, and a note names
  each forgotten seat with the SHA-256 of its text, against which anyone holding the
  text (the forgotten player in their sent mail, the other players in the game-over mail
  they received before) can check it and then derive ``K`` themself;
- (c) every draw, deal, crib card and starter is checked against ``K`` as usual.

Pure: no clock, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from engine.errors import EngineError, ReplayError

_HEX64 = re.compile(r"^[0-9a-f]{64}$")

FORGOTTEN_NOTE = (
    "seat {seat}'s cut was forgotten at its player's request (its entropy text's SHA-256 "
    "is {digest}): the seed cannot be derived again without that text, so the deals were "
    "checked against the archive's seed"
)


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
    entries (see the module's docstring), or None when it has none."""
    from engine.archive import replay_archive
    from engine.fairness import DealProof, Verdict, check_deals, commitment

    raw = record.get("deal_proof")
    if not isinstance(raw, dict):
        return None
    entries = raw.get("entropy")
    if not isinstance(entries, list) or not any(is_forgotten(e) for e in entries):
        return None
    # The rest of the proof is read as usual (a forgotten entry stands in as an empty text).
    standin = [{"seat": e["seat"], "text": ""} if is_forgotten(e) else e for e in entries]
    proof = DealProof.from_json({**raw, "entropy": standin})
    if proof.server_seed is None:
        return Verdict(
            False,
            check="commitment",
            detail="the server seed is not revealed yet (the game is not over)",
        )
    if commitment(proof.server_seed) != proof.commitment:
        return Verdict(
            False,
            check="commitment",
            detail=f"SHA-256 of the server seed is {commitment(proof.server_seed)}, "
            f"the commitment says {proof.commitment}",
        )
    seed = record.get("seed")
    if not isinstance(seed, str):
        raise ReplayError("the archive has no seed")
    try:
        verdict = check_deals(replay_archive(record), seed)
    except EngineError as exc:
        return Verdict(False, check="replay", detail=str(exc))
    verdict.notes.extend(
        FORGOTTEN_NOTE.format(seat=e["seat"], digest=e["sha256"])
        for e in entries
        if is_forgotten(e)
    )
    return verdict
