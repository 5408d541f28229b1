"""Every check of ``docs/pbem-deal-1.md`` section 8 as `engine.dealcheck` makes it: each
failure named by its check, on archives of the shared corpus changed one field at a time
(the corpus test runs the same archives through all three verifiers)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from engine import ReplayError
from engine.archive import replay_archive
from engine.dealcheck import verify
from engine.fairness import deal_records, first_dealer_rule, records_of
from engine.match import first_dealer_after
from tests.deal_corpus import base_cases


@cache
def _bases() -> dict[str, dict[str, Any]]:
    return {case.name: case.archive for case in base_cases()}


def base(name: str) -> dict[str, Any]:
    return copy.deepcopy(_bases()[name])


Edit = Callable[[dict[str, Any]], None]


def proof_set(key: str, value: Any) -> Edit:
    return lambda a: a["deal_proof"].__setitem__(key, value)


def deal_set(hand: int, key: str, value: Any) -> Edit:
    return lambda a: a["deal_proof"]["deals"][hand].__setitem__(key, value)


def _forget_cut(cut: dict[str, Any], digest: str | None) -> None:
    """A cut as a forgotten player's: no text, ``digest`` for its SHA-256 (None: none)."""
    cut.pop("text")
    cut.pop("sha256")
    if digest is not None:
        cut["sha256"] = digest


CASES: list[tuple[str, str, Edit, str, str]] = [
    # (base, what, edit, the check that fails, words of its message)
    (
        "two",
        "entropy seat out of range",
        lambda a: a["deal_proof"]["entropy"][1].update(seat=3),
        "entropy",
        "no seat",
    ),
    (
        "two",
        "cut without text or hash",
        lambda a: _forget_cut(a["deal_proof"]["cuts"][0], None),
        "schema",
        "deal_proof.cuts.0",
    ),
    (
        "two",
        "cut without text, its hash not one",
        lambda a: _forget_cut(a["deal_proof"]["cuts"][0], "AB" * 32),
        "schema",
        "deal_proof.cuts.0",
    ),
    (
        "two",
        "a forgotten cut's hash differing from the entropy's",
        lambda a: _forget_cut(a["deal_proof"]["cuts"][1], "5" * 64),
        "cuts",
        "last accepted cut",
    ),
    (
        "two",
        "cut without seat",
        lambda a: a["deal_proof"]["cuts"][0].update(seat=None),
        "cuts",
        "no seat",
    ),
    (
        "two",
        "no accepted cut",
        lambda a: a["deal_proof"].update(
            cuts=[{**c, "accepted": False} for c in a["deal_proof"]["cuts"]]
        ),
        "cuts",
        "not among",
    ),
    (
        "aborted",
        "recut entropy",
        lambda a: a["deal_proof"]["recuts"][0]["entropy"][0].update(seat=3),
        "recut",
        "no seat",
    ),
    (
        "follows2",
        "unknown rule",
        lambda a: a["deal_proof"]["follows"].update(rule="winner-deals"),
        "first_dealer",
        "unknown rule",
    ),
    (
        "follows3",
        "no scores",
        lambda a: a["deal_proof"]["follows"].update(scores=[61, 40]),
        "first_dealer",
        "no scores",
    ),
    (
        "two",
        "records missing",
        lambda a: a["deal_proof"].pop("draws"),
        "records",
        "draws and deals",
    ),
    ("two", "records not a list", proof_set("deals", None), "schema", "deal_proof.deals"),
    ("two", "hands numbered wrong", deal_set(0, "hand", 2), "records", "not numbered"),
    ("two", "a seat's cards missing", deal_set(0, "hands", [[], [], []]), "deal", "not every seat"),
    ("two", "a boolean seat", deal_set(0, "dealer", True), "schema", "deals.0.dealer"),
    (
        "two",
        "a float player count",
        lambda a: a["settings"].update(players=2.0),
        "schema",
        "players",
    ),
    ("two", "a short server seed", proof_set("server_seed", "ab"), "schema", "server_seed"),
    ("two", "crib card on two players", deal_set(0, "crib", ["AS"]), "crib", "crib"),
    (
        "follows2",
        "a draw without need",
        lambda a: a["deal_proof"].__setitem__("draws", [{"round": 1, "cards": ["AS", "2S"]}]),
        "draw",
        "not drawn",
    ),
    ("two", "state hash", lambda a: a.__setitem__("state_hash", "0" * 64), "replay", "state hash"),
    ("aborted", "outcome finished", proof_set("outcome", "finished"), "records", "is not over"),
    ("two", "outcome aborted", proof_set("outcome", "aborted"), "records", "is over"),
    ("two", "players", lambda a: a["settings"].update(players=5), "schema", "settings.players"),
]


