#!/usr/bin/env python3
"""Check the deals of a Cribbage game's archive, from the specification alone.

    python3 pbem_deal_verify.py ARCHIVE.json [--seat N --cut TEXT]

Written from docs/pbem-deal-1.md (pbem-deal/1 and pbem-deal/2), with nothing but
Python's standard library: it needs neither the service nor its rules engine. It checks
the commitment, the entropy texts and their hashes, the key, the cuts received, every
re-cut, the first dealer (the draw, or the rule after the game this one follows), and
every recorded draw, deal, crib card and starter against the key. With ``--seat N
--cut TEXT`` it first checks that the cut recorded for seat N is TEXT, the text the
player's receipt quotes.

A forgotten player's cut keeps only its text's SHA-256 (``{"seat", "sha256"}``): under
pbem-deal/2 the key derives from the hashes and every check runs; under pbem-deal/1 the
deals are checked against the archive's seed instead, and a note says so.

Exit 0: verified; 1: a mismatch (the first is printed); 3: not verifiable (no
commitment, or an archive without deal records) or the server seed not revealed yet.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from typing import Any

PROTOCOLS = ("pbem-deal/1", "pbem-deal/2")
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
DECK = [rank + suit for rank in RANKS for suit in "CDHS"]  # spec 4.1: rank-major, CDHS
WORD = 1 << 64

OK, MISMATCH, NOT_VERIFIABLE = 0, 1, 3


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


def verify(archive: Any, seat: int | None = None, cut: str | None = None) -> str:
    """The verdict line on success; Failed otherwise (spec 8, step by step)."""
    if not isinstance(archive, dict) or not isinstance(archive.get("settings"), dict):
        raise mismatch("archive", "not a game archive")
    proof = archive.get("deal_proof")
    if proof is None:
        raise Failed(NOT_VERIFIABLE, "this game's deals are not verifiable (no commitment)")
    if not isinstance(proof, dict) or proof.get("protocol") not in PROTOCOLS:
        raise mismatch("archive", "the deal_proof is not one of " + ", ".join(PROTOCOLS))
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
    # Step 3: the key (none for a game aborted before every human seat cut).
    never_dealt = archive.get("seed") is None
    notes: list[str] = []
    if proof["protocol"] == "pbem-deal/2":
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
    return "\n".join([f"all {len(deals)} deals verified", *(f"note: {n}" for n in notes)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("archive", help="the game's JSON archive")
    parser.add_argument("--seat", type=int, help="with --cut: the seat whose cut to check")
    parser.add_argument("--cut", help="with --seat: the cut text the player's receipt quotes")
    args = parser.parse_args(argv)
    if (args.seat is None) != (args.cut is None):
        parser.error("--seat and --cut go together")
    try:
        with open(args.archive, encoding="utf-8") as handle:
            archive = json.load(handle)
    except (OSError, ValueError) as exc:
        print(f"error: cannot read {args.archive}: {exc}", file=sys.stderr)
        return MISMATCH
    try:
        print(verify(archive, args.seat, args.cut))
    except Failed as exc:
        print(exc, file=sys.stderr)
        return exc.code
    return OK


if __name__ == "__main__":
    sys.exit(main())
