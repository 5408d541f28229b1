#!/usr/bin/env python3
"""Check the deals of a Cribbage game's archive, from the specification alone.

    python3 pbem_deal_verify.py ARCHIVE.json [--seat N --cut TEXT] [--previous PREV.json]

Written from docs/pbem-deal-3.md and docs/pbem-deal-1.md (pbem-deal/1, /2 and /3), with
nothing but
Python's standard library: it needs neither the service nor its rules engine. It checks
the commitment, the entropy texts and their hashes, the key, the cuts received, every
re-cut, the first dealer (the draw, or the rule after the game this one follows), and
every recorded draw, deal, crib card and starter against the key. With ``--seat N
--cut TEXT`` it first checks that the cut recorded for seat N is TEXT, the text the
player's receipt quotes. With ``--previous PREV.json`` (the archive of the game this
one follows) it checks that the ``follows`` record is that game's.

A forgotten player's cut keeps only its text's SHA-256 (``{"seat", "sha256"}``): under
pbem-deal/2 and /3 the key derives from the hashes and every check runs; under
pbem-deal/1 the key cannot be derived again, so the verdict is "not verifiable" (exit 3)
even when every other check passes against the archive's seed.

Exit 0: verified; 1: a mismatch (the first is printed); 3: not verifiable (no
commitment, or an archive without deal records) or the server seed not revealed yet.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any, TypeGuard

PROTOCOLS = ("pbem-deal/1", "pbem-deal/2", "pbem-deal/3")
P3 = "pbem-deal/3"
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
DECK = [rank + suit for rank in RANKS for suit in "CDHS"]  # spec 4.1: rank-major, CDHS
WORD = 1 << 64

OK, MISMATCH, NOT_VERIFIABLE = 0, 1, 3


SCHEMA_DIRS = [
    Path(__file__).resolve().parent.parent / "engine" / "schemas",  # in the repository
    Path(__file__).resolve().parent / "schemas",  # beside this file
]
"""Where the archive format's JSON Schema files are looked for (``--schemas DIR`` first)."""


def load_schema(protocol: str, folders: list[Path]) -> dict[str, Any]:
    """The JSON Schema of ``protocol``'s archives (``pbem-deal-N.schema.json``)."""
    name = "pbem-deal-" + protocol.rsplit("/", 1)[1] + ".schema.json"
    for folder in folders:
        if (folder / name).is_file():
            loaded: dict[str, Any] = json.loads((folder / name).read_text(encoding="utf-8"))
            return loaded
    raise FileNotFoundError(f"{name} not found in " + ", ".join(str(f) for f in folders))


def json_type(value: Any) -> str:
    """The JSON Schema type of a parsed JSON value; integers strictly (not booleans,
    not 2.0)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if type(value) is int:
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def schema_error(node: dict[str, Any], value: Any, root: dict[str, Any], where: str) -> str | None:
    """The first place ``value`` breaks the schema ``node`` (the keywords the archive
    schemas use, as JSON Schema 2020-12 defines them), or None."""
    if "$ref" in node:
        return schema_error(root["$defs"][node["$ref"].rsplit("/", 1)[1]], value, root, where)
    kind = json_type(value)
    if "type" in node and node["type"] != kind and not (node["type"] == "number" == kind):
        return f"{where}: not of type {node['type']}"
    if "const" in node and not (json_type(node["const"]) == kind and node["const"] == value):
        return f"{where}: not {node['const']!r}"
    if "enum" in node and not any(json_type(e) == kind and e == value for e in node["enum"]):
        return f"{where}: not one of the values allowed"
    if kind == "string":
        if not node.get("minLength", 0) <= len(value) <= node.get("maxLength", len(value)):
            return f"{where}: of the wrong length"
        if "pattern" in node and not re.search(node["pattern"], value):
            return f"{where}: does not match {node['pattern']}"
    if kind in ("integer", "number") and not (
        node.get("minimum", value) <= value <= node.get("maximum", value)
    ):
        return f"{where}: out of range"
    if kind == "array":
        if not node.get("minItems", 0) <= len(value) <= node.get("maxItems", len(value)):
            return f"{where}: has the wrong number of items"
        for index, item in enumerate(value):
            found = schema_error(node.get("items", {}), item, root, f"{where}.{index}")
            if found:
                return found
    if kind == "object":
        for key in node.get("required", []):
            if key not in value:
                return f"{where}: {key!r} is required"
        properties = node.get("properties", {})
        for key, item in value.items():
            if key in properties:
                found = schema_error(properties[key], item, root, f"{where}.{key}")
                if found:
                    return found
            elif node.get("additionalProperties", True) is False:
                return f"{where}: {key!r} is not allowed"
    if "anyOf" in node and all(schema_error(n, value, root, where) for n in node["anyOf"]):
        return f"{where}: not valid under any of the allowed forms"
    return None


class Failed(Exception):
    """A check failed: ``code`` is the exit status, the message says what differs."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def mismatch(check: str, detail: str, hand: int | None = None) -> Failed:
    where = f" (hand {hand})" if hand is not None else ""
    return Failed(MISMATCH, f"mismatch in check {check}{where}: {detail}")


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def derive(server_seed: str, texts: list[str]) -> str:
    """Spec 3, pbem-deal/1: K = SHA-256 over 4-byte big-endian length || UTF-8, for S
    then each text."""
    blob = b""
    for part in [server_seed, *texts]:
        data = part.encode("utf-8")
        blob += len(data).to_bytes(4, "big") + data
    return hashlib.sha256(blob).hexdigest()


