"""The verifiable-deal protocol pbem-deal/1: commit, derive, verify, and what a
tampered archive reports."""

from __future__ import annotations

import copy
import hashlib
import random
from typing import Any

import pytest

from engine import Game, Settings, new_game, to_archive
from engine.computer import choose_action, decide, view_rng
from engine.dealcheck import verify_archive
from engine.fairness import (
    NOT_VERIFIABLE,
    PROTOCOL_1,
    PROTOCOL_2,
    DealProof,
    check_deals,
    clean_words,
    commitment,
    derive_seed,
    entropy_text,
    expected_deal,
    seed_from_hashes,
    text_hash,
)
from engine.view import player_view
from tests.engine.helpers import play_out

S = "0f" * 32
E0 = "<cut-1@example.com> 17 lucky cats"
E1 = "<cut-2@example.org>"


def test_commitment_is_sha256_hex_of_the_utf8_seed() -> None:
    assert commitment("abc") == ("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    assert commitment(S) == hashlib.sha256(S.encode()).hexdigest()


def test_derive_is_length_prefixed_concatenation_hashed() -> None:
    # pbem-deal/1, written out by hand from the spec: 4-byte big-endian lengths before
    # each part.
    blob = b"".join(len(p.encode()).to_bytes(4, "big") + p.encode() for p in (S, E0, E1))
    assert derive_seed(S, [E0, E1], PROTOCOL_1) == hashlib.sha256(blob).hexdigest()
    # A known vector, for other checkers (the browser verifier tests the same).
    one = derive_seed("a", ["b"], PROTOCOL_1)
    assert one == hashlib.sha256(b"\0\0\0\x01a\0\0\0\x01b").hexdigest()
    assert one == "16275ef0f5d0eb9dd9e0a53277549fda5c886358a6872df23c797b13e11455bc"
    # The lengths make the split unambiguous: "ab"+"c" differs from "a"+"bc".
    for protocol in (PROTOCOL_1, PROTOCOL_2):
        assert derive_seed("x", ["ab", "c"], protocol) != derive_seed("x", ["a", "bc"], protocol)
        assert derive_seed(S, [], protocol) != derive_seed(S, [""], protocol)
    with pytest.raises(ValueError, match="unknown deal protocol"):
        derive_seed(S, [E0], "pbem-deal/9")


def test_derive_2_hashes_the_length_prefixed_seed_and_each_texts_digest() -> None:
    """pbem-deal/2: the server seed length-prefixed, then each text's 32-byte SHA-256; so
    the key derives from the hashes alone (a forgotten cut keeps only its hash)."""
    h0, h1 = (hashlib.sha256(e.encode()).digest() for e in (E0, E1))
    blob = len(S).to_bytes(4, "big") + S.encode() + h0 + h1
    want = hashlib.sha256(blob).hexdigest()
    assert derive_seed(S, [E0, E1]) == derive_seed(S, [E0, E1], PROTOCOL_2) == want
    assert seed_from_hashes(S, [h0.hex(), h1.hex()]) == want
    assert derive_seed("a", ["b"], PROTOCOL_2) == (
        "81cdb6070b52471b913d3fb26edf8a23d782d160732b65ea0d427e8295aa5743"
    )
    assert derive_seed(S, [E0, E1], PROTOCOL_2) != derive_seed(S, [E0, E1], PROTOCOL_1)
    for bad in ("AB" * 32, "ab" * 31, "zz" * 32):
        with pytest.raises(ValueError, match="not a SHA-256"):
            seed_from_hashes(S, [bad])
    # A proof with a forgotten cut derives the same key under /2, and none under /1.
    proof = DealProof(commitment(S), S, ((1, E1),), forgotten=((0, h0.hex()),))
    assert proof.seed() == want
    assert proof.entries()[0] == {"seat": 0, "sha256": h0.hex()}
    legacy = DealProof(commitment(S), S, ((1, E1),), PROTOCOL_1, forgotten=((0, h0.hex()),))
    with pytest.raises(ValueError, match="forgotten"):
        legacy.seed()
    assert DealProof.from_json(proof.to_json(reveal=True)) == proof


def test_entropy_text_keeps_the_brackets_and_cleans_the_words() -> None:
    assert entropy_text("<id@x>", "  17   lucky\n\tcats ") == "<id@x> 17 lucky cats"
    assert entropy_text("id@x", "") == "<id@x>"
    assert entropy_text("<id@x>", "\x00\x1b[31m") == "<id@x> [31m"
    assert len(clean_words("z" * 500)) == 200
    assert clean_words("é ü ♥ 🂡") == "é ü ♥ 🂡"
    assert clean_words("a\u200b b", "pbem-deal/1") == "a\u200b b"  # /1 keeps format chars
    assert clean_words("a\u200b b") == "a b"  # /2 deletes them (general category Cf)


def finished(players: int = 2) -> tuple[dict[str, Any], str]:
    proof = DealProof(commitment(S), S, ((0, E0), (1, E1)))
    seed = proof.seed()
    game = play_out(Game(Settings(players=players, target=61), seed))
    assert game.is_over
    return to_archive(game, deal_proof=proof.to_json(reveal=True)), seed


@pytest.mark.parametrize("players", [2, 3, 4])
def test_an_honest_game_verifies(players: int) -> None:
    data, _ = finished(players)
    verdict = verify_archive(data)
    assert verdict.ok, verdict.message
    assert verdict.deals >= 2
    assert verdict.message == f"all {verdict.deals} deals verified"


def test_tampered_server_seed_fails_the_commitment() -> None:
    data, _ = finished()
    data["deal_proof"]["server_seed"] = "1" + S[1:]
    verdict = verify_archive(data)
    assert not verdict.ok and verdict.check == "commitment"


def test_tampered_commitment_is_reported() -> None:
    data, _ = finished()
    data["deal_proof"]["commitment"] = commitment("something else")
    assert verify_archive(data).check == "commitment"


def test_tampered_entropy_gives_another_seed() -> None:
    data, _ = finished()
    data["deal_proof"]["entropy"][0]["text"] = E0 + "!"
    assert verify_archive(data).check == "entropy"  # its sha256 no longer matches
    data["deal_proof"]["entropy"][0]["sha256"] = text_hash(E0 + "!")
    verdict = verify_archive(data)
    assert verdict.check == "seed"
    assert "the archive's seed" in verdict.message


def test_tampered_seed_is_reported() -> None:
    data, _ = finished()
    data["seed"] = "f" * 64
    assert verify_archive(data).check == "seed"


def test_a_swapped_card_in_the_actions_is_reported_with_its_hand() -> None:
    data, _ = finished()
    tampered = copy.deepcopy(data)
    first = tampered["actions"][0]
    assert first["type"] == "discard"
    held = set(first["cards"])
    other = next(c for c in ("AS", "2S", "3S", "4S", "5S", "6S", "7S") if c not in held)
    # Swap a card the seat laid away for one it was never dealt.
    first["cards"][0] = other
    verdict = verify_archive(tampered)
    assert not verdict.ok and verdict.check == "replay"
    assert verdict.hand == 1
    assert "action 1" in verdict.message


def test_a_deal_the_seed_did_not_give_is_reported() -> None:
    # States dealt from another seed than K: the recomputed draw/deal differs.
    _data, seed = finished()
    other = play_out(Game(Settings(players=2, target=61), "not-the-seed"), stop=2)
    verdict = check_deals([other], seed)
    assert not verdict.ok and verdict.check in ("draw", "deal")
    fixed = Game(Settings(players=2, target=61, first_dealer=0), "x")
    verdict = check_deals([fixed], seed)
    assert verdict.check == "deal" and verdict.hand == 1
    assert "seat " in verdict.detail and "the seed gives" in verdict.detail


def test_expected_deal_matches_the_engine() -> None:
    for players in (2, 3, 4):
        game = Game(Settings(players=players, first_dealer=1), "k")
        want = expected_deal("k", 1, players, 1)
        for seat in range(players):
            assert tuple(sorted(game.holding(seat))) == want.hands[seat]
        assert tuple(game.state_json()["crib"]) == tuple(c.ascii for c in want.crib)


def test_no_deal_proof_is_not_verifiable() -> None:
    data = to_archive(new_game(2, seed="chosen"))
    verdict = verify_archive(data)
    assert not verdict.verifiable and verdict.message == NOT_VERIFIABLE


def test_a_running_game_reveals_nothing() -> None:
    proof = DealProof(commitment(S), S, ((0, E0),))
    assert proof.to_json()["server_seed"] is None
    data, _ = finished()
    data["deal_proof"]["server_seed"] = None
    verdict = verify_archive(data)
    assert not verdict.ok and "not revealed" in verdict.message


def test_malformed_deal_proof_is_a_replay_error() -> None:
    from engine import ReplayError

    data, _ = finished()
    # Cuts out of seat order: a mismatch of the entropy (the page and the standalone
    # verifier say the same), not an unreadable archive.
    data["deal_proof"]["entropy"] = [{"seat": 1, "text": "a"}, {"seat": 0, "text": "b"}]
    verdict = verify_archive(data)
    assert verdict.check == "entropy" and "seat order" in verdict.message
    data["deal_proof"] = {"protocol": "other"}
    with pytest.raises(ReplayError):
        verify_archive(data)


def test_the_computer_decides_from_its_view_only() -> None:
    """Same view, different seeds and undealt packs: the same action."""
    seen = 0
    for n in range(40):
        a = Game(Settings(players=2, first_dealer=0), f"seed-a-{n}")
        b = Game(Settings(players=2, first_dealer=0), f"seed-b-{n}")
        # b: seat 1 holds what it holds in a and has seen the same events, but the
        # seed, the other hand and the undealt pack differ.
        b._s.holding[1] = list(a._s.holding[1])
        b._s.pack = list(reversed(a._s.pack))
        b.events = list(a.events)
        assert player_view(a, 1).to_json() == player_view(b, 1).to_json()
        assert a.seed != b.seed and a._s.pack != b._s.pack
        assert choose_action(a, 1) == choose_action(b, 1)
        seen += 1
    assert seen == 40


def test_view_rng_is_a_function_of_the_view() -> None:
    game = Game(Settings(players=2, first_dealer=0), "v")
    view = player_view(game, 1)
    assert view_rng(view).random() == view_rng(player_view(game.copy(), 1)).random()
    assert decide(view, view_rng(view)) == decide(view, view_rng(view))
    assert decide(view, random.Random(1), "random") in view.legal


def test_the_unsafe_characters_are_exactly_the_complement_of_the_printable_ranges() -> None:
    import re

    from engine import fairness

    kept = re.compile(r"[\x20-\x7e\u00a0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
    differ = [
        point
        for point in range(0x110000)
        if (fairness._UNSAFE.match(chr(point)) is None) != (kept.match(chr(point)) is not None)
    ]
    assert differ == []
