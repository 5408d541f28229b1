"""The public commitment log (`engine.commitlog`, `pbem.store.commitlog`): every fair
game's commitment enters it when the game is created, before anyone cuts; its fate and
seed when it ends; every game mail shows the head; ``pbem site`` publishes it; ``pbem
verify --log`` checks a game against it and ``pbem log check`` the whole chain. On both
databases, with the service's own clock."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session

from engine.commitlog import GENESIS, check_game, check_log, make_entry
from pbem.demo.bots import text_of
from pbem.store.commitlog import entries, head_of
from tests.e2e.helpers import ALICE, BOB, CAROL, Harness, about, cli_env, reply, run_cli


@pytest.fixture
def fair(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(
        tmp_path, db_url, db_engine, fair_deals=True, reminder_hours=1, timeout_days=1
    )
    yield harness
    harness.close()


def log_of(h: Harness) -> list[dict[str, object]]:
    with Session(h.db) as session:
        return entries(session)


def test_a_game_is_committed_before_any_cut_and_its_fate_is_logged(
    fair: Harness, tmp_path: Path
) -> None:
    game_id = fair.service.new_game([ALICE, BOB], target=61)
    fair.step()
    row = fair.game_row(game_id)
    log = log_of(fair)
    assert [(e["game"], e["event"], e["commitment"]) for e in log] == [
        (game_id, "commit", row.commitment)
    ]
    # The head is in the mail that asks for the cut: a short line.
    with Session(fair.db) as session:
        seq, head = head_of(session)
    asking = " ".join(text_of(fair.latest(ALICE[0])).split())
    assert f"Commitment log: {seq} entries, head {head[:16]}." in asking
    fair.answer(ALICE[0], "cut 5 geese")
    fair.answer(BOB[0], "cut")
    fair.play_until(game_id, lambda g: g.is_over)
    fair.step()
    log = log_of(fair)
    ends = [e for e in log if e["event"] == "end"]
    assert [(e["game"], e["fate"], e["server_seed"]) for e in ends] == [
        (game_id, "played", fair.game_row(game_id).server_seed)
    ]
    # The game-over mail shows the next game's commitment: logged too, before any answer.
    assert log[-1]["event"] == "next" and log[-1]["game"] == game_id
    # The chain holds; the archive agrees with the log, through the CLI as well.
    assert check_log(log).ok and check_game(log, fair.service.export(game_id)) == []
    env = cli_env(tmp_path / "cli", fair.settings.db_url)
    site = tmp_path / "site"
    made = run_cli(env, "site", str(site))
    assert made.exit_code == 0 and "commitment log: 3 entries" in made.stdout, made.output
    published = json.loads((site / "commitment-log.json").read_text(encoding="utf-8"))
    assert published["head"]["entries"] == 3 and published["entries"] == log
    archive = tmp_path / "game.json"
    archive.write_text(json.dumps(fair.service.export(game_id)), encoding="utf-8")
    log_file = site / "commitment-log.json"
    checked = run_cli(env, "verify", str(archive), "--log", str(log_file))
    assert checked.exit_code == 0 and "commitment log" in checked.stdout, checked.output
    counted = run_cli(env, "log", "check")
    assert counted.exit_code == 0, counted.output
    assert (
        "1 games, 1 dealt (1 played, 0 aborted after the deal), 0 aborted before" in counted.stdout
    )
    # A seed swapped after the cuts (the archive rewritten, consistent in itself): the
    # log holds the commitment the players were sent, and the archive's is another.
    forged = fair.service.export(game_id)
    forged["deal_proof"]["commitment"] = "ab" * 32
    archive.write_text(json.dumps(forged), encoding="utf-8")
    caught = run_cli(env, "verify", str(archive), "--log", str(log_file))
    assert caught.exit_code == 1 and "check log" in caught.stderr, caught.output


def test_aborts_before_and_after_the_deal_and_a_dropped_deal(fair: Harness, tmp_path: Path) -> None:
    never = fair.service.new_game([ALICE, BOB], target=61)
    fair.step()
    fair.answer(ALICE[0], "cut")
    fair.clock.advance(timedelta(days=2))  # Bob never cuts: aborted at the cut deadline
    fair.service.run_timers()
    fair.step()
    dealt = fair.service.new_game([ALICE, CAROL], target=61)
    fair.step()
    fair.answer(ALICE[0], "cut")
    fair.answer(CAROL[0], "cut")
    fair.service.set_status(dealt, "aborted", "enough")
    log = log_of(fair)
    found = check_log(log)
    assert found.ok and (found.games, found.aborted_before, found.aborted_after) == (2, 1, 1)
    for game_id in (never, dealt):
        assert check_game(log, fair.service.export(game_id)) == []
    # A dealt game relabelled "never dealt" in its archive: the log says it was dealt.
    relabelled = fair.service.export(dealt)
    relabelled.update(seed=None, actions=[])
    assert any("aborted after the deal" in p for p in check_game(log, relabelled))
    # A game run again under the same number: two commitments show.
    rerun = make_entry(len(log) + 1, str(log[-1]["hash"]), dealt, "commit", "cd" * 32, "2026-12")
    again = [*copy.deepcopy(log), rerun]
    assert any("2 commitments" in p for p in check_game(again, fair.service.export(dealt)))
    assert not check_log(again).ok
    # Any entry changed or dropped breaks the chain.
    changed = copy.deepcopy(log)
    changed[1]["fate"] = "played"
    assert not check_log(changed).ok
    assert not check_log(log[:1] + log[2:]).ok
    env = cli_env(tmp_path / "cli", fair.settings.db_url)
    path = tmp_path / "log.json"
    path.write_text(json.dumps({"entries": changed}), encoding="utf-8")
    result = run_cli(env, "log", "check", "--file", str(path))
    assert result.exit_code == 1 and "does not hold" in result.stderr
    path.write_text("[1", encoding="utf-8")
    result = run_cli(env, "log", "check", "--file", str(path))
    assert result.exit_code == 1 and "Traceback" not in result.output


def cut(h: Harness, who: tuple[str, str], game_id: int, words: str) -> None:
    """``who`` cuts in game ``game_id``, answering that game's request for the cut."""
    asked = [m for m in h.received(who[0]) if f"[Cribbage {game_id}] Please cut" in about(m)]
    h.deliver(reply(asked[-1], who[0], who[1], words))