def derive_from_hashes(server_seed: str, hashes: list[str]) -> str:
    """Spec 3, pbem-deal/2: K = SHA-256 over 4-byte big-endian length || UTF-8 of S, then
    the 32-byte SHA-256 of each text (given as 64 hex digits)."""
    seed = server_seed.encode("utf-8")
    blob = len(seed).to_bytes(4, "big") + seed
    for digest in hashes:
        blob += bytes.fromhex(digest)
    return hashlib.sha256(blob).hexdigest()


def derive_v3(server_seed: str, game: int, players: int, entries: list[tuple[int, str]]) -> str:
    """Spec /3, section 3: K = SHA-256 over u32be(len(P)) || P || u64be(game) ||
    u32be(players) || u32be(len(S)) || S, then u32be(seat) || the 32-byte SHA-256 of each
    text, in seat order (P = "pbem-deal/3")."""
    protocol, seed = P3.encode("utf-8"), server_seed.encode("utf-8")
    blob = len(protocol).to_bytes(4, "big") + protocol
    blob += game.to_bytes(8, "big") + players.to_bytes(4, "big")
    blob += len(seed).to_bytes(4, "big") + seed
    for seat, digest in entries:
        blob += seat.to_bytes(4, "big") + bytes.fromhex(digest)
    return hashlib.sha256(blob).hexdigest()


def is_int(value: Any) -> TypeGuard[int]:
    return type(value) is int


def is_hash(value: Any) -> bool:
    return (
        isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
    )


FORGOTTEN_NOTE = (
    "seat {seat}'s cut was forgotten at its player's request (its entropy text's SHA-256 "
    "is {digest}): the seed cannot be derived again without that text, so the deals were "
    "checked against the archive's seed"
)


class Stream:
    """Spec 4.2-4.3: the block stream of (K, label) and the unbiased below(n)."""

    def __init__(self, key: str, label: str) -> None:
        self.prefix = key.encode("utf-8") + b"\x00" + label.encode("utf-8") + b"\x00"
        self.counter = 0

    def word(self) -> int:
        block = hashlib.sha256(self.prefix + self.counter.to_bytes(8, "big")).digest()
        self.counter += 1
        return int.from_bytes(block[:8], "big")

    def below(self, n: int) -> int:
        limit = WORD - WORD % n
        while True:
            w = self.word()
            if w < limit:
                return w % n


def shuffle(key: str, label: str) -> list[str]:
    """Spec 4.4: Fisher-Yates from the last index down."""
    pack, stream = list(DECK), Stream(key, label)
    for i in range(len(pack) - 1, 0, -1):
        j = stream.below(i + 1)
        pack[i], pack[j] = pack[j], pack[i]
    return pack


def rank(card: str) -> int:
    return RANKS.index(card[:-1]) + 1


def draw(key: str, players: int) -> tuple[list[dict[str, Any]], int]:
    """Spec 5: the rounds of the draw for the first deal, and the seat that deals."""
    contenders, rounds, number = list(range(players)), [], 0
    while True:
        number += 1
        pack = shuffle(key, f"draw/{number}")
        drawn = {seat: pack[i] for i, seat in enumerate(contenders)}
        rounds.append({"round": number, "cards": [drawn.get(s) for s in range(players)]})
        low = min(rank(c) for c in drawn.values())
        contenders = [s for s, c in drawn.items() if rank(c) == low]
        if len(contenders) == 1:
            return rounds, contenders[0]


