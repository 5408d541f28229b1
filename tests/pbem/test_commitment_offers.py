"""An invitation's commitment in the public commitment log (`engine.commitlog`): a
challenge of a fair game shows its commitment in the invitations, and each invitee's
``accept`` is their cut — so the commitment enters the log (an ``offer``) when the
invitations are made, before anyone can accept; the game it becomes commits the same
commitment, and an offer declined, expired, withdrawn or whose invitee was forgotten
lapses (aborted before the deal, its seed revealed). On both databases."""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session

from engine.commitlog import NO_GAME, check_game, check_log, entry_hash, make_entry
from pbem.demo.bots import text_of
from pbem.store.commitlog import entries
from tests.e2e.helpers import ALICE, Harness, cli_env, reply, run_cli
from tests.e2e.test_lobby import answer_invite, ask_sure, invitations, invite_to

A, B, C = ALICE[0], "bob@example.org", "carol@example.net"
SHOWN = re.compile(r"Deal commitment \(pbem-deal/\d\): ([0-9a-f]{64})")


@pytest.fixture
def fair(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(
        tmp_path, db_url, db_engine, fair_deals=True, max_unproven_answers_per_day=20
    )
    harness.new_game()  # Alice is a player of the service: she may challenge
    yield harness
    harness.close()


def log_of(h: Harness) -> list[dict[str, object]]:
    with Session(h.db) as session:
        return entries(session)


def shown_to(h: Harness, address: str) -> str:
    """The commitment the newest invitation to ``address`` showed."""
    found = SHOWN.search(" ".join(text_of(invite_to(h, address)[-1]).split()))
    assert found is not None
    return found.group(1)


def offers(h: Harness) -> list[tuple[object, ...]]:
    return [
        (e["event"], e["game"], e["commitment"], e["fate"], e["server_seed"])
        for e in log_of(h)
        if e["event"] in ("offer", "lapse")
    ]


def test_an_offer_is_logged_before_any_accept_and_becomes_its_game(
    fair: Harness, tmp_path: Path
) -> None:
    h = fair
    ask_sure(h, A, "challenge bob@example.org carol@example.net to 61")
    shown = shown_to(h, B)
    assert shown == shown_to(h, C)  # one commitment, shown to every invitee
    # In the log once the invitations are made (no game yet: game 0): nobody cut yet.
    assert offers(h) == [("offer", NO_GAME, shown, None, None)]
    offered_at = next(e["seq"] for e in log_of(h) if e["event"] == "offer")
    answer_invite(h, B, "accept 7 swans")
    assert offers(h) == [("offer", NO_GAME, shown, None, None)]
    answer_invite(h, C, "accept")
    game_id = h.last_inbound().game_id
    assert game_id is not None
    # The game commits the offered commitment, after the offer.
    commit = next(e for e in log_of(h) if e["event"] == "commit" and e["game"] == game_id)
    assert commit["commitment"] == shown and int(str(commit["seq"])) > int(str(offered_at))
    found = check_log(log_of(h))
    assert found.ok, found.problems
    assert (found.offers, found.taken, found.lapsed) == (1, 1, 0)
    assert check_game(log_of(h), h.service.export(game_id)) == []
    counted = run_cli(cli_env(tmp_path / "cli", h.settings.db_url), "log", "check")
    said = " ".join(counted.stdout.split())
    assert counted.exit_code == 0, said
    assert "1 offers (commitments shown before their game), 1 became games, 0 lapsed" in said


@pytest.mark.parametrize("how", ["declined", "expired", "withdrawn", "forgotten"])
def test_an_offer_that_ends_without_a_game_lapses_with_its_seed(fair: Harness, how: str) -> None:
    h = fair
    ask_sure(h, A, "challenge bob@example.org carol@example.net")
    shown = shown_to(h, B)
    answer_invite(h, B, "accept")  # one accept (a cut) already made
    if how == "declined":
        answer_invite(h, C, "decline")
    elif how == "expired":
        h.clock.advance(timedelta(days=7, minutes=1))
        h.step()
    elif how == "withdrawn":
        ask_sure(h, A, "cancel")
    else:
        h.service.forget(C)
    statuses = {r.status for r in invitations(h)}
    assert "pending" not in statuses and len(statuses) > 1, statuses  # no game can start
    lapsed = offers(h)[-1]
    assert lapsed[:4] == ("lapse", NO_GAME, shown, "aborted before the deal")
    seed = str(lapsed[4])
    assert hashlib.sha256(seed.encode()).hexdigest() == shown
    assert seed == invitations(h)[0].settings["server_seed"]
    assert len(offers(h)) == 2  # one lapse, whatever more happens
    h.clock.advance(timedelta(days=8))
    h.step()
    assert len(offers(h)) == 2
    found = check_log(log_of(h))
    assert found.ok, found.problems
    assert (found.offers, found.taken, found.lapsed, found.games) == (1, 0, 1, 0)
    said = "1 offers (commitments shown before their game), 0 became games, 1 lapsed"
    assert said in found.summary()


def test_an_offer_that_never_went_out_is_not_logged(fair: Harness) -> None:
    """A challenge whose every invitee may not be invited now sends nothing: nothing
    was shown, nothing is offered."""
    h = fair
    ask_sure(h, A, "challenge carol@example.net")
    answer_invite(h, C, "never")
    before = offers(h)
    assert [e[0] for e in before] == ["offer", "lapse"]
    ask_sure(h, A, "challenge carol@example.net")
    assert h.last_inbound().status == "rejected"
    assert offers(h)[: len(before)] == before
    # The second challenge's confirmation showed a commitment (an offer); refused, it lapses.
    assert [e[0] for e in offers(h)[len(before) :]] == ["offer", "lapse"]


def test_the_log_check_finds_an_offer_misused(fair: Harness) -> None:
    """Forged logs, each chained anew so that only the offer's rules can fail: a lapsed
    offer taken by a game afterwards, a lapse of no offer, twice, or with the wrong seed,
    a commitment offered twice."""
    h = fair
    ask_sure(h, A, "challenge carol@example.net")
    answer_invite(h, C, "decline")
    log = log_of(h)
    offer = next(e for e in log if e["event"] == "offer")
    lapse = next(e for e in log if e["event"] == "lapse")

    def chained(*extra: tuple[object, str, str, str | None, str | None]) -> list[dict[str, object]]:
        out = copy.deepcopy(log)
        for game, event, commit, fate, seed in extra:
            prev, number = str(out[-1]["hash"]), int(str(game))
            entry = make_entry(len(out) + 1, prev, number, event, commit, "2027-01", fate=fate)
            entry["server_seed"] = seed
            entry["hash"] = entry_hash(entry)
            out.append(entry)
        return out

    assert check_log(chained()).ok
    commit, seed = str(offer["commitment"]), str(lapse["server_seed"])
    fate = "aborted before the deal"
    cases = {
        "which was lapsed before": chained((99, "commit", commit, None, None)),
        "it was lapsed before": chained((offer["game"], "lapse", commit, fate, seed)),
        "it was never offered": chained((77, "lapse", "ab" * 32, fate, "x")),
        "is offered twice": chained((78, "offer", commit, None, None)),
    }
    for said, forged in cases.items():
        found = check_log(forged)
        assert any(said in p for p in found.problems), (said, found.problems)
    wrong = copy.deepcopy(log)
    wrong[-1] = make_entry(
        int(str(lapse["seq"])),
        str(lapse["prev"]),
        int(str(lapse["game"])),
        "lapse",
        commit,
        str(lapse["at"]),
        fate="played",
        server_seed="not the seed",
    )
    problems = check_log(wrong).problems
    assert any("lapses with a seed that is not its commitment's" in p for p in problems), problems
    assert any("lapses with the fate 'played'" in p for p in problems), problems


def test_a_rematch_shows_the_logged_next_commitment_and_makes_no_offer(fair: Harness) -> None:
    """A rematch's invitation shows the commitment the game-over mail showed (logged as
    ``next``): no offer of its own, and nothing lapses when it is declined — the same
    commitment serves the rematch asked for again, which the invitee accepts."""
    h = fair
    game_id = h.service.new_game([ALICE, ("bob@example.org", "Bob")], target=61)
    h.step()
    h.answer(A, "cut")
    h.answer(B, "cut")
    h.answer(B, "resign confirm")
    assert h.game(game_id).is_over
    following = next(e for e in log_of(h) if e["event"] == "next")
    h.answer(A, "rematch")
    assert shown_to(h, B) == following["commitment"]
    answer_invite(h, B, "decline")
    assert offers(h) == []
    h.clock.advance(timedelta(days=31))  # Bob's quiet days after a decline
    over = [m for m in h.received(A) if "gameover" in str(m["Message-ID"])][-1]
    h.deliver(reply(over, A, "Alice", "rematch"))  # the game-over mail, answered again
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    invite = invite_to(h, B)[-1]
    h.deliver(reply(invite, B, "Bob", "accept"))
    rematch = h.last_inbound().game_id
    assert rematch is not None and offers(h) == []
    commit = next(e for e in log_of(h) if e["event"] == "commit" and e["game"] == rematch)
    assert commit["commitment"] == following["commitment"]
    found = check_log(log_of(h))
    assert found.ok and (found.offers, found.games) == (0, 2), found.problems
