"""Verifying an archive's deals, step by step as ``docs/pbem-deal-1.md`` lists them.

`check_proof` (steps 1-2) and `check_with_key` (steps 3-7) are everything a verifier
without a rules engine does (the standalone ``docs/pbem_deal_verify.py`` and the
replay page do the same, in the same order): commitment, entropy, key, cuts, re-cuts,
first dealer, and the deal records against the key. `verify` adds what only the
engine can (step 8): the game replays to its state hash, the replayed deals are the
key's, and the records are the replayed game's.

An entropy entry may keep only its text's SHA-256 (``{"seat", "sha256"}``: a player who
asked to be forgotten). Under ``pbem-deal/2`` the key derives from the hashes, so every
check still runs. Under ``pbem-deal/1`` it cannot be derived again: the deals are checked
against the archive's seed instead, and the verdict says so in a note (`FORGOTTEN_NOTE`).

Pure: no clock, no I/O.
"""

from __future__ import annotations

from typing import Any

from engine.cards import Card
from engine.dealchain import Mismatch, check_missing, check_previous, check_v3, human_seats
from engine.dealkey import PROTOCOL_3
from engine.dealschema import schema_error
from engine.errors import EngineError, ReplayError
from engine.fairness import (
    PROTOCOL_1,
    PROTOCOLS,
    DealProof,
    Verdict,
    check_deals,
    commitment,
    deal_records,
    dealt,
    expected_draws,
    first_dealer_rule,
    text_hash,
)

FORGOTTEN_NOTE = (
    "seat {seat}'s cut was forgotten at its player's request (its entropy text's SHA-256 "
    "is {digest}): the seed cannot be derived again without that text, so the deals were "
    "checked against the archive's seed"
)
"""What a ``pbem-deal/1`` verdict says of each forgotten cut."""


def _verdict(exc: Mismatch, checked: list[str]) -> Verdict:
    return Verdict(False, check=exc.check, hand=exc.hand, detail=exc.detail, checked=checked)


def verify(
    data: dict[str, Any] | str,
    *,
    seat: int | None = None,
    cut: str | None = None,
    previous: dict[str, Any] | None = None,
) -> Verdict:
    """The verdict on an archive: not verifiable (no commitment), the recorded cut of
    ``seat`` differing from ``cut`` (when given), not revealed (no server seed), the
    first mismatch, or ok with the number of deals; with ``previous`` (the archive of
    the game this one follows) that ``follows`` is that game's (`check_previous`).
    ReplayError: unreadable archive."""
    from engine.archive import parse_archive

    record = parse_archive(data)
    raw = record.get("deal_proof")
    if raw is None:
        return Verdict(False, verifiable=False)
    if not isinstance(raw, dict) or raw.get("protocol") not in PROTOCOLS:
        raise ReplayError("the deal_proof is not one of " + ", ".join(PROTOCOLS))
    checked: list[str] = []
    wrong = schema_error(record, str(raw["protocol"]))
    if wrong is not None:  # the archive format of its protocol (engine/schemas/)
        return Verdict(False, check="schema", detail=wrong)
    try:
        if seat is not None and cut is not None:
            check_receipt(raw, seat, cut)
            checked.append(f"seat {seat}'s cut against its receipt")
        if raw.get("server_seed") is None:
            return Verdict(False, revealed=False, checked=checked)
        proof = check_proof(record, raw)
        deals = check_with_key(record, raw, proof)
        if previous is not None:
            _check_previous(raw, previous)
            checked.append("the follows record against the previous game's archive")
    except Mismatch as exc:
        return _verdict(exc, checked)
    verdict = _replayed(record, raw, proof, deals)
    verdict.checked = checked
    unbound = proof.protocol == PROTOCOL_1 and proof.forgotten and record.get("seed") is not None
    if verdict.ok and unbound:
        # The checks passed against the archive's own seed; that seed is not derived.
        return Verdict(
            False,
            verifiable=False,
            deals=verdict.deals,
            detail="not verifiable: " + " ".join(verdict.notes),
            notes=verdict.notes,
            checked=checked,
        )
    return verdict