def deal(key: str, hand: int, players: int, dealer: int) -> tuple[list[list[str]], list[str], str]:
    """Spec 6: each seat's cards in the order dealt, the crib card (three players), the
    starter."""
    pack = shuffle(key, f"hand/{hand}")
    size = 6 if players == 2 else 5
    hands: list[list[str]] = [[] for _ in range(players)]
    pos = 0
    for _ in range(size):
        for step in range(1, players + 1):
            hands[(dealer + step) % players].append(pack[pos])
            pos += 1
    crib = []
    if players == 3:
        crib = [pack[pos]]
        pos += 1
    return hands, crib, pack[pos]


def first_dealer_after(players: int, scores: list[int], winner: int, last: int) -> int:
    """Spec 7: loser deals first."""
    order = [(last + step) % players for step in range(1, players + 1)]

    def side(seat: int) -> int:
        return seat % 2 if players == 4 else seat

    losers = [seat for seat in order if side(seat) != winner]
    return min(losers, key=lambda seat: (scores[side(seat)], order.index(seat)))


def digest_of(entry: Any) -> str | None:
    """The SHA-256 an entropy entry or a cut stands for: its text's, or, with no text
    (a forgotten player's), the one recorded; None when it has neither."""
    if not isinstance(entry, dict):
        return None
    if "text" in entry:
        return sha256_hex(entry["text"]) if isinstance(entry["text"], str) else None
    return entry["sha256"] if is_hash(entry.get("sha256")) else None


def check_entropy(entries: Any, players: int, check: str) -> list[tuple[int, str | None, str]]:
    """Spec 8, step 2: each entry (seat, text or None when forgotten, SHA-256)."""
    if not isinstance(entries, list):
        raise mismatch(check, "the entropy is not a list")
    out: list[tuple[int, str | None, str]] = []
    for entry in entries:
        digest = digest_of(entry)
        if digest is None:
            raise mismatch(check, "an entropy entry has no text")
        seat = entry.get("seat")
        if type(seat) is not int or not 0 <= seat < players:
            raise mismatch(check, f"an entropy entry names no seat of the game: {seat!r}")
        if "sha256" in entry and entry["sha256"] != digest:
            raise mismatch(check, f"the SHA-256 recorded for seat {seat}'s cut is not its text's")
        out.append((seat, entry.get("text"), digest))
    seats = [seat for seat, _, _ in out]
    if seats != sorted(set(seats)):
        raise mismatch(check, "the entropy entries are not in seat order, one per seat")
    return out


def check_v3_form(archive: dict[str, Any], proof: dict[str, Any], players: int) -> None:
    """Spec /3: S is 64 lowercase hex digits, the proof names its game by number, and
    the archive lists its computer seats ([] for none), each a seat of the game, once."""
    if not is_hash(proof.get("server_seed")):
        raise mismatch("commitment", "a pbem-deal/3 server seed is exactly 64 lowercase hex digits")
    game = proof.get("game")
    if not is_int(game) or game < 0:
        raise mismatch("game", f"the deal proof names no game number: {game!r}")
    computer = archive.get("computer")
    if not isinstance(computer, list):
        raise mismatch("computer", "a pbem-deal/3 archive lists its computer seats ([] for none)")
    seats = [c.get("seat") if isinstance(c, dict) else None for c in computer]
    if not all(is_int(s) and 0 <= s < players for s in seats) or len(set(seats)) != len(seats):
        raise mismatch("computer", "the computer list names a seat twice, or no seat of the game")
    if archive.get("seed") is not None and not ("draws" in proof and "deals" in proof):
        raise mismatch("records", "a dealt pbem-deal/3 game records its draws and deals")


def check_missing(
    archive: dict[str, Any], proof: dict[str, Any], players: int, cut: list[int]
) -> None:
    """Spec /3: a game never dealt lists the human seats whose cut was missing (not
    empty); a dealt game lists none."""
    robots = {c.get("seat") for c in archive["computer"]}
    want = [s for s in range(players) if s not in robots and s not in cut]
    missing = proof.get("missing", [])
    if archive.get("seed") is None:
        if not want:
            raise mismatch("missing", "every human seat cut, yet the game says it was never dealt")
        if missing != want:
            raise mismatch(
                "missing", f"the seats whose cut was missing are {want}, not {missing!r}"
            )
    elif missing not in ([], None):
        raise mismatch("missing", "a dealt game names a missing cut")


