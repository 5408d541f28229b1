"""The test vectors of ``docs/pbem-deal-1.md``, computed by the engine.

    python -m tests.engine.deal_vectors > tests/engine/data/deal_vectors.json

`tests/engine/test_deal_vectors.py` checks that the stored file is what the engine
computes today and that the standalone verifier, written from the specification,
computes the same.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from engine.cards import full_deck
from engine.dealkey import PROTOCOL_3, key_bytes_v3, key_v3
from engine.fairness import (
    PROTOCOL_1,
    PROTOCOL_2,
    commitment,
    dealt,
    derive_seed,
    entropy_text,
    expected_draws,
    first_dealer_rule,
)
from engine.rng import SeedStream, shuffled

SERVER_SEED = "9f2c" * 16
CUTS = ["<cut-1@mail.example> 17 lucky cats", "<cut-2@mail.example>"]
KEY = derive_seed(SERVER_SEED, CUTS, PROTOCOL_1)
"""K1 of the specification: the key the stream, shuffle and deal vectors use."""

NORMALISATION = [
    # (what it shows, Message-ID, words)
    ("plain words", "<a1@mail.example>", "17 lucky cats"),
    ("no words: the Message-ID alone", "<a2@mail.example>", ""),
    ("a Message-ID without brackets gets them", "a3@mail.example", "x"),
    (
        "runs of whitespace (tab, newline, NBSP, ideographic space)",
        "<a4@x>",
        " a\t\tb\n\u00a0c\u3000d ",
    ),
    ("controls (NUL, ESC, DEL, NEL) become spaces", "<a5@x>", "\x00red\x1b[31m\x7fgo\x85on"),
    (
        "format characters deleted (ZWSP, RLO, soft hyphen, ZWJ, BOM)",
        "<a6@x>",
        "a\u200bb \u202egnp.exe c\u00add \U0001f468\u200d\U0001f469 \ufeffz",
    ),
    ("NFC: e + combining acute is é; Å (U+212B) is U+00C5", "<a7@x>", "Cafe\u0301 \u212b"),
    ("200 code points kept (astral characters count one)", "<a8@x>", "\U0001f0a1" * 250),
    ("cut at 200, the end trimmed again", "<a9@x>", "a" * 199 + " bcd"),
    ("line and paragraph separators", "<a10@x>", "one\u2028two\u2029three"),
    ("a Message-ID with spaces and controls inside", " <a11 @x\x00> ", "w"),
    ("a Message-ID of nothing takes the placeholder", "\x00 ", "w"),
]


def _hex(data: bytes) -> str:
    return data.hex()


def _key(server_seed: str, texts: list[str], protocol: str) -> dict[str, Any]:
    """A key vector: the texts, their SHA-256 (what ``pbem-deal/2`` derives from; a
    forgotten cut keeps only that), the bytes hashed and the key."""
    seed = server_seed.encode("utf-8")
    blob = len(seed).to_bytes(4, "big") + seed
    for text in texts:
        data = text.encode("utf-8")
        if protocol == PROTOCOL_2:
            blob += hashlib.sha256(data).digest()
        else:
            blob += len(data).to_bytes(4, "big") + data
    key = derive_seed(server_seed, texts, protocol)
    assert key == hashlib.sha256(blob).hexdigest()
    return {
        "protocol": protocol,
        "server_seed": server_seed,
        "entropy": texts,
        "sha256": [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts],
        "bytes": _hex(blob),
        "key": key,
    }


def build() -> dict[str, Any]:
    """Every vector, as the engine computes it."""
    deck = [c.ascii for c in full_deck()]
    stream = SeedStream(KEY, "hand/1")
    blocks = []
    for i in range(3):
        data = KEY.encode() + b"\x00" + b"hand/1" + b"\x00" + i.to_bytes(8, "big")
        digest = hashlib.sha256(data).digest()
        word = stream.word()
        assert word == int.from_bytes(digest[:8], "big")
        blocks.append({"counter": i, "input": _hex(data), "block": _hex(digest), "word": str(word)})
    below = []
    for label, n, count in (("hand/1", 52, 6), ("draw/1", 13, 4), ("x", 2**63 + 1, 6)):
        s = SeedStream(KEY, label)
        draws = [s.below(n) for _ in range(count)]
        below.append(
            {
                "key": KEY,
                "label": label,
                "n": str(n),
                "draws": [str(d) for d in draws],
                "words_used": s._counter,
            }
        )
    shuffles = [
        {"key": KEY, "label": label, "pack": [c.ascii for c in shuffled(full_deck(), KEY, label)]}
        for label in ("hand/1", "hand/2", "draw/1")
    ]
    deals = []
    for players, hand, dealer in ((2, 1, 0), (2, 2, 1), (3, 1, 2), (4, 3, 1)):
        d = dealt(KEY, hand, players, dealer)
        deals.append(
            {
                "key": KEY,
                "players": players,
                "hand": hand,
                "dealer": dealer,
                "hands": [[c.ascii for c in h] for h in d.hands],
                "crib": [c.ascii for c in d.crib],
                "starter": d.starter.ascii,
            }
        )
    return {
        "spec": "docs/pbem-deal-1.md",
        "deck": deck,
        "commitments": [
            {"server_seed": seed, "commitment": commitment(seed)} for seed in ("abc", SERVER_SEED)
        ],
        "entropy_texts": [
            {
                "what": what,
                "message_id": mid,
                "words": words,
                "placeholder": "<no-message-id.7.0>",
                PROTOCOL_3: entropy_text(mid, words, PROTOCOL_3, placeholder="<no-message-id.7.0>"),
                PROTOCOL_2: entropy_text(mid, words, PROTOCOL_2, placeholder="<no-message-id.7.0>"),
                PROTOCOL_1: entropy_text(mid, words, PROTOCOL_1, placeholder="<no-message-id.7.0>"),
            }
            for what, mid, words in NORMALISATION
        ],
        "keys": [
            _key(seed, texts, protocol)
            for protocol in (PROTOCOL_1, PROTOCOL_2)
            for seed, texts in (
                ("a", ["b"]),
                (SERVER_SEED, []),
                (SERVER_SEED, CUTS),
                (SERVER_SEED, ["<c@x> Grüße ♥ 🂡"]),
            )
        ],
        "keys_3": [
            _key3(game, players, list(zip(seats, CUTS, strict=False)))
            for game, players, seats in (
                (12, 2, (0, 1)),
                (13, 2, (0, 1)),
                (12, 3, (0, 2)),
                (5, 2, ()),
            )
        ],
        "stream": {"key": KEY, "label": "hand/1", "blocks": blocks},
        "below": below,
        "shuffles": shuffles,
        "deals": deals,
        "draws": [_draw(key, players) for key, players in _draw_keys()],
        "first_dealer_after": [
            {"players": p, "scores": s, "winner": w, "last_dealer": d, "first_dealer": f}
            for p, s, w, d in (
                (2, [61, 40], 0, 1),
                (2, [52, 61], 1, 1),
                (3, [61, 50, 50], 0, 0),
                (3, [61, 50, 50], 0, 1),
                (3, [44, 61, 58], 1, 2),
                (4, [61, 30], 0, 0),
                (4, [61, 30], 0, 3),
                (4, [12, 61], 1, 1),
            )
            for f in [first_dealer_rule(p, s, w, d)]
        ],
    }


def _key3(game: int, players: int, cut: list[tuple[int, str]]) -> dict[str, Any]:
    """A ``pbem-deal/3`` key vector: the game, the players, each cut's seat and text."""
    pairs = [(seat, hashlib.sha256(text.encode()).hexdigest()) for seat, text in cut]
    return {
        "protocol": PROTOCOL_3,
        "server_seed": SERVER_SEED,
        "game": game,
        "players": players,
        "entropy": [
            {"seat": seat, "text": text, "sha256": h}
            for (seat, text), (_, h) in zip(cut, pairs, strict=True)
        ],
        "bytes": key_bytes_v3(SERVER_SEED, game, players, pairs),
        "key": key_v3(SERVER_SEED, game, players, pairs),
    }