def _check_previous(raw: dict[str, Any], previous: dict[str, Any]) -> None:
    """The previous game's archive verifies, and ``follows`` is that game's (its result
    and last dealer as its replay gives them)."""
    from engine.archive import replay_archive

    before = verify(previous)
    if not before.ok:
        raise Mismatch("previous", f"the previous game's archive does not verify: {before.message}")
    final = list(replay_archive(previous))[-1]
    if final.outcome is None:
        raise Mismatch("previous", "the previous game is not over")
    result = (list(final.outcome.scores), final.outcome.winner)
    check_previous(raw, previous, result)
    follows = raw.get("follows") or {}
    if follows.get("dealer") != final.dealer:
        raise Mismatch("previous", "the last dealer it records is not the previous game's")


def _replayed(
    record: dict[str, Any], raw: dict[str, Any], proof: DealProof, deals: int | None
) -> Verdict:
    """Step 8: the replay (a game never dealt has none)."""
    from engine.archive import replay_archive

    if record.get("seed") is None:
        return Verdict(
            True,
            deals=0,
            notes=["aborted before the deal: nothing was dealt, and the server seed is revealed"],
        )
    key, notes = key_of(record, proof)
    try:
        verdict = check_deals(replay_archive(record), key)
        if not verdict.ok:
            return verdict
        states = list(replay_archive(record))
    except EngineError as exc:
        return Verdict(False, check="replay", detail=str(exc))
    final = states[-1]
    want_hash = record.get("state_hash")
    if want_hash is not None and want_hash != final.state_hash():
        return Verdict(
            False, check="replay", detail="the replayed game does not match the state hash"
        )
    if "deals" in raw:
        replayed = deal_records(states)
        for key in ("draws", "deals"):
            if replayed[key] != raw.get(key):
                return Verdict(
                    False,
                    check="records",
                    detail=f"the archive's {key} are not the replayed game's",
                )
    outcome = raw.get("outcome")
    if outcome in ("finished", "aborted") and (outcome == "finished") != final.is_over:
        return Verdict(
            False,
            check="records",
            detail=f"the outcome says {outcome}, the replayed game "
            + ("is over" if final.is_over else "is not over"),
        )
    if proof.protocol == PROTOCOL_3 and final.is_over and final.outcome is not None:
        want = {"scores": list(final.outcome.scores), "winner": final.outcome.winner}
        if raw.get("result") != want:
            return Verdict(False, check="records", detail="the result is not the replayed game's")
    return Verdict(True, deals=deals if deals is not None else verdict.deals, notes=notes)


def key_of(record: dict[str, Any], proof: DealProof) -> tuple[str, list[str]]:
    """The key the deals are checked against, and the notes on it: derived from the
    proof (step 3), except for a ``pbem-deal/1`` proof with a forgotten cut, whose key
    cannot be derived again: the archive's seed, with a note per forgotten cut."""
    if proof.protocol == PROTOCOL_1 and proof.forgotten:
        seed = record.get("seed")
        if not isinstance(seed, str):
            raise ReplayError("the archive has no seed")
        notes = [FORGOTTEN_NOTE.format(seat=seat, digest=d) for seat, d in proof.forgotten]
        return seed, notes
    return proof.seed(), []


def check_receipt(raw: Any, seat: int, cut: str) -> None:
    """The entropy text recorded for ``seat`` in the ``deal_proof`` ``raw`` is ``cut``,
    the text of the player's receipt (for a forgotten cut, its SHA-256 is the SHA-256
    of ``cut``); Mismatch("cut") otherwise."""
    entries = raw.get("entropy") if isinstance(raw, dict) else None
    mine = {
        e.get("seat"): e
        for e in (entries if isinstance(entries, list) else [])
        if isinstance(e, dict)
    }
    if seat not in mine:
        raise Mismatch("cut", f"no cut is recorded for seat {seat}")
    entry = mine[seat]
    if "text" not in entry:  # forgotten: the receipt's text must have the recorded hash
        if entry.get("sha256") != text_hash(cut):
            raise Mismatch(
                "cut",
                f"the cut recorded for seat {seat} (forgotten, its SHA-256 "
                f"{entry.get('sha256')}) is not the receipt's {cut!r}",
            )
        return
    if entry["text"] != cut:
        raise Mismatch(
            "cut",
            f"the cut recorded for seat {seat} is {entry['text']!r}, the receipt says {cut!r}",
        )