def check_previous(archive: dict[str, Any], previous: Any) -> None:
    """Spec /3, section 7: ``follows`` is the previous game's: its number, commitment,
    final state hash, last dealer and the result its archive records (that archive must
    verify first)."""
    try:
        verify(previous)
    except Failed as exc:
        raise mismatch("previous", f"the previous game's archive does not verify: {exc}") from None
    proof, before = archive["deal_proof"], previous["deal_proof"]
    follows = proof.get("follows")
    if not isinstance(follows, dict):
        raise mismatch("previous", "the game follows no other game, yet an archive was given")
    number = before.get("game") if before.get("protocol") == P3 else previous.get("game_id")
    if follows.get("game") != number:
        raise mismatch("previous", f"it follows game {follows.get('game')!r}, not {number!r}")
    if follows.get("state_hash") != previous.get("state_hash"):
        raise mismatch("previous", "the state hash it records is not the previous game's")
    if ("commitment" in follows or proof["protocol"] == P3) and follows.get(
        "commitment"
    ) != before.get("commitment"):
        raise mismatch("previous", "the commitment it records is not the previous game's")
    deals = before.get("deals")
    if deals and isinstance(deals[-1], dict) and follows.get("dealer") != deals[-1].get("dealer"):
        raise mismatch("previous", "the last dealer it records is not the previous game's")
    result = before.get("result")
    if not isinstance(result, dict):
        raise mismatch("previous", "the previous archive records no result")
    if [follows.get("scores"), follows.get("winner")] != [
        result.get("scores"),
        result.get("winner"),
    ]:
        raise mismatch("previous", "the scores and winner it records are not the previous game's")