@pytest.mark.parametrize(
    ("name", "what", "edit", "check", "words"), CASES, ids=[c[1] for c in CASES]
)
def test_each_check_names_its_failure(
    name: str, what: str, edit: Edit, check: str, words: str
) -> None:
    archive = base(name)
    edit(archive)
    verdict = verify(archive)
    assert not verdict.ok and verdict.verifiable and verdict.revealed
    assert verdict.check == check, verdict.message
    assert words in verdict.message


def test_a_dropped_last_action_leaves_records_the_replay_contradicts() -> None:
    archive = base("two")
    archive["actions"].pop()
    archive.pop("state_hash")
    verdict = verify(archive)
    assert verdict.check == "records"


def test_the_receipt_check_and_malformed_proofs() -> None:
    archive = base("three")
    mine = archive["deal_proof"]["entropy"][2]["text"]
    assert verify(archive, seat=2, cut=mine).ok
    verdict = verify(archive, seat=2, cut=mine + " ")
    assert verdict.check == "cut" and "the receipt says" in verdict.message
    running = base("running")
    # The receipt is checked before the reveal: a player can check it while the game runs.
    assert verify(running, seat=0, cut="not mine").check == "cut"
    assert not verify(running, seat=0, cut=running["deal_proof"]["entropy"][0]["text"]).revealed
    text_missing = copy.deepcopy(archive["deal_proof"])
    text_missing["entropy"][0].pop("text")
    text_missing["entropy"][0].pop("sha256")
    assert verify({**archive, "deal_proof": text_missing}).check == "schema"
    assert verify({**archive, "deal_proof": {"protocol": "pbem-deal/2"}}).check == "schema"
    bad: Any
    for bad in ({"protocol": "pbem-deal/9", "commitment": "x"}, []):
        archive["deal_proof"] = bad
        with pytest.raises(ReplayError):
            verify(archive)


def test_records_are_what_the_game_dealt() -> None:
    archive = base("three")
    states = list(replay_archive(archive))
    records = deal_records(states)
    assert records == {k: archive["deal_proof"][k] for k in ("draws", "deals")}
    assert records_of(states[-1]) == records
    first = records["deals"][0]
    assert len(first["hands"]) == 3 and all(len(h) == 5 for h in first["hands"])
    assert len(first["crib"]) == 1 and first["starter"] is not None
    # Two players: no crib card; a hand in progress: its starter is not turned yet.
    aborted = base("aborted")
    assert aborted["deal_proof"]["deals"][-1]["crib"] == []


def test_the_first_dealer_rule_is_the_engines() -> None:
    for name in ("two", "three", "four"):
        final = list(replay_archive(base(name)))[-1]
        assert final.outcome is not None
        want = first_dealer_after(final)
        got = first_dealer_rule(
            final.players, list(final.outcome.scores), final.outcome.winner, final.dealer
        )
        assert got == want


def test_a_game_never_dealt_verifies_with_its_seed_revealed() -> None:
    archive = base("never-dealt")
    verdict = verify(archive)
    assert verdict.ok and verdict.deals == 0
    assert (
        verdict.message
        == "aborted before the deal: nothing was dealt, and the server seed is revealed"
    )
    archive["deal_proof"]["outcome"] = "finished"
    assert verify(archive).check == "seed"
    archive = base("never-dealt")
    archive["deal_proof"]["server_seed"] = None
    assert not verify(archive).revealed
