"""Bound cuts, games that end without being played out, and linked games (issue 23, the
service side): the receipt of a cut against every later mail and the archive, the record
of every cut mail, the seed revealed by an abort, and a rematch's first dealer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from engine.dealcheck import verify_archive
from engine.fairness import PROTOCOL, derive_seed, expected_deal, text_hash
from engine.match import first_dealer_after
from pbem.demo.bots import text_of
from pbem.render.replay import replay_page
from pbem.store import models as m
from tests.e2e.helpers import ALICE, BOB, CAROL, Harness, reply

VERIFIER = Path(__file__).resolve().parents[2] / "docs" / "pbem_deal_verify.py"
RECEIPT = re.compile(
    r"Your cut is in, recorded as “(?P<text>[^”]*)” \(SHA-256 (?P<hash>[0-9a-f]{64})\)"
)


@pytest.fixture
def fair(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(tmp_path, db_url, db_engine, fair_deals=True)
    yield harness
    harness.close()


def flat(message: EmailMessage) -> str:
    """A mail's text with its lines joined, as a player reads across a wrapped line."""
    return " ".join(text_of(message).split())


def read_receipt(message: EmailMessage) -> tuple[str, str]:
    """(text, hash) quoted by the receipt of a cut."""
    found = RECEIPT.search(flat(message))
    assert found is not None, flat(message)
    return found["text"], found["hash"]


def player_check(
    receipt: tuple[str, str], name: str, seat: int, later: list[EmailMessage], archive: Any
) -> list[str]:
    """What a player holding the receipt of their cut can check, with nothing but the
    mails and the archive: the problems found (none: the server kept the cut)."""
    text, digest = receipt
    problems = []
    if text_hash(text) != digest:
        problems.append("the receipt's hash is not its text's")
    for message in later:
        if f"{name} {digest[:16]}" not in flat(message):
            problems.append(f"the mail “{message['Subject']}” does not show my cut's hash")
    entries = [e for e in archive["deal_proof"]["entropy"] if e["seat"] == seat]
    if [e["text"] for e in entries] != [text]:
        problems.append("the archive does not hold my cut as the receipt quotes it")
    if any(e["sha256"] != text_hash(e["text"]) for e in entries):
        problems.append("the archive's hash of my cut is not its text's")
    return problems


def set_entropy(harness: Harness, game_id: int, entropy: list[dict[str, Any]]) -> None:
    """A dishonest server rewriting the cuts it recorded (after the receipt went out)."""
    with Session(harness.db) as session:
        row = session.get(m.Game, game_id)
        assert row is not None
        row.entropy = entropy
        session.add(row)
        session.commit()


def ground(server_seed: str, alice: str, bob: str) -> str:
    """A grinding server: the first variant of Alice's cut that deals Bob a jack."""
    for n in range(1000):
        text = f"{alice} {n}"
        pack = expected_deal(derive_seed(server_seed, [text, bob]), 1, 2, 0)
        if any(card.rank == 11 for card in pack.hands[1]):
            return text
    raise AssertionError("no variant found")