def verify(
    archive: Any,
    seat: int | None = None,
    cut: str | None = None,
    schemas: list[Path] | None = SCHEMA_DIRS,
) -> str:
    """The verdict line on success; Failed otherwise (spec 8, step by step). The archive
    is first checked against its protocol's JSON Schema, looked for in ``schemas``
    (None: not checked)."""
    if (
        not isinstance(archive, dict)
        or archive.get("format") != "pbem-cribbage/1"
        or not all(key in archive for key in ("settings", "seed", "actions"))
        or not isinstance(archive["settings"], dict)
        or not isinstance(archive["actions"], list)
    ):
        raise mismatch("archive", "not a pbem-cribbage/1 game archive")
    proof = archive.get("deal_proof")
    if proof is None:
        raise Failed(NOT_VERIFIABLE, "this game's deals are not verifiable (no commitment)")
    if not isinstance(proof, dict) or proof.get("protocol") not in PROTOCOLS:
        raise mismatch("archive", "the deal_proof is not one of " + ", ".join(PROTOCOLS))
    if schemas is not None:
        schema = load_schema(proof["protocol"], schemas)
        wrong = schema_error(schema, archive, schema, "archive")
        if wrong:
            raise mismatch("schema", wrong)
    commit, server_seed = proof.get("commitment"), proof.get("server_seed")
    if not isinstance(commit, str) or not (server_seed is None or isinstance(server_seed, str)):
        raise mismatch("archive", "the commitment and server seed must be strings")
    players = archive["settings"].get("players", 2)
    if players not in (2, 3, 4):
        raise mismatch("records", f"a game of cribbage is for 2, 3 or 4 players, not {players!r}")
    if seat is not None:
        raw = proof.get("entropy")
        entries = {
            e.get("seat"): e for e in (raw if isinstance(raw, list) else []) if isinstance(e, dict)
        }
        if seat not in entries:
            raise mismatch("cut", f"no cut is recorded for seat {seat}")
        entry = entries[seat]
        if "text" not in entry:  # forgotten: the receipt's text must have the recorded hash
            if entry.get("sha256") != sha256_hex(str(cut)):
                raise mismatch(
                    "cut",
                    f"the cut recorded for seat {seat} (forgotten, its SHA-256 "
                    f"{entry.get('sha256')}) is not the receipt's {cut!r}",
                )
        elif entry["text"] != cut:
            raise mismatch(
                "cut",
                f"the cut recorded for seat {seat} is {entry['text']!r}, the receipt says {cut!r}",
            )
        print(f"seat {seat}'s cut as recorded is the text of the receipt")
    if server_seed is None:
        raise Failed(
            NOT_VERIFIABLE,
            "the server seed is not revealed yet: the deals can be checked once the game is over",
        )
    # Step 1: the commitment.
    if sha256_hex(server_seed) != commit:
        raise mismatch("commitment", "SHA-256 of the server seed is not the commitment")
    v3 = proof["protocol"] == P3
    if v3:
        check_v3_form(archive, proof, players)
    # Step 2: one cut per human seat, in seat order, each hash its text's.
    entropy = check_entropy(proof.get("entropy", []), players, "entropy")
    computer = archive.get("computer")
    if isinstance(computer, list):
        robots = {c.get("seat") for c in computer if isinstance(c, dict)}
        humans = [s for s in range(players) if s not in robots]
        seats = [s for s, _, _ in entropy]
        # A game never dealt may have stopped before every human seat cut.
        if (not set(seats) <= set(humans)) if archive.get("seed") is None else seats != humans:
            raise mismatch("entropy", f"the entropy is not one cut per human seat {humans}")
    if v3:
        check_missing(archive, proof, players, [s for s, _, _ in entropy])
    # Step 3: the key (none for a game aborted before every human seat cut).
    never_dealt = archive.get("seed") is None
    notes: list[str] = []
    if v3:
        pairs = [(who, digest) for who, _, digest in entropy]
        key = derive_v3(server_seed, proof["game"], players, pairs)
    elif proof["protocol"] == "pbem-deal/2":
        key = derive_from_hashes(server_seed, [digest for _, _, digest in entropy])
    elif any(text is None for _, text, _ in entropy):
        # pbem-deal/1 with a forgotten cut: the key cannot be derived again.
        key = str(archive.get("seed"))
        notes = [
            FORGOTTEN_NOTE.format(seat=who, digest=digest)
            for who, text, digest in entropy
            if text is None
        ]
    else:
        key = derive(server_seed, [str(text) for _, text, _ in entropy])
    if never_dealt:
        if proof.get("outcome") != "aborted":
            raise mismatch("seed", "the archive has no seed, yet the game was not aborted")
    elif key != archive.get("seed"):
        raise mismatch(
            "seed", f"the server seed and the entropy give {key}, not the archive's seed"
        )
    # Step 4: the cuts received.
    if "cuts" in proof:
        cuts = proof["cuts"]
        last: dict[int, str] = {}
        for number, item in enumerate(cuts if isinstance(cuts, list) else [None], start=1):
            digest = digest_of(item)
            if digest is None:
                raise mismatch("cuts", f"cut {number} has no text")
            who = item.get("seat")
            if type(who) is not int or not 0 <= who < players:
                raise mismatch("cuts", f"cut {number} names no seat of the game: {who!r}")
            if "sha256" in item and item["sha256"] != digest:
                raise mismatch("cuts", f"the SHA-256 recorded for cut {number} is not its text's")
            if item.get("accepted") is True:
                last[who] = digest
        # Compared by their SHA-256 (a forgotten player's cut keeps only that).
        for who, _, digest in entropy:
            if who not in last:
                raise mismatch("cuts", f"seat {who}'s cut is not among the cuts received")
            if last[who] != digest:
                raise mismatch("cuts", f"seat {who}'s last accepted cut is not its entropy text")
    # Step 5: every re-cut reveals its seed.
    for number, recut in enumerate(proof.get("recuts") or [], start=1):
        if not isinstance(recut, dict):
            raise mismatch("recut", f"re-cut {number} is not an object")
        seed, rcommit = recut.get("server_seed"), recut.get("commitment")
        if not isinstance(seed, str) or not isinstance(rcommit, str):
            raise mismatch("recut", f"re-cut {number} does not reveal its server seed")
        if sha256_hex(seed) != rcommit:
            raise mismatch(
                "recut", f"re-cut {number}: SHA-256 of its server seed is not its commitment"
            )
        check_entropy(recut.get("entropy") or [], players, "recut")
    # Step 6: the first dealer.
    first = archive["settings"].get("first_dealer")
    if "follows" in proof:
        follows = proof["follows"]
        if follows is None:
            if first is not None:
                raise mismatch(
                    "first_dealer", f"the game follows no other, yet seat {first} deals first"
                )
        else:
            if not isinstance(follows, dict) or follows.get("rule") != "loser-deals-first":
                raise mismatch("first_dealer", "the game it follows has no known rule")
            scores, winner, last_dealer = (
                follows.get("scores"),
                follows.get("winner"),
                follows.get("dealer"),
            )
            sides = 2 if players == 4 else players
            if not (
                isinstance(scores, list)
                and len(scores) == sides
                and all(type(s) is int for s in scores)
                and type(winner) is int
                and 0 <= winner < sides
            ):
                raise mismatch("first_dealer", "the game it follows has no scores or winner")
            if type(last_dealer) is not int or not 0 <= last_dealer < players:
                if players != 2:
                    raise mismatch("first_dealer", "the game it follows names no last dealer")
                last_dealer = winner
            want = first_dealer_after(players, scores, winner, last_dealer)
            if first != want:
                raise mismatch(
                    "first_dealer", f"seat {first} deals first; the rule gives seat {want}"
                )
    # Step 7: the records against the key.
    if never_dealt:
        if archive.get("actions"):
            raise mismatch("replay", "a game never dealt has actions")
        if proof.get("draws") or proof.get("deals"):
            raise mismatch("records", "a game never dealt has deal records")
        return "aborted before the deal: nothing was dealt, and the server seed is revealed"
    if "deals" not in proof:
        raise Failed(
            NOT_VERIFIABLE,
            "this archive records no deals (written before they were recorded): "
            "check it with a rules engine (pbem verify)",
        )
    draws, deals = proof.get("draws"), proof.get("deals")
    if not isinstance(draws, list) or not isinstance(deals, list):
        raise mismatch("records", "the revealed archive has no draws and deals")
    if first is None:
        rounds, first = draw(key, players)
        if draws != rounds:
            raise mismatch("draw", "the draw for the first deal is not the key's", 0)
    elif draws:
        raise mismatch("draw", "a draw is recorded though the first dealer was not drawn", 0)
    if not deals:
        raise mismatch("records", "no deal is recorded")
    dealer = first
    for hand, record in enumerate(deals, start=1):
        if not isinstance(record, dict) or record.get("hand") != hand:
            raise mismatch("records", f"deal {hand} is not numbered {hand}", hand)
        if record.get("dealer") != dealer:
            raise mismatch(
                "dealer", f"seat {record.get('dealer')} deals; the turn is seat {dealer}'s", hand
            )
        hands, crib, starter = deal(key, hand, players, dealer)
        got = record.get("hands")
        if not isinstance(got, list) or len(got) != players:
            raise mismatch("deal", "not every seat's cards are recorded", hand)
        for who in range(players):
            if got[who] != hands[who]:
                raise mismatch("deal", f"seat {who}'s dealt cards are not the key's", hand)
        if record.get("crib") != crib:
            raise mismatch("crib", "the crib's dealt card is not the key's", hand)
        if record.get("starter") is None:
            if hand != len(deals):
                raise mismatch("starter", "no starter is recorded for a hand that was played", hand)
        elif record.get("starter") != starter:
            raise mismatch(
                "starter", f"the starter is {record.get('starter')}, the key gives {starter}", hand
            )
        dealer = (dealer + 1) % players
    if notes:  # pbem-deal/1 with a forgotten cut: checked against a seed not derived
        raise Failed(NOT_VERIFIABLE, "not verifiable: " + " ".join(notes))
    return f"all {len(deals)} deals verified"


