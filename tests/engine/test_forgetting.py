"""A forgotten player's cut: its entropy text replaced by the text's SHA-256. Under
``pbem-deal/2`` the key derives from the hashes, so `verify_archive` checks everything;
under ``pbem-deal/1`` it checks the deals against the archive's seed and says it could
not derive the seed."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest

from engine import Game, Settings, to_archive
from engine.dealcheck import verify_archive
from engine.fairness import PROTOCOL_1, PROTOCOL_2, DealProof, commitment
from engine.forgetting import forget_entry, is_forgotten, verify_forgotten
from tests.engine.helpers import play_out

S = "0f" * 32
E0 = "<cut-1@example.com> 17 lucky cats"
E1 = "<cut-2@example.org>"


def forgotten_archive(protocol: str) -> dict[str, Any]:
    proof = DealProof(commitment(S), S, ((0, E0), (1, E1)), protocol, outcome="finished")
    proof = DealProof(
        commitment(S),
        S,
        ((0, E0), (1, E1)),
        protocol,
        cuts=tuple(
            {"seat": e["seat"], "text": e["text"], "sha256": e["sha256"], "accepted": True}
            for e in proof.entries()
        ),
        outcome="finished",
    )
    game = play_out(Game(Settings(players=2, target=61), proof.seed()))
    data = to_archive(game, deal_proof=proof.to_json(reveal=True))
    data["deal_proof"]["entropy"][0] = forget_entry(data["deal_proof"]["entropy"][0])
    data["deal_proof"]["cuts"][0].pop("text")
    return data


def test_a_forgotten_entry_keeps_only_the_texts_sha256() -> None:
    entry = forget_entry({"seat": 0, "text": E0})
    assert entry == {"seat": 0, "sha256": hashlib.sha256(E0.encode()).hexdigest()}
    assert is_forgotten(entry) and forget_entry(entry) == entry
    assert not is_forgotten({"seat": 0, "text": E0})
    assert not is_forgotten({"seat": 0, "sha256": "not hex"})
    assert not is_forgotten({"seat": 0, "text": E0, "sha256": entry["sha256"]})


def test_the_deals_of_a_forgotten_cut_verify_fully_under_protocol_2() -> None:
    data = forgotten_archive(PROTOCOL_2)
    verdict = verify_archive(data)
    assert verdict.ok and verdict.deals >= 2 and verdict.notes == [], verdict.message
    assert verify_forgotten(data) == verdict
    # Whoever holds the text checks it as a receipt, against the hash.
    assert verify_archive(data, seat=0, cut=E0).ok
    assert verify_archive(data, seat=1, cut=E1).ok
    other = verify_archive(data, seat=0, cut=E0 + " x")
    assert other.check == "cut" and "forgotten" in other.detail


def test_the_deals_of_a_forgotten_cut_under_protocol_1_are_not_verifiable() -> None:
    """Every other check passes against the archive's seed, but that seed is not derived
    from anything: the verdict is "not verifiable", never "ok", and says why."""
    data = forgotten_archive(PROTOCOL_1)
    verdict = verify_archive(data)
    assert not verdict.ok and not verdict.verifiable and verdict.deals >= 2, verdict.message
    assert verdict.message.startswith("not verifiable: seat 0's cut was forgotten")
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
    honest["deal_proof"]["cuts"][0]["text"] = E0
    assert verify_forgotten(honest) is None and verify_archive(honest).notes == []


@pytest.mark.parametrize("protocol", [PROTOCOL_1, PROTOCOL_2])
def test_a_game_never_dealt_with_a_forgotten_cut_verifies(protocol: str) -> None:
    """No key to derive (the game was aborted before every seat cut): under either
    protocol the forgotten cut leaves nothing unchecked."""
    from tests.deal_corpus import never_dealt

    data = never_dealt()
    data["deal_proof"]["protocol"] = protocol
    for key in ("game", "missing"):  # what /3 adds
        data["deal_proof"].pop(key)
    data["deal_proof"]["entropy"][0] = forget_entry(data["deal_proof"]["entropy"][0])
    data["deal_proof"]["cuts"][0].pop("text")
    verdict = verify_archive(data)
    assert verdict.ok and verdict.deals == 0, verdict.message


@pytest.mark.parametrize("protocol", [PROTOCOL_1, PROTOCOL_2])
def test_what_is_still_checked_still_fails(protocol: str) -> None:
    data = forgotten_archive(protocol)
    bad_seed = copy.deepcopy(data)
    bad_seed["deal_proof"]["server_seed"] = "1" + S[1:]
    assert verify_archive(bad_seed).check == "commitment"
    hidden = copy.deepcopy(data)
    hidden["deal_proof"]["server_seed"] = None
    verdict = verify_archive(hidden)
    assert not verdict.ok and not verdict.revealed
    # Another hash for the forgotten cut: the key (/2), or the cuts received (/1).
    rehashed = copy.deepcopy(data)
    rehashed["deal_proof"]["entropy"][0]["sha256"] = "3" * 64
    assert verify_archive(rehashed).check == ("seed" if protocol == PROTOCOL_2 else "cuts")
    malformed = copy.deepcopy(data)
    malformed["deal_proof"]["entropy"][0]["sha256"] = "not hex"
    assert verify_archive(malformed).check == "schema"
    cut_hash = copy.deepcopy(data)
    cut_hash["deal_proof"]["cuts"][0]["sha256"] = "4" * 64
    assert verify_archive(cut_hash).check == "cuts"
    # Another seed than the deals': the key (/2), or the draw or first deal (/1).
    other = copy.deepcopy(data)
    other["seed"] = "f" * 64
    verdict = verify_archive(other)
    assert not verdict.ok and verdict.check in ("seed", "draw", "deal", "replay")
    swapped = copy.deepcopy(data)
    first = swapped["actions"][0]
    first["cards"][0] = next(c for c in ("AS", "2S", "3S", "4S") if c not in first["cards"])
    assert verify_archive(swapped).check == "replay"
