"""How long a hint takes: the advice (the game replayed to the player's last discard, the
discard or play analysis) and the rendered mail, at hand 6 of a 2-, 3- and 4-player game.

    PYTHONPATH=. python benchmarks/hint_bench.py
"""

from __future__ import annotations

import random
import time

from engine import DISCARD, new_game, player_view
from engine.computer import choose_action
from pbem.render import MailContext
from pbem.render.hint import render_hint
from pbem.service.game.hints import advice

ROUNDS = 10


def main() -> None:
    for players in (2, 3, 4):
        game = new_game(players, seed=f"bench{players}", target=121)
        rng = random.Random(1)
        while not game.is_over and not (game.hand_no >= 6 and game.phase == DISCARD):
            seat = game.to_act()[0]
            game.apply(choose_action(game, seat, rng, "random"))
        seat = game.to_act()[0]
        start = time.perf_counter()
        for _ in range(ROUNDS):
            given = advice(game, seat)
        advised = (time.perf_counter() - start) / ROUNDS
        names = ("Alice", "Bob", "Carol", "Dave")[:players]
        ctx = MailContext(game_id=1, names=names, recipient_seat=seat, reply_hint="")
        view = player_view(game, seat, len(game.events))
        start = time.perf_counter()
        for _ in range(ROUNDS):
            render_hint(view, ctx, given)
        rendered = (time.perf_counter() - start) / ROUNDS
        print(
            f"{players} players, hand {game.hand_no}, {len(game.actions)} actions: "
            f"advice {advised * 1000:.1f} ms, render {rendered * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