# -- The player's own mail (docs/pbem-deal-3.md section 11) ---------------------------

_HEXS = r"([0-9a-f](?: ?[0-9a-f]){63})"
MAIL_PATTERNS = {
    "subject": re.compile(r"\[Cribbage (\d+)\]"),
    "commitment": re.compile(r"Deal commitment \((pbem-deal/\d)\): " + _HEXS),
    "next": re.compile(r"The next game's deal commitment: " + _HEXS),
    "receipt": re.compile(r"recorded as \u201c(.*?)\u201d \(SHA-256 " + _HEXS + r"\)"),
    "cuts": re.compile(r"Cuts as recorded \(SHA-256, first (\d+) hex digits\): (.*?)\.(?: |$)"),
}


LINKED = "commitment in the mail you answered with your cut"


def read_mails(path: Path) -> list[tuple[str, str, str, str]]:
    """Each saved mail's subject, plain text, Message-ID and In-Reply-To: a Maildir
    folder, a folder of .eml files, an mbox file or one .eml file."""
    import mailbox
    from email import message_from_bytes, policy

    def text_of(raw: bytes) -> tuple[str, str, str, str]:
        msg: Any = message_from_bytes(raw, policy=policy.default)
        body = msg.get_body(preferencelist=("plain",))
        try:
            text = body.get_content() if body is not None else ""
        except (LookupError, ValueError):
            text = ""
        return (
            str(msg.get("Subject", "")),
            str(text),
            str(msg.get("Message-ID", "") or ""),
            str(msg.get("In-Reply-To", "") or ""),
        )

    if path.is_dir() and (path / "cur").is_dir():
        box = mailbox.Maildir(str(path), create=False)
        return [text_of(box.get_bytes(key)) for key in box.iterkeys()]
    if path.is_dir():
        return [text_of(f.read_bytes()) for f in sorted(path.glob("*.eml"))]
    raw = path.read_bytes()
    if raw.startswith(b"From "):
        mbox = mailbox.mbox(str(path), create=False)
        return [text_of(mbox.get_bytes(key)) for key in mbox.iterkeys()]
    return [text_of(raw)]


