"""`pbem game rematch`: the next game of a match, the loser dealing first."""

from __future__ import annotations

import re

from engine import Resign
from tests.e2e.helpers import ALICE, BOB, Harness, cli_env, run_cli


def test_rematch_after_a_finished_game(harness: Harness, db_url: str) -> None:
    env = cli_env(harness.tmp_path, db_url)
    game_id = harness.new_game(seed="rematch")
    first = harness.game(game_id)
    harness.move(game_id, Resign(1))  # Bob resigns: Alice wins, Bob lost
    assert harness.game(game_id).is_over
    result = run_cli(env, "game", "rematch", str(game_id))
    assert result.exit_code == 0, result.output
    new_id = int(re.search(r"game (\d+) started", result.stdout).group(1))  # type: ignore[union-attr]
    nxt = harness.game(new_id)
    assert nxt.dealer == 1  # the loser deals first
    assert not nxt.draws
    assert nxt.settings.target == first.settings.target
    people = [harness.address_of(new_id, seat) for seat in range(2)]
    assert people == [ALICE[0], BOB[0]]


def test_rematch_of_an_unfinished_game_is_refused(harness: Harness, db_url: str) -> None:
    env = cli_env(harness.tmp_path, db_url)
    game_id = harness.new_game(seed="rematch-early")
    result = run_cli(env, "game", "rematch", str(game_id))
    assert result.exit_code == 1
    assert "not over" in result.stderr
    result = run_cli(env, "game", "rematch", "999")
    assert result.exit_code == 1
    assert "no game 999" in result.stderr
