"""CPU time per decision of the hard player, by phase and by stage of the game.

Usage::

    python benchmarks/hard_decisions.py --games 20 [--opponent bsd] [--players 2]

The arena reports wall-clock decision times, which on a shared machine measure
the other processes as much as the player; this script measures the CPU time
of the deciding process (``time.process_time``), one fresh process, caches
cold at the start as a new service process would be.  Forced moves (one
legal action) are not counted.  "late" means a side within 40 points of the
target (2 players: where the win-probability searches run).
"""

from __future__ import annotations

import argparse
import random
import time

from engine import new_game
from engine.computer import choose_action


def _row(name: str, xs: list[float]) -> str:
    xs = sorted(xs)
    if not xs:
        return f"{name:24} {0:6}"
    med = xs[len(xs) // 2] * 1000
    p99 = xs[min(len(xs) - 1, int(0.99 * len(xs)))] * 1000
    return f"{name:24} {len(xs):6} {med:9.1f} {p99:9.1f} {xs[-1] * 1000:9.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--opponent", default="bsd")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", default="hard-time")
    args = parser.parse_args()
    rows: dict[str, list[float]] = {}
    for g in range(args.games):
        game = new_game(args.players, seed=f"{args.seed}/{g}")
        rng = random.Random(g)
        hard_seat = g % args.players
        while not game.is_over:
            seat = game.to_act()[0]
            level = "hard" if seat == hard_seat else args.opponent
            several = len(game.legal_actions(seat)) > 1
            start = time.process_time()
            action = choose_action(game, seat, rng, level)
            spent = time.process_time() - start
            if level == "hard" and several:
                late = max(game.scores) >= game.settings.target - 40
                rows.setdefault("all", []).append(spent)
                rows.setdefault(f"{game.phase}{' late' if late else ''}", []).append(spent)
            game.apply(action)
    print(f"{'decisions (CPU ms)':24} {'n':>6} {'median':>9} {'p99':>9} {'max':>9}")
    for name in sorted(rows):
        print(_row(name, rows[name]))


if __name__ == "__main__":
    main()