@pytest.mark.parametrize("server", ["honest", "substitutes", "drops", "grinds"])
def test_the_receipt_of_a_cut_catches_a_server_that_changes_it(fair: Harness, server: str) -> None:
    game_id = fair.service.new_game([ALICE, BOB], target=61)
    fair.step()
    fair.answer(ALICE[0], "cut 17 purple elephants", message_id="<alice-cut@example.com>")
    receipt = read_receipt(fair.latest(ALICE[0]))
    assert receipt == (
        "<alice-cut@example.com> 17 purple elephants",
        text_hash("<alice-cut@example.com> 17 purple elephants"),
    )
    row = fair.game_row(game_id)
    assert row.server_seed is not None
    if server == "substitutes":
        set_entropy(fair, game_id, [{"seat": 0, "text": "<alice-cut@example.com> 18"}])
    elif server == "drops":
        set_entropy(fair, game_id, [])
    elif server == "grinds":
        variant = ground(row.server_seed, receipt[0], "<bob-cut@example.org>")
        set_entropy(fair, game_id, [{"seat": 0, "text": variant}])
    before = fair.count(ALICE[0])
    fair.answer(BOB[0], "cut", message_id="<bob-cut@example.org>")
    if server == "drops":
        # Her cut gone, the game waits for it: her next mail asks for it again.
        assert fair.service.resend(game_id) == 2
        fair.step()
    later = fair.new_mail(ALICE[0], before)
    assert later, "a later mail of the game reached Alice"
    archive = fair.service.export(game_id)
    problems = player_check(receipt, "Alice", 0, later, archive)
    # The verifiers' own receipt check (`pbem verify --seat 0 --cut TEXT`).
    verdict = verify_archive(archive, seat=0, cut=receipt[0])
    if server == "honest":
        assert problems == []
        assert fair.game_row(game_id).status == "active"
        assert verdict.check is None and verdict.revealed is False  # not over yet
    else:
        assert "the archive does not hold my cut as the receipt quotes it" in problems
        assert any("does not show my cut's hash" in p for p in problems)
        assert verdict.check == "cut", verdict.message
    if server == "substitutes":
        # The standalone verifier, as a player runs it, gives the same verdict.
        path = fair.tmp_path / "archive.json"
        path.write_text(json.dumps(archive), encoding="utf-8")
        run = subprocess.run(
            [sys.executable, str(VERIFIER), str(path), "--seat", "0", "--cut", receipt[0]],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert run.returncode == 1 and "cut" in run.stdout + run.stderr, run
    # Every later mail shows the start of Bob's hash too, in its text and in its HTML.
    bob = "Bob " + text_hash("<bob-cut@example.org>")[:16]
    for mail in later:
        html = mail.get_body(("html",))
        assert html is not None and bob in html.get_content() and bob in flat(mail)


def test_every_cut_mail_is_archived_accepted_or_refused(fair: Harness) -> None:
    fair.new_game(seed="carol-plays")  # Carol is known to the service
    fair.service.new_game([CAROL, ALICE], target=61)
    game_id = fair.service.new_game([ALICE, BOB], target=61)
    fair.step()
    alice_mail = fair.latest(ALICE[0])
    fair.answer(ALICE[0], "cut one", message_id="<a1@example.com>")
    fair.answer(ALICE[0], "cut two", message_id="<a2@example.com>")  # a second cut
    carol_before = fair.count(CAROL[0])
    # Carol answers Alice's mail (its reply address is Alice's seat).
    fair.deliver(reply(alice_mail, CAROL[0], "Carol", "cut three", message_id="<c@example.net>"))
    assert fair.last_inbound().status == "rejected"
    assert fair.count(CAROL[0]) == carol_before + 1  # she wrote: she is told why, once
    fair.answer(BOB[0], "cut four", message_id="<b1@example.org>")
    fair.answer(BOB[0], "cut five", message_id="<b2@example.org>")  # after the deal
    proof = fair.service.export(game_id)["deal_proof"]
    got = [(c["seat"], c["message_id"], c["accepted"], c["reason"]) for c in proof["cuts"]]
    assert got == [
        (0, "<a1@example.com>", True, None),
        (0, "<a2@example.com>", False, "a second cut: the first one counts"),
        (0, "<c@example.net>", False, "not from the seat's player"),
        (1, "<b1@example.org>", True, None),
        (1, "<b2@example.org>", False, "after the deal"),
    ]
    for cut in proof["cuts"]:
        assert cut["sha256"] == text_hash(cut["text"])
        assert cut["received"].endswith("+00:00")
    assert [c["text"] for c in proof["cuts"]][:2] == [
        "<a1@example.com> one",
        "<a2@example.com> two",
    ]
    assert [e["text"] for e in proof["entropy"]] == [
        "<a1@example.com> one",
        "<b1@example.org> four",
    ]
    assert proof["outcome"] is None and proof["server_seed"] is None
    # Her own page of the running game shows her cut as recorded.
    page = replay_page(fair.service.export(game_id), seat=0).html
    assert "Your cut as recorded" in page
    assert text_hash("<a1@example.com> one") in page and "&lt;a1@example.com&gt; one" in page


def test_an_abort_after_the_deal_reveals_the_seed_and_verifies(fair: Harness) -> None:
    game_id = fair.service.new_game([ALICE, BOB], target=61)
    fair.step()
    fair.answer(ALICE[0], "cut")
    fair.answer(BOB[0], "cut")
    fair.play_until(game_id, lambda g: g.hand_no == 2)
    assert fair.game_row(game_id).server_seed is not None
    fair.service.set_status(game_id, "aborted", "a player left")
    fair.step()
    secret = fair.game_row(game_id).server_seed
    assert secret is not None
    for address in (ALICE[0], BOB[0]):
        told = flat(fair.latest(address))
        assert "aborted" in told and f"revealed now the game is aborted: {secret}" in told
    archive = fair.service.export(game_id)
    proof = archive["deal_proof"]
    assert (proof["server_seed"], proof["outcome"], proof["abort_reason"]) == (
        secret,
        "aborted",
        "a player left",
    )
    verdict = verify_archive(archive)
    assert verdict.ok and verdict.deals == 2, verdict.message


def test_linked_games_record_the_game_they_follow(fair: Harness) -> None:
    robot = (f"computer@{fair.settings.domain}", "Computer")
    first = fair.service.new_game([ALICE, robot], target=61, computer=[1], skunk="none")
    fair.step()
    fair.answer(ALICE[0], "cut")
    fair.answer(ALICE[0], "resign confirm")
    over = fair.game(first)
    assert over.is_over and over.outcome is not None
    first_archive = fair.service.export(first)
    assert first_archive["deal_proof"]["follows"] is None
    assert first_archive["settings"]["first_dealer"] is None
    assert verify_archive(first_archive).ok
    # A first dealer the draw did not choose is caught.
    forged = {**first_archive, "settings": {**first_archive["settings"], "first_dealer": 1}}
    assert verify_archive(forged).check == "first_dealer"

    # "rematch best of 3" in answer to the game-over mail: the match's first game (no
    # skunks: a resignation loses one game, and the match goes on).
    fair.answer(ALICE[0], "rematch best of 3")
    second = fair.last_inbound().game_id
    assert second is not None and second != first
    row = fair.game_row(second)
    assert row.follows == {
        "game": first,
        "commitment": fair.game_row(first).commitment,
        "state_hash": over.state_hash(),
        "scores": list(over.outcome.scores),
        "winner": over.outcome.winner,
        "dealer": over.dealer,
        "rule": "loser-deals-first",
    }
    assert row.settings["first_dealer"] == first_dealer_after(over)
    # Her "rematch" was her cut (its mail showed the commitment): the game's first mail,
    # dealt at once, is its receipt, and the archive logs that mail as her cut.
    text, _ = read_receipt(fair.latest(ALICE[0]))
    assert text.endswith(" best of 3") and row.entropy == [{"seat": 0, "text": text}]
    (logged,) = fair.service.export(second)["deal_proof"]["cuts"]
    assert (logged["text"], logged["accepted"]) == (text, True)
    assert text.startswith(logged["message_id"] + " ")
    fair.answer(ALICE[0], "resign confirm")
    # The match goes on: its next game follows this one.
    done = fair.game(second)
    third = fair.service.export(second)
    assert third["deal_proof"]["follows"]["game"] == first and verify_archive(third).ok
    # pbem-deal/3: checked against the archive of the game it follows (--previous).
    checked = verify_archive(third, previous=fair.service.export(first))
    assert checked.ok and checked.checked, checked.message
    assert not verify_archive(third, previous=fair.service.export(second)).ok
    with Session(fair.db) as session:
        nxt = session.exec(select(m.Game).where(m.Game.rematch_of == second)).one()
        next_id = nxt.id
    assert next_id is not None
    fair.service.set_status(next_id, "aborted", "enough")
    archive = fair.service.export(next_id)
    follows = archive["deal_proof"]["follows"]
    assert follows["game"] == second and follows["state_hash"] == done.state_hash()
    assert archive["settings"]["first_dealer"] == first_dealer_after(done)
    assert verify_archive(archive).ok
    wrong = 1 - first_dealer_after(done)
    forged = {**archive, "settings": {**archive["settings"], "first_dealer": wrong}}
    verdict = verify_archive(forged)
    assert verdict.check == "first_dealer" and f"the archive says {wrong}" in verdict.detail
    # A result that names another winner makes another first dealer.
    flipped = {**follows, "winner": 1 - follows["winner"]}
    swapped = {**archive, "deal_proof": {**archive["deal_proof"], "follows": flipped}}
    assert verify_archive(swapped).check == "first_dealer"


def test_a_game_committed_before_the_protocol_was_recorded_keeps_pbem_deal_1(
    fair: Harness,
) -> None:
    new = fair.service.new_game([ALICE, BOB], target=61)
    old = fair.service.new_game([CAROL, BOB], target=61)
    fair.step()
    assert fair.game_row(new).deal_protocol == PROTOCOL == "pbem-deal/3"
    with Session(fair.db) as session:  # as the migration leaves a game committed before
        row = session.get(m.Game, old)
        assert row is not None
        row.deal_protocol = None
        session.add(row)
        session.commit()
    # A decomposed é: kept as sent by /1, composed (NFC) by /2.
    fair.answer(ALICE[0], "cut e\u0301te\u0301", message_id="<n@example.com>")
    fair.answer(CAROL[0], "cut e\u0301te\u0301", message_id="<o@example.com>")
    assert fair.game_row(new).entropy == [{"seat": 0, "text": "<n@example.com> \u00e9t\u00e9"}]
    assert fair.game_row(old).entropy == [{"seat": 0, "text": "<o@example.com> e\u0301te\u0301"}]
    assert fair.service.export(new)["deal_proof"]["protocol"] == "pbem-deal/3"
    assert fair.service.export(old)["deal_proof"]["protocol"] == "pbem-deal/1"
    assert "Deal commitment (pbem-deal/1):" in flat(fair.latest(CAROL[0]))
    assert "Deal commitment (pbem-deal/3):" in flat(fair.latest(ALICE[0]))