def mail_id(header: str) -> str:
    """A Message-ID as a cut's entropy text starts with it: every character outside
    U+0021-U+007E deleted, its < > ends put back; "" for none."""
    core = re.sub(r"[^\x21-\x7e]", "", header).strip("<>")
    return f"<{core}>" if core else ""


def check_answered(
    proof: dict[str, Any], mails: list[tuple[str, str, str, str]]
) -> tuple[int, list[str]]:
    """Spec section 11, the link through the player's own sent answer: a saved mail whose
    Message-ID starts a recorded cut text answered (In-Reply-To) a saved mail without a
    game number (an invitation); each "Deal commitment (P): C" it showed is the
    archive's. How many such mails, and the problems."""
    listed = proof.get("entropy")
    entries = [e for e in (listed if isinstance(listed, list) else []) if isinstance(e, dict)]
    cut_ids = {e["text"].split(" ", 1)[0] for e in entries if isinstance(e.get("text"), str)}
    by_id = {mail_id(m[2]): m for m in mails if mail_id(m[2])}
    answered: dict[str, tuple[str, str, str, str]] = {}
    for mail in mails:
        if mail_id(mail[2]) not in cut_ids:
            continue
        for parent in (mail_id(x) for x in re.findall(r"<[^<>]*>", mail[3])):
            if parent in by_id and not MAIL_PATTERNS["subject"].search(by_id[parent][0] or ""):
                answered[parent] = by_id[parent]
    count, problems = 0, []
    for mail in answered.values():
        shown = list(MAIL_PATTERNS["commitment"].finditer(" ".join(mail[1].split())))
        count += 1 if shown else 0
        for found in shown:
            commit = found.group(2).replace(" ", "")
            if found.group(1) != proof.get("protocol"):
                problems.append(
                    f"the invitation you answered with your cut named the protocol "
                    f"{found.group(1)}, the archive {proof.get('protocol')}"
                )
            if commit != proof.get("commitment"):
                problems.append(
                    f"the invitation you answered with your cut showed commitment {commit}, "
                    f"the archive's is {proof.get('commitment')}: the server seed was "
                    "changed after it was shown"
                )
    return count, problems