def _draw(key: str, players: int) -> dict[str, Any]:
    rounds: list[dict[str, Any]] = []
    n = 1
    while True:
        last = expected_draws(key, players, n)[-1]
        low = min(c.rank for c in last.values())
        lowest = [s for s, c in last.items() if c.rank == low]
        if len(lowest) == 1:
            break
        n += 1
    for number, drawn in enumerate(expected_draws(key, players, n), start=1):
        rounds.append(
            {
                "round": number,
                "cards": [drawn[s].ascii if s in drawn else None for s in range(players)],
            }
        )
    return {"key": key, "players": players, "rounds": rounds, "first_dealer": lowest[0]}


def _draw_keys() -> list[tuple[str, int]]:
    """Keys whose draws show no tie, a tie, two ties, and a tie of three (found by
    counting up)."""
    out = [(KEY, 2)]
    wanted = [(2, 2, 2), (3, 3, 2), (4, 2, 3)]  # players, rounds, contenders in round 2
    for players, rounds, tied in wanted:
        i = 0
        while True:
            key = derive_seed(SERVER_SEED, [f"<tie-{i}@x>"], PROTOCOL_1)
            found = _draw(key, players)["rounds"]
            if len(found) >= rounds and sum(c is not None for c in found[1]["cards"]) >= tied:
                out.append((key, players))
                break
            i += 1
    return out


if __name__ == "__main__":
    print(json.dumps(build(), indent=1, ensure_ascii=False))