def check_proof(record: dict[str, Any], raw: dict[str, Any]) -> DealProof:
    """Steps 1 and 2 (the commitment, the entropy's form) on a revealed ``raw``
    ``deal_proof``: the proof read. Mismatch at the first that fails; ReplayError for a
    proof malformed otherwise."""
    seed, commit = raw.get("server_seed"), raw.get("commitment")
    if not isinstance(seed, str):
        raise ReplayError("the deal_proof's server_seed must be a string")
    if commitment(seed) != commit:
        raise Mismatch(
            "commitment",
            f"SHA-256 of the server seed is {commitment(seed)}, the commitment says {commit}",
        )
    players = _players(record)
    check_v3(record, raw, players)
    _check_entropy(raw.get("entropy") or [], players, "entropy")
    return DealProof.from_json(raw, players)


def check_with_key(record: dict[str, Any], raw: dict[str, Any], proof: DealProof) -> int | None:
    """Steps 3-7, every later check a verifier makes from the archive and the key alone;
    the number of deal records checked (None for an archive without records, from before they were
    kept). Mismatch at the first that fails."""
    players = _players(record)
    humans = human_seats(record, players)
    seats = [int(e["seat"]) for e in proof.entries()]
    if humans is not None:
        # A game never dealt may have stopped before every human seat cut.
        never = record.get("seed") is None
        if (not set(seats) <= set(humans)) if never else seats != humans:
            raise Mismatch(
                "entropy", f"the entropy is not one cut per human seat {humans}, in seat order"
            )
    check_missing(record, raw, players, seats)
    settings = record.get("settings") or {}
    first = settings.get("first_dealer")
    if record.get("seed") is None:
        return _check_never_dealt(record, raw, proof, players, first)
    key, _ = key_of(record, proof)
    if key != record.get("seed"):
        raise Mismatch(
            "seed",
            f"the server seed and the entropy give {key}, the archive's seed is "
            f"{record.get('seed')}",
        )
    _check_around(raw, proof, players, first)
    if "deals" not in raw:
        return None
    return _check_records(raw, key, players, first)


def _check_around(raw: dict[str, Any], proof: DealProof, players: int, first: Any) -> None:
    """Steps 4-6: the cuts received, the re-cuts, the first dealer."""
    if "cuts" in raw:
        _check_cuts(raw["cuts"], proof, players)
    for number, recut in enumerate(raw.get("recuts") or [], start=1):
        _check_recut(recut, number, players)
    if "follows" in raw:
        _check_first_dealer(raw["follows"], first, players)


def _check_never_dealt(
    record: dict[str, Any], raw: dict[str, Any], proof: DealProof, players: int, first: Any
) -> int:
    """A game that ended before its deal (not every human seat cut): no key, so nothing
    to deal; it must say it was aborted, have no action and no deal records."""
    if raw.get("outcome") != "aborted":
        raise Mismatch("seed", "the archive has no seed, yet the game was not aborted")
    _check_around(raw, proof, players, first)
    if record.get("actions"):
        raise Mismatch("replay", "a game never dealt has actions")
    if raw.get("draws") or raw.get("deals"):
        raise Mismatch("records", "a game never dealt has deal records")
    return 0


def _players(record: dict[str, Any]) -> int:
    players = (record.get("settings") or {}).get("players", 2)
    if players not in (2, 3, 4):
        raise Mismatch("records", f"a game of cribbage is for 2, 3 or 4 players, not {players!r}")
    return int(players)