def check_mail(archive: dict[str, Any], mails: list[tuple[str, str, str, str]]) -> str:
    """Spec section 11: the archive against what the player's mails showed; the line
    saying what was checked, or Failed (check "mail")."""
    proof = archive.get("deal_proof")
    proof = proof if isinstance(proof, dict) else {}
    game = proof.get("game") if proof.get("protocol") == P3 else archive.get("game_id")
    follows = proof.get("follows") if isinstance(proof.get("follows"), dict) else {}
    before = follows.get("game") if follows else None
    seated = archive.get("players")
    players: list[Any] = seated if isinstance(seated, list) else []
    names = [str(p.get("name")) if isinstance(p, dict) else "" for p in players]
    listed = proof.get("entropy")
    entries = [e for e in (listed if isinstance(listed, list) else []) if isinstance(e, dict)]
    linked, problems = check_answered(proof, mails)
    counts = {"commitment": 0, "receipt": 0, "cut hashes": 0, "game": 0}
    counts[LINKED] = linked
    for subject, text, _, _ in mails:
        number = MAIL_PATTERNS["subject"].search(subject or "")
        if number is None:
            continue
        shown, body = int(number.group(1)), " ".join(text.split())
        if before is not None and shown == before:
            for found in MAIL_PATTERNS["next"].finditer(body):
                counts["commitment"] += 1
                if found.group(1).replace(" ", "") != proof.get("commitment"):
                    problems.append(
                        f"game {before}'s game-over mail showed another next commitment"
                    )
            continue
        if shown != game:
            continue
        counts["game"] += 1
        for found in MAIL_PATTERNS["commitment"].finditer(body):
            counts["commitment"] += 1
            if found.group(1) != proof.get("protocol"):
                problems.append(f"the mail named the protocol {found.group(1)}")
            if found.group(2).replace(" ", "") != proof.get("commitment"):
                problems.append(
                    "the mail showed another commitment: the server seed was changed after "
                    "it was shown"
                )
        for found in MAIL_PATTERNS["receipt"].finditer(body):
            counts["receipt"] += 1
            digest = found.group(2).replace(" ", "")
            entry = next((e for e in entries if e.get("sha256") == digest), None)
            if entry is None or ("text" in entry and entry["text"] != found.group(1)):
                problems.append(
                    f"the cut the mail's receipt quotes (\u201c{found.group(1)}\u201d) "
                    "is not recorded"
                )
        for found in MAIL_PATTERNS["cuts"].finditer(body):
            counts["cut hashes"] += 1
            for part in found.group(2).split("; "):
                who, _, start = part.rpartition(" ")
                seat = (
                    int(who[5:])
                    if who.startswith("seat ") and who[5:].isdigit()
                    else (names.index(who) if who in names else None)
                )
                entry = next((e for e in entries if e.get("seat") == seat), None)
                if seat is None:
                    problems.append(f"the mail names {who!r}, who is no player of the archive")
                elif entry is None or not str(entry.get("sha256", "")).startswith(start):
                    problems.append(
                        f"the mail showed {who}'s cut as {start}\u2026, the archive records another"
                    )
    if not counts["game"] and not counts["commitment"] and not linked:
        problems.append(f"no saved mail is of game {game}")
    if problems:  # each once, however many mails show it
        raise mismatch("mail", "; ".join(dict.fromkeys(problems)))
    done = [f"{what} ({n} mail{'s' if n != 1 else ''})" for what, n in counts.items() if n]
    if counts["game"] and (counts["cut hashes"] or counts["receipt"]):
        done.append("seats")
    return "checked: the player's mail: " + ", ".join(done)


_UNREADABLE = object()


def _read_json(path: str) -> Any:
    """The JSON in ``path``, or `_UNREADABLE` (the error said on stderr)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as exc:
        print(f"error: cannot read {path}: {exc}", file=sys.stderr)
        return _UNREADABLE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("archive", help="the game's JSON archive")
    parser.add_argument("--seat", type=int, help="with --cut: the seat whose cut to check")
    parser.add_argument("--cut", help="with --seat: the cut text the player's receipt quotes")
    parser.add_argument("--previous", help="the archive of the game this one follows")
    parser.add_argument(
        "--mail", help="the player's saved mails of the game: .eml files, an mbox or a Maildir"
    )
    parser.add_argument(
        "--schemas",
        help="the folder of the pbem-deal-N.schema.json files (default: the repository's "
        "engine/schemas, or schemas/ beside this file)",
    )
    args = parser.parse_args(argv)
    schemas = [Path(args.schemas)] if args.schemas else SCHEMA_DIRS
    if (args.seat is None) != (args.cut is None):
        parser.error("--seat and --cut go together")
    archive = _read_json(args.archive)
    if archive is _UNREADABLE:
        return MISMATCH
    previous = _read_json(args.previous) if args.previous else None
    if previous is _UNREADABLE:
        return MISMATCH
    mails = None
    if args.mail:
        try:
            mails = read_mails(Path(args.mail))
        except OSError as exc:
            print(f"error: cannot read the mail in {args.mail}: {exc}", file=sys.stderr)
            return MISMATCH
    try:
        try:
            said = verify(archive, args.seat, args.cut, schemas)
        except Failed as exc:
            # What the mail shows is checked even when the deals cannot be (yet).
            if exc.code == NOT_VERIFIABLE and mails is not None:
                check_mail(archive, mails)
            raise
        if previous is not None:
            check_previous(archive, previous)
            said += "\nchecked: the follows record against the previous game's archive"
        if mails is not None:
            said += "\n" + check_mail(archive, mails)
        print(said)
    except Failed as exc:
        print(exc, file=sys.stderr)
        return exc.code
    except FileNotFoundError as exc:
        print(f"error: the archive format's schema: {exc}", file=sys.stderr)
        return 2
    return OK


if __name__ == "__main__":
    sys.exit(main())
