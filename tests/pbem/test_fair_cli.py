"""``pbem verify`` and ``pbem standings`` on the real command line, on both databases."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from pbem.cli.fair import NOT_VERIFIABLE_EXIT
from tests.e2e.helpers import ALICE, BOB, Harness, cli_env, run_cli


@pytest.fixture
def fair(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(tmp_path, db_url, db_engine, fair_deals=True)
    yield harness
    harness.close()


def finished_fair_game(h: Harness) -> int:
    game_id = h.service.new_game([ALICE, BOB], target=61)
    h.step()
    h.answer(ALICE[0], "cut 3 blind mice")
    h.answer(BOB[0], "cut")
    h.play_until(game_id, lambda g: g.is_over)
    return game_id


def test_verify_a_finished_fair_game_and_tampered_copies(
    fair: Harness, db_url: str, tmp_path: Path
) -> None:
    env = cli_env(fair.tmp_path, db_url)
    game_id = finished_fair_game(fair)
    result = run_cli(env, "verify", "--game", str(game_id))
    assert result.exit_code == 0, result.output
    assert "deals verified" in result.stdout
    archive = tmp_path / "g.json"
    assert run_cli(env, "game", "export", str(game_id), "-o", str(archive)).exit_code == 0
    ok = run_cli(env, "verify", str(archive))
    assert ok.exit_code == 0 and ok.stdout.startswith("all ")
    imported = run_cli(env, "game", "import", str(archive), "--again")
    assert imported.exit_code == 0, imported.output
    copy = int(imported.stdout.split("imported as game ")[1].split()[0])
    again = run_cli(env, "verify", "--game", str(copy))
    assert again.exit_code == 0 and "deals verified" in again.stdout
    data = json.loads(archive.read_text())
    data["deal_proof"]["entropy"][0]["text"] += "x"
    data["deal_proof"]["entropy"][0].pop("sha256", None)
    archive.write_text(json.dumps(data))
    bad = run_cli(env, "verify", str(archive))
    assert bad.exit_code == 1 and "check seed" in bad.stderr and "Traceback" not in bad.output
    refused = run_cli(env, "game", "import", str(archive), "--again")
    assert refused.exit_code == 1 and "do not verify" in refused.stderr
    archive.write_text("{not json")
    assert run_cli(env, "verify", str(archive)).exit_code == 1
    assert run_cli(env, "verify", str(tmp_path / "missing.json")).exit_code == 1
    assert run_cli(env, "verify").exit_code == 1
    assert run_cli(env, "verify", "--game", "999").exit_code == 1


def test_verify_says_when_a_game_is_not_verifiable(fair: Harness, db_url: str) -> None:
    env = cli_env(fair.tmp_path, db_url)
    game_id = fair.new_game(seed="admin-chosen")
    result = run_cli(env, "verify", "--game", str(game_id))
    assert result.exit_code == NOT_VERIFIABLE_EXIT
    assert "not verifiable (no commitment)" in result.stderr


def test_a_running_fair_game_shows_no_seed(fair: Harness, db_url: str) -> None:
    env = cli_env(fair.tmp_path, db_url)
    game_id = fair.service.new_game([ALICE, BOB], target=61)
    fair.step()
    row = fair.game_row(game_id)
    assert row.server_seed is not None
    show = run_cli(env, "game", "show", str(game_id))
    assert show.exit_code == 0 and "waiting for the cut of Alice, Bob" in show.stdout
    assert row.server_seed not in show.output
    replay = run_cli(env, "game", "replay", str(game_id))
    assert replay.exit_code == 1 and "not dealt yet" in replay.stderr
    fair.answer(ALICE[0], "cut")
    fair.answer(BOB[0], "cut")
    row = fair.game_row(game_id)
    assert row.seed is not None and row.server_seed is not None
    for args in (("game", "show", str(game_id)), ("game", "show", str(game_id), "--as", "Bob")):
        out = run_cli(env, *args)
        assert out.exit_code == 0, out.output
        assert row.seed not in out.output and row.server_seed not in out.output
    verify = run_cli(env, "verify", "--game", str(game_id))
    assert verify.exit_code == 3 and "not revealed" in verify.stderr


def test_a_game_aborted_before_its_deal_replays_as_nothing_dealt(
    fair: Harness, db_url: str
) -> None:
    env = cli_env(fair.tmp_path, db_url)
    game_id = fair.service.new_game([ALICE, BOB], target=61)
    fair.step()
    fair.answer(ALICE[0], "cut")
    assert run_cli(env, "game", "abort", str(game_id), "--reason", "Bob left").exit_code == 0
    replay = run_cli(env, "game", "replay", str(game_id), "--verify")
    assert replay.exit_code == 0, replay.output
    assert "aborted before its deal (Bob left): no cards were dealt" in replay.stdout
    assert "verified: no moves were logged" in replay.stdout
    assert "waits for the players' cuts" not in replay.output


def test_standings_table_and_json(fair: Harness, db_url: str) -> None:
    env = cli_env(fair.tmp_path, db_url)
    empty = run_cli(env, "standings")
    assert empty.exit_code == 0 and "no finished game" in empty.stdout
    finished_fair_game(fair)
    table = run_cli(env, "standings")
    assert table.exit_code == 0, table.output
    assert "Alice" in table.stdout and "Bob" in table.stdout and "rating" in table.stdout
    data = json.loads(run_cli(env, "standings", "--json").stdout)
    assert data["games"] == 1 and len(data["players"]) == 2
    assert {p["key"] for p in data["players"]} == {ALICE[0], BOB[0]}
    top = json.loads(run_cli(env, "standings", "--json", "--top", "1").stdout)
    assert len(top["players"]) == 1 and top["players"][0]["rank"] == 1