def _check_entropy(entries: Any, players: int, check: str) -> None:
    seats: list[int] = []
    for entry in entries:
        if not isinstance(entry, dict) or not _has_text_or_hash(entry):
            raise Mismatch(check, "an entropy entry has no text")
        seat = entry.get("seat")
        if not isinstance(seat, int) or not 0 <= seat < players:
            raise Mismatch(check, f"an entropy entry names no seat of the game: {seat!r}")
        if "text" in entry and "sha256" in entry and entry["sha256"] != text_hash(entry["text"]):
            raise Mismatch(check, f"the SHA-256 recorded for seat {seat}'s cut is not its text's")
        seats.append(seat)
    if seats != sorted(set(seats)):
        raise Mismatch(check, "the entropy entries are not in seat order, one per seat")


def _has_text_or_hash(entry: dict[str, Any]) -> bool:
    """An entry with a text, or without one but with a SHA-256 (a forgotten cut)."""
    if "text" in entry:
        return isinstance(entry["text"], str)
    digest = entry.get("sha256")
    return (
        isinstance(digest, str)
        and len(digest) == 64
        and digest == digest.lower()
        and all(c in "0123456789abcdef" for c in digest)
    )


def _check_cuts(cuts: Any, proof: DealProof, players: int) -> None:
    """Step 4, by hashes: a cut's text (when it has one: a forgotten player's cut keeps
    only its SHA-256) is its SHA-256's, and each seat's last accepted cut has the
    entropy entry's SHA-256."""
    last: dict[int, str] = {}
    for number, cut in enumerate(cuts, start=1):
        if not isinstance(cut, dict) or not _has_text_or_hash(cut):
            raise Mismatch("cuts", f"cut {number} has no text")
        seat = cut.get("seat")
        if not isinstance(seat, int) or not 0 <= seat < players:
            raise Mismatch("cuts", f"cut {number} names no seat of the game: {seat!r}")
        digest = text_hash(cut["text"]) if "text" in cut else cut["sha256"]
        if "sha256" in cut and cut["sha256"] != digest:
            raise Mismatch("cuts", f"the SHA-256 recorded for cut {number} is not its text's")
        if cut.get("accepted") is True:
            last[seat] = digest
    for entry in proof.entries():
        seat, text = int(entry["seat"]), str(entry["sha256"])
        if seat not in last:
            raise Mismatch("cuts", f"seat {seat}'s cut is not among the cuts received")
        if last[seat] != text:
            raise Mismatch(
                "cuts", f"seat {seat}'s last accepted cut is not the entropy text recorded"
            )


def _check_recut(recut: Any, number: int, players: int) -> None:
    seed, commit = recut.get("server_seed"), recut.get("commitment")
    if not isinstance(seed, str) or not isinstance(commit, str):
        raise Mismatch("recut", f"re-cut {number} does not reveal its server seed")
    if commitment(seed) != commit:
        raise Mismatch(
            "recut", f"re-cut {number}: SHA-256 of its server seed is not its commitment"
        )
    _check_entropy(recut.get("entropy") or [], players, "recut")


def _check_first_dealer(follows: Any, first: Any, players: int) -> None:
    if follows is None:
        if first is not None:
            raise Mismatch(
                "first_dealer",
                f"seat {first} dealt first without a draw, but the game follows no other game",
            )
        return
    scores, winner, last = follows.get("scores"), follows.get("winner"), follows.get("dealer")
    sides = 2 if players == 4 else players
    if follows.get("rule") != "loser-deals-first":
        raise Mismatch("first_dealer", f"unknown rule {follows.get('rule')!r}")
    if not (
        isinstance(scores, list)
        and len(scores) == sides
        and all(isinstance(s, int) for s in scores)
        and isinstance(winner, int)
        and 0 <= winner < sides
    ):
        raise Mismatch("first_dealer", "the game it follows has no scores or winner")
    if not isinstance(last, int) or not 0 <= last < players:
        if players != 2:
            raise Mismatch("first_dealer", "the game it follows names no last dealer")
        last = winner  # two players: the loser deals, whoever dealt last
    want = first_dealer_rule(players, scores, winner, last)
    if first != want:
        raise Mismatch(
            "first_dealer",
            f"game {follows.get('game')} ended {scores} (winner {winner}, last dealer seat "
            f"{last}): seat {want} deals first, the archive says {first}",
        )