def test_a_month_of_service_with_aborts_keeps_one_chain(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    """Thirty days: each day a game is created; one in three is aborted by the admin
    before its deal, one in three dealt and then aborted, the rest wait for a cut until
    their deadline aborts them. The log holds, its counts are the service's, and its
    stored head is its last entry's (each append read only the head)."""
    h = Harness.build(tmp_path, db_url, db_engine, fair_deals=True, timeout_days=3)
    try:
        for day in range(30):
            game_id = h.service.new_game([ALICE, BOB], target=61)
            h.step()
            if day % 3 == 0:
                h.service.set_status(game_id, "aborted", "never dealt")
            elif day % 3 == 1:
                cut(h, ALICE, game_id, f"cut {day}")
                cut(h, BOB, game_id, "cut")
                h.service.set_status(game_id, "aborted", "dealt, then aborted")
            h.step()
            h.clock.advance(timedelta(hours=20))
            h.service.run_timers()
        h.clock.advance(timedelta(days=5))
        h.service.run_timers()
        h.step()
        rows = [h.game_row(game_id) for game_id in range(1, 31)]
        before = sum(1 for r in rows if r.status == "aborted" and r.seed is None)
        after = sum(1 for r in rows if r.status == "aborted" and r.seed is not None)
        assert (before, after) == (20, 10)
        log = log_of(h)
        found = check_log(log)
        assert found.ok, found.problems
        assert (found.games, found.aborted_before, found.aborted_after) == (30, before, after)
        with Session(h.db) as session:
            assert head_of(session) == (found.entries, found.head) and found.head != GENESIS
        assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
        for game_id in range(1, 31):
            assert check_game(log, h.service.export(game_id)) == []
    finally:
        h.close()


def test_the_players_mail_pins_the_log(fair: Harness, tmp_path: Path) -> None:
    """Every game mail shows the log's head; with the player's saved mail ``pbem verify
    --log`` checks that the published log holds each head shown. A log rewritten after
    the game — an entry changed and every later one chained again, so that it holds by
    itself — does not."""
    from engine.commitlog import entry_hash
    from tests.pbem.test_deal_mail import save_mail

    game_id = fair.service.new_game([ALICE, BOB], target=61)
    fair.step()
    fair.answer(ALICE[0], "cut 6 geese")
    fair.answer(BOB[0], "cut")
    fair.play_until(game_id, lambda g: g.is_over)
    fair.step()
    env = cli_env(tmp_path / "cli", fair.settings.db_url)
    assert run_cli(env, "site", str(tmp_path / "site")).exit_code == 0
    published = tmp_path / "site" / "commitment-log.json"
    archive = tmp_path / "game.json"
    archive.write_text(json.dumps(fair.service.export(game_id)), encoding="utf-8")
    saved = save_mail(fair, ALICE[0], tmp_path / "alice")["mbox"]
    checked = run_cli(env, "verify", str(archive), "--log", str(published), "--mail", str(saved))
    said = " ".join(checked.stdout.split())
    assert checked.exit_code == 0, checked.output
    assert "the log's heads the player's mail showed (" in said and "the log holds each" in said
    # Rewritten: the game's commitment entry given another time, the chain made anew.
    log = json.loads(published.read_text(encoding="utf-8"))
    rows = log["entries"]
    rows[0]["at"] = "2020-01-01T00:00:00+00:00"
    prev = "0" * 64
    for row in rows:
        row["prev"] = prev
        row["hash"] = prev = entry_hash(row)
    assert check_log(rows).ok and check_game(rows, fair.service.export(game_id)) == []
    forged = tmp_path / "rewritten.json"
    forged.write_text(json.dumps(log), encoding="utf-8")
    alone = run_cli(env, "verify", str(archive), "--log", str(forged))
    assert alone.exit_code == 0, alone.output  # the log alone cannot tell
    caught = run_cli(env, "verify", str(archive), "--log", str(forged), "--mail", str(saved))
    assert caught.exit_code == 1 and "check log" in caught.stderr, caught.output
    assert "the log was rewritten after that mail" in " ".join(caught.stderr.split())
