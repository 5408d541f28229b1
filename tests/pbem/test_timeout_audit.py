"""A real service game in which Alice's time runs out now and then, so the computer moves
for her (``timeout_action`` autoplay): its archive lists those moves (``timeouts``) and
marks the computer's seat in its players; ``pbem verify`` re-derives them with the
computer seat's moves, and a forged deviation in one of them is caught. On both
databases."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from engine.archive import replay_archive
from engine.audit import audit_archive
from engine.dealcheck import verify_archive
from engine.fairness import deal_records
from engine.view import player_view
from pbem import engine_digest
from pbem.render.replay import replay_data
from pbem.service import admin
from tests.e2e.helpers import ALICE, Harness, cli_env, run_cli
from tests.engine.test_audit import person_move
from tests.engine.test_audit_timeouts import forged_at

ROBOT = ("computer@example.com", "Computer")


@pytest.fixture
def timed(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(
        tmp_path, db_url, db_engine, fair_deals=True, timeout_days=1, reminder_hours=0
    )
    yield harness
    harness.close()


def play_with_timeouts(h: Harness) -> int:
    """Alice against the computer (hard), to 61: every fourth turn she lets her time
    run out and the service's timer moves for her; the game's id once it is over."""
    game_id = admin.new_game(
        h.service._ctx(), [ALICE, ROBOT], target=61, computer=[1], levels={1: "hard"}
    )
    h.step()
    h.answer(ALICE[0], "cut 4 calling birds")
    rng = random.Random(7)
    for turn in range(400):
        game = h.game(game_id)
        if game.is_over:
            return game_id
        assert game.to_act() == (0,)
        if turn % 4 == 3:
            h.clock.advance(timedelta(days=1, minutes=1))
            h.step()  # the timer: the computer moves for Alice
            assert len(h.game(game_id).actions) > len(game.actions)
        else:
            h.move(game_id, person_move(player_view(game, 0), rng))
            assert h.last_inbound().status == "applied", h.last_inbound().reason
    raise AssertionError("the game did not end")


def test_moves_made_at_a_timeout_are_listed_and_re_derived(timed: Harness, tmp_path: Path) -> None:
    game_id = play_with_timeouts(timed)
    archive = timed.service.export(game_id)
    listed = archive["timeouts"]
    assert len(listed) >= 3 and {t["seat"] for t in listed} == {0}
    assert listed[0]["level"] == "medium" and listed[0]["engine_sha256"] == engine_digest()
    logged = timed.log(game_id)
    for entry in listed:  # each is one of Alice's moves, made by the service itself
        seat, auto = logged[entry["action"] - 1][1], logged[entry["action"] - 1][3]
        assert (seat, auto) == (0, True)
    assert archive["players"] == [
        {"email": ALICE[0], "name": "Alice"},
        {"email": ROBOT[0], "name": "Computer", "computer": True},
    ]
    audit = audit_archive(archive)
    assert audit.ok and audit.timeouts == len(listed)
    # pbem verify says so, and who sat where.
    env = cli_env(tmp_path / "cli", timed.settings.db_url)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(archive), encoding="utf-8")
    result = run_cli(env, "verify", str(path))
    said = " ".join(result.stdout.split())
    assert result.exit_code == 0, result.output
    assert f"{len(listed)} of them made for players whose time ran out" in said
    numbers = ", ".join(str(t["action"]) for t in listed)
    assert (
        f"players: seat 0 Alice (the computer moved for them at a timeout: actions {numbers}); "
        "seat 1 Computer (the computer, hard)"
    ) in said
    # The replay page shows the server's check, timeouts counted.
    shown = replay_data(archive)["computer_check"]
    assert shown["ok"] and "made for players whose time ran out" in shown["message"]
    # An import keeps them, the archive exported again lists the same moves.
    again = timed.service.export(timed.service.import_archive(archive))
    assert again["timeouts"] == listed and again["actions"] == archive["actions"]

    # A forged deviation: one of those moves changed and the game played on from there
    # by the engine, its deal records and result made anew. The deals still verify; the
    # audit does not.
    number = next(
        t["action"]
        for t in listed
        if len(list(replay_archive(archive))[t["action"] - 1].legal_actions(0)) > 1
    )
    forged, other = forged_at(archive, number)
    final = list(replay_archive(forged))[-1]
    proof = forged["deal_proof"]
    proof.update(deal_records(replay_archive(forged)))
    assert final.outcome is not None
    proof["result"] = {"scores": list(final.outcome.scores), "winner": final.outcome.winner}
    assert verify_archive(forged).ok, verify_archive(forged).message
    path.write_text(json.dumps(forged), encoding="utf-8")
    caught = run_cli(env, "verify", str(path))
    text = " ".join(caught.stderr.split())
    assert caught.exit_code == 1, caught.output
    assert f"action {number} " in text and "the computer moving for seat 0 at a timeout" in text
    assert str(other) in text
    # The players list marking a person's seat as the computer: caught too.
    marked: dict[str, Any] = json.loads(json.dumps(archive))
    marked["players"][0]["computer"] = True
    path.write_text(json.dumps(marked), encoding="utf-8")
    wrong = run_cli(env, "verify", str(path))
    assert wrong.exit_code == 1 and "marks seat 0 as the computer" in wrong.stderr


def test_a_forfeit_at_a_timeout_is_no_computer_move(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    h = Harness.build(
        tmp_path, db_url, db_engine, timeout_days=1, reminder_hours=0, timeout_action="forfeit"
    )
    try:
        game_id = h.service.new_game([ALICE, ("bob@example.org", "Bob")], target=61, seed="f")
        h.step()
        h.clock.advance(timedelta(days=1, minutes=1))
        h.step()
        archive = h.service.export(game_id)
        assert h.game(game_id).is_over and archive["actions"][-1]["type"] == "resign"
        assert "timeouts" not in archive and audit_archive(archive).decisions == 0
    finally:
        h.close()


def test_an_archive_with_timeouts_is_found_stored_already(timed: Harness, tmp_path: Path) -> None:
    """The moves made at a timeout are kept beside the game's rules, not among them:
    ``pbem game import`` of the archive of a stored game still finds that game."""
    game_id = timed.service.new_game([ALICE, ("bob@example.org", "Bob")], target=61, seed="t")
    timed.step()
    timed.clock.advance(timedelta(days=1, minutes=1))
    timed.step()  # both discards made by the computer
    archive = timed.service.export(game_id)
    assert [t["seat"] for t in archive["timeouts"]] == [0, 1]
    path = tmp_path / "game.json"
    path.write_text(json.dumps(archive), encoding="utf-8")
    env = cli_env(tmp_path / "cli", timed.settings.db_url)
    again = run_cli(env, "game", "import", str(path))
    assert again.exit_code == 1 and f"is game {game_id}, stored already" in again.stderr
