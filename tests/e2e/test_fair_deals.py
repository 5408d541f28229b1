"""Verifiable deals by mail (pbem-deal/1): the commitment in every mail, the cut for the
deal, the derived seed, the server seed revealed only at game over, and the archive that
`pbem verify` accepts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from engine.dealcheck import verify_archive
from engine.dealkey import key_v3
from engine.fairness import PROTOCOL, commitment, entropy_text, text_hash
from pbem.demo.bots import text_of
from pbem.render.invite import SUBJECT as INVITE_SUBJECT
from pbem.render.replay import ReplayPageError, replay_page
from pbem.service import ServiceError
from pbem.service.game.deals import NOT_NEEDED
from tests.e2e.helpers import ALICE, BOB, CAROL, Harness, about


@pytest.fixture
def fair(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(tmp_path, db_url, db_engine, fair_deals=True)
    yield harness
    harness.close()


def all_raw(harness: Harness) -> bytes:
    return b"\n".join(row.raw for row in harness.outbox())


def test_a_fair_game_from_commitment_to_verified_archive(fair: Harness) -> None:
    game_id = fair.service.new_game([ALICE, BOB], target=61)
    fair.step()
    row = fair.game_row(game_id)
    assert row.status == "cutting" and row.seed is None
    assert row.server_seed is not None and row.commitment == commitment(row.server_seed)
    secret = row.server_seed
    # No engine game (no seed) exists while the players cut.
    with pytest.raises(ServiceError, match="not dealt yet"):
        fair.game(game_id)
    first = fair.latest(ALICE[0])
    text = text_of(first)
    assert "cut" in about(first).lower()
    assert "cut 17 purple elephants" in text
    assert row.commitment in text.replace("\n", "")
    assert "revealed when the game is over" in text
    assert fair.count(BOB[0]) == 1

    # Anything but a cut waits.
    fair.answer(ALICE[0], "play 7c")
    assert fair.last_inbound().status == "rejected"
    assert "not dealt yet" in text_of(fair.latest(ALICE[0]))

    fair.answer(ALICE[0], "Cut 17   Purple elephants", message_id="<alice-cut@example.com>")
    assert fair.last_inbound().status == "applied"
    assert "Your cut is in" in text_of(fair.latest(ALICE[0]))
    assert fair.game_row(game_id).status == "cutting"
    fair.answer(ALICE[0], "cut again")
    assert "already" in text_of(fair.latest(ALICE[0]))

    fair.answer(BOB[0], "cut", message_id="<bob-cut@example.org>")
    row = fair.game_row(game_id)
    assert row.status == "active"
    texts = [
        entropy_text("<alice-cut@example.com>", "17 Purple elephants"),
        "<bob-cut@example.org>",
    ]
    # pbem-deal/3: the key binds the game's number, its two players and each cut's seat.
    want = key_v3(secret, game_id, 2, [(seat, text_hash(t)) for seat, t in enumerate(texts)])
    assert row.seed == want
    assert row.entropy == [
        {"seat": 0, "text": "<alice-cut@example.com> 17 Purple elephants"},
        {"seat": 1, "text": "<bob-cut@example.org>"},
    ]
    dealt = fair.latest(BOB[0])
    assert row.commitment is not None
    assert row.commitment in text_of(dealt).replace("\n", "")
    assert fair.view(BOB[0]).holding

    # A cut now is answered clearly.
    fair.answer(ALICE[0], "cut 5")
    assert NOT_NEEDED.split(":")[0] in text_of(fair.latest(ALICE[0])).replace("\n", " ")

    # The running game's archive reveals neither S nor K.
    running = fair.service.export(game_id)
    assert running["deal_proof"]["server_seed"] is None
    assert secret.encode() not in all_raw(fair)
    assert want.encode() not in all_raw(fair)

    game = fair.play_until(game_id, lambda g: g.is_over)
    assert game.is_over
    over = fair.latest(ALICE[0])
    assert secret in text_of(over).replace("\n", "").replace(" ", "")
    assert secret in text_of(fair.latest(BOB[0])).replace("\n", "").replace(" ", "")
    # The game-over mail shows each seat's cut hash, to compare with the receipts.
    ended = " ".join(text_of(over).split())
    for seat, name in ((0, "Alice"), (1, "Bob")):
        assert f"{name} {text_hash(str(row.entropy[seat]['text']))[:16]}" in ended
    # Only the game-over mails carry it.
    for msg_row in fair.outbox():
        if secret.encode() in msg_row.raw:
            assert msg_row.kind == "gameover", msg_row.kind
    data = fair.service.export(game_id)
    assert data["deal_proof"]["server_seed"] == secret
    verdict = verify_archive(json.loads(json.dumps(data)))
    assert verdict.ok, verdict.message


def test_only_the_humans_cut_against_the_computer(fair: Harness) -> None:
    robot = (f"computer@{fair.settings.domain}", "Computer")
    game_id = fair.service.new_game([ALICE, robot], target=61, computer=[1])
    fair.step()
    assert fair.game_row(game_id).status == "cutting"
    fair.answer(ALICE[0], "cut 42")
    row = fair.game_row(game_id)
    assert row.status == "active" and len(row.entropy or []) == 1
    game = fair.game(game_id)
    assert game.to_act() == (0,)  # the computer laid away at once
    assert fair.count(robot[0]) == 0


def test_three_players_are_dealt_when_the_last_cuts(fair: Harness) -> None:
    game_id = fair.service.new_game([ALICE, BOB, CAROL], target=61)
    fair.step()
    fair.answer(CAROL[0], "cut one")
    fair.answer(ALICE[0], "cut two")
    assert fair.game_row(game_id).status == "cutting"
    assert "Bob" in text_of(fair.latest(ALICE[0]))
    fair.answer(BOB[0], "cut three")
    row = fair.game_row(game_id)
    assert row.status == "active"
    assert [e["seat"] for e in row.entropy or []] == [0, 1, 2]


def test_an_admin_seed_makes_an_unverifiable_game(fair: Harness) -> None:
    game_id = fair.new_game(seed="chosen")
    row = fair.game_row(game_id)
    assert row.status == "active" and row.commitment is None
    assert "commitment" not in text_of(fair.latest(ALICE[0]))
    data = fair.service.export(game_id)
    assert "deal_proof" not in data
    assert not verify_archive(data).verifiable


def test_the_cut_waits_are_reminded_and_time_out(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    harness = Harness.build(
        tmp_path, db_url, db_engine, fair_deals=True, reminder_hours=1, timeout_days=1
    )
    try:
        game_id = harness.service.new_game([ALICE, BOB], target=61)
        harness.step()
        harness.answer(ALICE[0], "cut")
        before = harness.count(BOB[0]), harness.count(ALICE[0])
        harness.clock.advance(timedelta(hours=2))
        assert harness.service.run_timers() == 1
        harness.step()
        assert harness.count(BOB[0]) == before[0] + 1
        assert harness.count(ALICE[0]) == before[1]  # she has cut
        assert "Reminder" in about(harness.latest(BOB[0]))
        harness.clock.advance(timedelta(days=2))
        harness.service.run_timers()
        harness.step()
        row = harness.game_row(game_id)
        assert row.status == "aborted" and "cut" in (row.status_reason or "")
        told = " ".join(text_of(harness.latest(ALICE[0])).split())
        assert "aborted" in told
        # The mail that says so reveals the server seed, and so does the archive.
        assert f"revealed now the game is aborted: {row.server_seed}" in told
        harness.answer(BOB[0], "cut")
        assert harness.last_inbound().status == "rejected"
        archive = harness.service.export(game_id)
        proof = archive["deal_proof"]
        assert proof["server_seed"] == row.server_seed and proof["outcome"] == "aborted"
        assert proof["abort_reason"] == row.status_reason
        assert [(c["seat"], c["accepted"], c["reason"]) for c in proof["cuts"]] == [
            (0, True, None),
            (1, False, "game is aborted"),
        ]
        assert verify_archive(archive).ok
    finally:
        harness.close()


def test_a_challenge_commits_in_its_invitations(fair: Harness) -> None:
    from tests.e2e.helpers import SERVICE_ADDRESS, plain_mail, reply

    fair.new_game(seed="known")  # Alice plays already (the lobby is invite-only)
    fair.deliver(plain_mail(ALICE[0], SERVICE_ADDRESS, "challenge bob@example.org to 61"))
    assert "held until" in (fair.last_inbound().reason or "")  # her From alone: one click
    # Her one click is also her cut: the confirmation showed the game's commitment.
    fair.confirm(ALICE[0], "yes 7 fish")
    (invite,) = [m for m in fair.received(BOB[0]) if about(m) == INVITE_SUBJECT]
    text = text_of(invite).replace("\n", " ")
    assert f"Deal commitment ({PROTOCOL}):" in text
    fair.deliver(reply(invite, BOB[0], "Bob", "accept"))
    game_id = fair.last_inbound().game_id
    assert game_id is not None
    dealt = fair.game_row(game_id)
    # Everyone has cut (her confirmation, his accept): dealt at once.
    assert dealt.status == "active" and dealt.commitment is not None
    # The game carries the commitment its invitation showed.
    assert dealt.commitment in text.replace(" ", "")
    assert dealt.server_seed is not None and dealt.server_seed.encode() not in all_raw(fair)
    # Bob's "accept" answered a mail that showed the commitment: it is his cut, and the
    # game's first mail (his cards) quotes the text recorded for him and its hash.
    bob_text = str(next(e for e in dealt.entropy or () if e["seat"] == 1)["text"])
    told = " ".join(text_of(fair.latest(BOB[0])).split())
    assert f"recorded as “{bob_text}” (SHA-256 {text_hash(bob_text)})" in told
    assert "Please cut" not in about(fair.latest(ALICE[0]))
    # The deal comes from the seed the invitation committed to and both cuts.
    texts = [e["text"] for e in sorted(dealt.entropy or (), key=lambda e: e["seat"])]
    assert [e["seat"] for e in dealt.entropy or ()] == [0, 1] and texts[1].startswith("<")
    assert texts[0].endswith(" 7 fish")
    pairs = [(seat, text_hash(t)) for seat, t in enumerate(texts)]
    assert dealt.seed == key_v3(dealt.server_seed, game_id, 2, pairs)


def test_play_computer_by_mail_starts_with_the_cut(fair: Harness) -> None:
    from tests.e2e.helpers import SERVICE_ADDRESS, plain_mail

    fair.new_game(seed="known")
    fair.deliver(plain_mail(ALICE[0], SERVICE_ADDRESS, "play computer to 61"))
    game_id = fair.last_inbound().game_id
    assert game_id is not None and fair.game_row(game_id).status == "cutting"
    first = fair.latest(ALICE[0])
    assert "Please cut" in about(first)
    # "games" lists it, waiting for her cut.
    fair.deliver(plain_mail(ALICE[0], SERVICE_ADDRESS, "games"))
    assert "your cut for the deal" in text_of(fair.latest(ALICE[0]))
    fair.deliver(plain_mail(ALICE[0], SERVICE_ADDRESS, "standings"))
    assert "Standings" in about(fair.latest(ALICE[0]))


def test_standings_by_mail_answer_only_the_asker(fair: Harness) -> None:
    from tests.e2e.helpers import SERVICE_ADDRESS, plain_mail

    game_id = fair.new_game(seed="standings")
    fair.play_until(game_id, lambda g: g.is_over)
    counts = fair.counts((ALICE[0], BOB[0]))
    fair.deliver(plain_mail(ALICE[0], SERVICE_ADDRESS, "standings"))
    assert fair.last_inbound().status == "applied"
    assert fair.counts((ALICE[0], BOB[0])) == {
        ALICE[0]: counts[ALICE[0]] + 1,
        BOB[0]: counts[BOB[0]],
    }
    text = text_of(fair.latest(ALICE[0]))
    assert "Alice" in text and "Bob" in text and "1 finished game" in text
    # In a game's thread too.
    fair.answer(BOB[0], "standings")
    assert "Standings" in about(fair.latest(BOB[0]))


def test_the_admin_resends_or_aborts_a_game_waiting_for_its_cuts(fair: Harness) -> None:
    game_id = fair.service.new_game([ALICE, BOB], target=61)
    fair.step()
    before = fair.counts((ALICE[0], BOB[0]))
    assert fair.service.resend(game_id) == 2
    fair.step()
    assert fair.counts((ALICE[0], BOB[0])) == {a: n + 1 for a, n in before.items()}
    assert "Please cut" in about(fair.latest(BOB[0]))
    with pytest.raises(ServiceError, match="cannot make it paused"):
        fair.service.set_status(game_id, "paused")
    fair.answer(ALICE[0], "cut", message_id="<alice-only@example.com>")
    fair.service.set_status(game_id, "aborted", "a test")
    fair.step()
    row = fair.game_row(game_id)
    assert row.status == "aborted" and row.server_seed is not None
    told = text_of(fair.latest(ALICE[0]))
    assert "aborted" in told and "No cards were dealt" in told and "cut 17" not in told
    # The mail that says so reveals the server seed; so does the archive, which verifies.
    assert f"revealed now the game is aborted: {row.server_seed}" in " ".join(told.split())
    archive = fair.service.export(game_id)
    proof = archive["deal_proof"]
    assert archive["seed"] is None and archive["actions"] == []
    assert proof["server_seed"] == row.server_seed
    assert (proof["outcome"], proof["abort_reason"], proof["recuts"]) == ("aborted", "a test", [])
    assert [c["text"] for c in proof["cuts"]] == ["<alice-only@example.com>"]
    assert verify_archive(archive).ok
    # A revealed seed that is not the committed one is caught.
    forged = {**archive, "deal_proof": {**proof, "server_seed": "0" * 64}}
    assert verify_archive(forged).check == "commitment"
    played = {**archive, "actions": [{"type": "go", "seat": 0}]}
    assert verify_archive(played).check == "replay"
    hidden = {**archive, "deal_proof": {**proof, "server_seed": None}}
    assert verify_archive(hidden).revealed is False
    # Nothing was dealt: there is no replay, and the archive does not import.
    with pytest.raises(ReplayPageError, match="ended before its deal"):
        replay_page(archive, seat=0)
    with pytest.raises(ServiceError, match="never dealt"):
        fair.service.import_archive(archive)
