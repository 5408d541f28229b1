"""The test vectors of ``docs/pbem-deal-1.md`` (``tests/engine/data/deal_vectors.json``):
the engine computes exactly them, and so does the standalone verifier written from the
specification alone (``docs/pbem_deal_verify.py``), and plain hashlib where the text
gives the bytes."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from engine.cards import full_deck
from engine.fairness import (
    PROTOCOL_1,
    PROTOCOL_2,
    PROTOCOLS,
    commitment,
    dealt,
    derive_seed,
    entropy_text,
    first_dealer_rule,
    seed_from_hashes,
    text_hash,
)
from engine.rng import SeedStream, shuffled
from tests.engine.deal_vectors import build

ROOT = Path(__file__).resolve().parents[2]
VECTORS: dict[str, Any] = json.loads(
    (ROOT / "tests" / "engine" / "data" / "deal_vectors.json").read_text(encoding="utf-8")
)


@pytest.fixture(scope="module")
def standalone() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "pbem_deal_verify", ROOT / "docs" / "pbem_deal_verify.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_stored_vectors_are_what_the_engine_computes() -> None:
    assert build() == VECTORS


def test_deck_order(standalone: ModuleType) -> None:
    assert VECTORS["deck"] == [c.ascii for c in full_deck()] == standalone.DECK
    assert VECTORS["deck"][:5] == ["AC", "AD", "AH", "AS", "2C"]
    assert VECTORS["deck"][-1] == "KS"


def test_commitments_and_keys(standalone: ModuleType) -> None:
    for v in VECTORS["commitments"]:
        assert commitment(v["server_seed"]) == v["commitment"]
        assert hashlib.sha256(v["server_seed"].encode()).hexdigest() == v["commitment"]
    assert VECTORS["commitments"][0]["commitment"].startswith("ba7816bf")  # SHA-256("abc")
    for v in VECTORS["keys"]:
        assert derive_seed(v["server_seed"], v["entropy"], v["protocol"]) == v["key"]
        assert hashlib.sha256(bytes.fromhex(v["bytes"])).hexdigest() == v["key"]
        assert v["sha256"] == [hashlib.sha256(t.encode()).hexdigest() for t in v["entropy"]]
        if v["protocol"] == PROTOCOL_1:
            assert standalone.derive(v["server_seed"], v["entropy"]) == v["key"]
        else:  # from the hashes alone, as for a forgotten cut
            assert seed_from_hashes(v["server_seed"], v["sha256"]) == v["key"]
            assert standalone.derive_from_hashes(v["server_seed"], v["sha256"]) == v["key"]
    assert {v["protocol"] for v in VECTORS["keys"]} == {PROTOCOL_1, PROTOCOL_2}
    assert VECTORS["keys"][0]["key"] == hashlib.sha256(b"\0\0\0\x01a\0\0\0\x01b").hexdigest()


def test_entropy_text_normalisation() -> None:
    for v in VECTORS["entropy_texts"]:
        for protocol in PROTOCOLS:
            got = entropy_text(v["message_id"], v["words"], protocol, placeholder=v["placeholder"])
            assert got == v[protocol], (v["what"], protocol)
    v2 = [v["pbem-deal/2"] for v in VECTORS["entropy_texts"]]
    assert v2[6] == "<a7@x> Caf\u00e9 \u00c5"  # NFC
    assert "\u200b" not in v2[5] and "\u202e" not in v2[5] and "\u200d" not in v2[5]
    assert len(v2[7]) == len("<a8@x> ") + 200  # code points, not UTF-16 units
    assert v2[8].endswith("a") and len(v2[8]) == len("<a9@x> ") + 199
    assert v2[10] == "<a11@x> w"
    assert v2[11] == "<no-message-id.7.0> w"
    assert text_hash("abc") == VECTORS["commitments"][0]["commitment"]


def test_the_first_blocks_of_a_labelled_stream() -> None:
    stream = VECTORS["stream"]
    words = SeedStream(stream["key"], stream["label"])
    for block in stream["blocks"]:
        data = bytes.fromhex(block["input"])
        assert data == (stream["key"].encode() + b"\0" + stream["label"].encode() + b"\0") + block[
            "counter"
        ].to_bytes(8, "big")
        assert hashlib.sha256(data).hexdigest() == block["block"]
        assert int(block["block"][:16], 16) == int(block["word"]) == words.word()


def test_below_draws_with_rejection(standalone: ModuleType) -> None:
    for v in VECTORS["below"]:
        n = int(v["n"])
        for stream in (SeedStream(v["key"], v["label"]), standalone.Stream(v["key"], v["label"])):
            assert [str(stream.below(n)) for _ in v["draws"]] == v["draws"]
        engine_stream = SeedStream(v["key"], v["label"])
        for _ in v["draws"]:
            engine_stream.below(n)
        assert engine_stream._counter == v["words_used"]
    # n = 2**63 + 1 rejects about half the words: the vector shows rejections happened.
    big = VECTORS["below"][-1]
    assert big["words_used"] > len(big["draws"])


def test_whole_shuffled_packs(standalone: ModuleType) -> None:
    for v in VECTORS["shuffles"]:
        assert [c.ascii for c in shuffled(full_deck(), v["key"], v["label"])] == v["pack"]
        assert standalone.shuffle(v["key"], v["label"]) == v["pack"]
        assert sorted(v["pack"]) == sorted(VECTORS["deck"])


def test_whole_deals_for_two_three_and_four(standalone: ModuleType) -> None:
    assert {v["players"] for v in VECTORS["deals"]} == {2, 3, 4}
    for v in VECTORS["deals"]:
        d = dealt(v["key"], v["hand"], v["players"], v["dealer"])
        assert [[c.ascii for c in h] for h in d.hands] == v["hands"]
        assert [c.ascii for c in d.crib] == v["crib"]
        assert d.starter.ascii == v["starter"]
        assert standalone.deal(v["key"], v["hand"], v["players"], v["dealer"]) == (
            v["hands"],
            v["crib"],
            v["starter"],
        )
        # One card at a time from the dealer's left, from the top of the pack.
        pack = [c.ascii for c in shuffled(full_deck(), v["key"], f"hand/{v['hand']}")]
        first_seat = (v["dealer"] + 1) % v["players"]
        assert v["hands"][first_seat][0] == pack[0]


def test_draw_rounds_with_ties(standalone: ModuleType) -> None:
    rounds = [len(v["rounds"]) for v in VECTORS["draws"]]
    assert 1 in rounds and max(rounds) >= 3
    assert any(sum(c is not None for c in v["rounds"][-1]["cards"]) == 3 for v in VECTORS["draws"])
    for v in VECTORS["draws"]:
        assert standalone.draw(v["key"], v["players"]) == (v["rounds"], v["first_dealer"])


def test_the_first_dealer_after_a_game(standalone: ModuleType) -> None:
    for v in VECTORS["first_dealer_after"]:
        args = (v["players"], v["scores"], v["winner"], v["last_dealer"])
        assert first_dealer_rule(*args) == v["first_dealer"]
        assert standalone.first_dealer_after(*args) == v["first_dealer"]


def test_protocol_3_keys_bind_the_game_the_players_and_the_seats(standalone: ModuleType) -> None:
    """docs/pbem-deal-3.md section 3: the same seed and cuts give another key for another
    game number, player count or seat; the engine and the standalone verifier agree."""
    from engine.dealkey import key_bytes_v3, key_v3

    keys = VECTORS["keys_3"]
    for v in keys:
        pairs = [(e["seat"], e["sha256"]) for e in v["entropy"]]
        assert [hashlib.sha256(e["text"].encode()).hexdigest() for e in v["entropy"]] == [
            h for _, h in pairs
        ]
        assert key_bytes_v3(v["server_seed"], v["game"], v["players"], pairs) == v["bytes"]
        assert hashlib.sha256(bytes.fromhex(v["bytes"])).hexdigest() == v["key"]
        assert key_v3(v["server_seed"], v["game"], v["players"], pairs) == v["key"]
        assert standalone.derive_v3(v["server_seed"], v["game"], v["players"], pairs) == v["key"]
    assert len({v["key"] for v in keys}) == len(keys)
    assert keys[0]["bytes"].startswith("0000000b" + b"pbem-deal/3".hex() + "000000000000000c")
    # What key_v3 refuses: a short seed, a seat twice or out of order, a boolean game.
    seed = keys[0]["server_seed"]
    digest = keys[0]["entropy"][0]["sha256"]
    for bad in (
        lambda: key_v3("abc", 1, 2, []),
        lambda: key_v3(seed.upper(), 1, 2, []),
        lambda: key_v3(seed, True, 2, []),
        lambda: key_v3(seed, 1, 5, []),
        lambda: key_v3(seed, 1, 2, [(1, digest), (0, digest)]),
        lambda: key_v3(seed, 1, 2, [(2, digest)]),
        lambda: key_v3(seed, 1, 2, [(0, "x")]),
    ):
        with pytest.raises(ValueError):
            bad()
