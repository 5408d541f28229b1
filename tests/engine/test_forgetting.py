"""A forgotten player's cut: its entropy text replaced by the text's SHA-256, and what
`verify_archive` still checks (the commitment, every deal against the archive's seed)
and says it could not (the seed's derivation)."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from engine import Game, Settings, to_archive
from engine.fairness import DealProof, commitment, verify_archive
from engine.forgetting import forget_entry, is_forgotten, verify_forgotten
from tests.engine.helpers import play_out

S = "0f" * 32
E0 = "<cut-1@example.com> 17 lucky cats"
E1 = "<cut-2@example.org>"


def forgotten_archive() -> dict[str, Any]:
    proof = DealProof(commitment(S), S, ((0, E0), (1, E1)))
    game = play_out(Game(Settings(players=2, target=61), proof.seed()))
    data = to_archive(game, deal_proof=proof.to_json(reveal=True))
    data["deal_proof"]["entropy"][0] = forget_entry(data["deal_proof"]["entropy"][0])
    return data


def test_a_forgotten_entry_keeps_only_the_texts_sha256() -> None:
    entry = forget_entry({"seat": 0, "text": E0})
    assert entry == {"seat": 0, "sha256": hashlib.sha256(E0.encode()).hexdigest()}
    assert is_forgotten(entry) and forget_entry(entry) == entry
    assert not is_forgotten({"seat": 0, "text": E0})
    assert not is_forgotten({"seat": 0, "sha256": "not hex"})
    assert not is_forgotten({"seat": 0, "text": E0, "sha256": entry["sha256"]})


def test_the_deals_of_a_forgotten_cut_verify_and_say_what_was_not_checked() -> None:
    data = forgotten_archive()
    verdict = verify_archive(data)
    assert verdict.ok and verdict.deals >= 2, verdict.message
    digest = data["deal_proof"]["entropy"][0]["sha256"]
    assert verdict.notes == [
        f"seat 0's cut was forgotten at its player's request (its entropy text's SHA-256 is "
        f"{digest}): the seed cannot be derived again without that text, so the deals were "
        "checked against the archive's seed"
    ]
    # Whoever holds the text can check it against the hash, then derive the seed.
    assert hashlib.sha256(E0.encode()).hexdigest() == digest
    assert verify_forgotten({"deal_proof": None}) is None
    honest = copy.deepcopy(data)
    honest["deal_proof"]["entropy"][0] = {"seat": 0, "text": E0}
    assert verify_forgotten(honest) is None and verify_archive(honest).notes == []


def test_what_is_still_checked_still_fails() -> None:
    data = forgotten_archive()
    bad_seed = copy.deepcopy(data)
    bad_seed["deal_proof"]["server_seed"] = "1" + S[1:]
    assert verify_archive(bad_seed).check == "commitment"
    hidden = copy.deepcopy(data)
    hidden["deal_proof"]["server_seed"] = None
    verdict = verify_archive(hidden)
    assert not verdict.ok and verdict.check == "commitment"
    # Another seed than the deals': the first deal (or the draw) does not match.
    other = copy.deepcopy(data)
    other["seed"] = "f" * 64
    verdict = verify_archive(other)
    assert not verdict.ok and verdict.check in ("draw", "deal", "replay")
    swapped = copy.deepcopy(data)
    first = swapped["actions"][0]
    first["cards"][0] = next(c for c in ("AS", "2S", "3S", "4S") if c not in first["cards"])
    assert verify_archive(swapped).check == "replay"
