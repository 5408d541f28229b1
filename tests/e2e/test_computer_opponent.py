"""A game against the computer: its seat moves in-process and never gets mail."""

from __future__ import annotations

import random

from engine.computer import choose_action
from tests.e2e.helpers import ALICE, Harness


def test_a_whole_game_against_the_computer(harness: Harness) -> None:
    service = harness.service
    computer_address = f"computer@{harness.settings.domain}"
    game_id = service.new_game(
        [ALICE, (computer_address, "Computer")], target=61, seed="vs-computer", computer=[1]
    )
    harness.step()
    rng = random.Random(3)
    for _ in range(200):
        game = harness.game(game_id)
        if game.is_over:
            break
        # Only Alice is ever waited for: the computer answers inside the same transaction.
        assert game.to_act() == (0,), game.to_act()
        harness.move(game_id, choose_action(game, 0, rng, "random"))
        assert harness.last_inbound().status == "applied", harness.last_inbound().reason
    game = harness.game(game_id)
    assert game.is_over
    assert harness.game_row(game_id).status == "finished"
    assert harness.count(computer_address) == 0
    assert all(row.recipient == ALICE[0] for row in harness.outbox())
    log = harness.log(game_id)
    assert any(seat == 1 and auto for _, seat, _, auto in log)