def _check_records(raw: dict[str, Any], key: str, players: int, first: Any) -> int:
    draws, deals = raw.get("draws"), raw.get("deals")
    if not isinstance(draws, list) or not isinstance(deals, list):
        raise Mismatch("records", "the revealed archive has no draws and deals")
    if first is None:
        want = expected_draws(key, players, _rounds(key, players))
        expected = [
            {"round": n, "cards": [_ascii(r.get(s)) for s in range(players)]}
            for n, r in enumerate(want, start=1)
        ]
        if draws != expected:
            raise Mismatch("draw", "the draw for the first deal is not the key's", hand=0)
        last = want[-1]
        low = min(c.rank for c in last.values())
        first = next(s for s, c in last.items() if c.rank == low)
    elif draws:
        raise Mismatch("draw", "a draw is recorded though the first dealer was not drawn", 0)
    if not deals:
        raise Mismatch("records", "no deal is recorded")
    dealer = first
    for index, deal in enumerate(deals):
        hand = index + 1
        if not isinstance(deal, dict) or deal.get("hand") != hand:
            raise Mismatch("records", f"deal {hand} is not numbered {hand}", hand)
        if deal.get("dealer") != dealer:
            raise Mismatch(
                "dealer", f"seat {deal.get('dealer')} deals; the turn is seat {dealer}'s", hand
            )
        want_deal = dealt(key, hand, players, dealer)
        got_hands = deal.get("hands")
        if not isinstance(got_hands, list) or len(got_hands) != players:
            raise Mismatch("deal", "not every seat's cards are recorded", hand)
        for seat in range(players):
            if got_hands[seat] != [c.ascii for c in want_deal.hands[seat]]:
                raise Mismatch(
                    "deal",
                    f"seat {seat} was dealt {_join(got_hands[seat])}, the key gives "
                    f"{_join(c.ascii for c in want_deal.hands[seat])}",
                    hand,
                )
        if deal.get("crib") != [c.ascii for c in want_deal.crib]:
            raise Mismatch("crib", "the crib's dealt card is not the key's", hand)
        starter = deal.get("starter")
        if starter is None:
            if hand != len(deals):
                raise Mismatch("starter", "no starter is recorded for a hand that was played", hand)
        elif starter != want_deal.starter.ascii:
            raise Mismatch(
                "starter",
                f"the starter is {starter}, the key gives {want_deal.starter.ascii}",
                hand,
            )
        dealer = (dealer + 1) % players
    return len(deals)


def _rounds(key: str, players: int) -> int:
    """How many rounds the draw for the first deal takes (until one card is lowest)."""
    rounds = 1
    while True:
        last = expected_draws(key, players, rounds)[-1]
        low = min(c.rank for c in last.values())
        if sum(1 for c in last.values() if c.rank == low) == 1:
            return rounds
        rounds += 1


def _ascii(card: Card | None) -> str | None:
    return card.ascii if card is not None else None


def _join(cards: Any) -> str:
    return " ".join(str(c) for c in cards) if not isinstance(cards, str) else cards


def verify_archive(
    data: dict[str, Any] | str,
    *,
    seat: int | None = None,
    cut: str | None = None,
    previous: dict[str, Any] | None = None,
) -> Verdict:
    """Check an archive by every step of the specification (`verify`); with ``seat``
    and ``cut``, first that the entropy text recorded for that seat is ``cut``; with
    ``previous``, that it follows that game. ReplayError when the archive is unreadable."""
    return verify(data, seat=seat, cut=cut, previous=previous)
