"""Pegging alone at 3 or 4 players, on duplicate deals.

    python benchmarks/peg_duel_multi.py hard medium --players 3 --deals 1000 --seed q1

Each deal is the first hand of a game (game seed ``SEED/D``).  Every seat discards
as ``--discard`` (medium by default), so every seating holds the same cards; then
the hand is pegged in each of the arena's seatings (3 players: one A and two Bs,
A in each seat; 4 players: partners A+A against B+B, both ways round).  The
figure is, per hand, A's pegging points per seat minus B's per seat (the go and
the last card included, his heels not), averaged over the seatings of a deal,
with its 95 % interval over the deals.  ``hard@ATTR=VALUE`` names a variant of
hard with module constants changed (as in ``peg_duel.py``).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from peg_duel import variant

from engine.arena import seatings
from engine.computer import choose_action
from engine.game import DISCARD, PEGGING, Game, Settings

Z95 = 1.959963984540054


def duel(args: tuple[str, str, str, str, int, int]) -> float:
    """A's pegging points per seat minus B's, averaged over the seatings of one deal."""
    a, b, discard, seed, players, deal = args
    diffs = []
    for seating, labels in enumerate(seatings(players)):
        levels = [a if x == "A" else b for x in labels]
        game = Game(Settings(players, 121), f"{seed}/{deal}")
        while game.phase == DISCARD:
            forced = game.forced_action()
            if forced is not None:
                game.apply(forced)
                continue
            seat = game.to_act()[0]
            rng = random.Random(f"{seed}/{deal}/d/{seat}")
            game.apply(choose_action(game, seat, rng, discard))
        rngs = [random.Random(f"{seed}/{deal}/{seating}/{s}") for s in range(players)]
        while game.phase == PEGGING:
            forced = game.forced_action()
            if forced is not None:
                game.apply(forced)
                continue
            seat = game.to_act()[0]
            game.apply(choose_action(game, seat, rngs[seat], levels[seat]))
        pts = {"A": 0, "B": 0}
        for e in game.events:
            if e.kind in ("play", "count_end") and e.points and e.seat is not None:
                pts[labels[e.seat]] += e.points
        diffs.append(pts["A"] / labels.count("A") - pts["B"] / labels.count("B"))
    return statistics.fmean(diffs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--players", type=int, choices=(3, 4), default=3)
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--seed", default="mduel")
    parser.add_argument("--discard", default="medium")
    parser.add_argument("--jobs", type=int, default=1)
    opts = parser.parse_args(argv)
    for name in (opts.a, opts.b):
        variant(name)
    tasks = [(opts.a, opts.b, opts.discard, opts.seed, opts.players, d) for d in range(opts.deals)]
    start = time.perf_counter()
    if opts.jobs > 1:
        with multiprocessing.get_context("fork").Pool(opts.jobs) as pool:
            rows = pool.map(duel, tasks, chunksize=20)
    else:
        rows = [duel(t) for t in tasks]
    mean = statistics.fmean(rows)
    half = Z95 * statistics.stdev(rows) / math.sqrt(len(rows))
    print(
        f"{opts.a} − {opts.b}, {opts.players} players, pegging points a hand per seat, "
        f"{opts.deals} deals (seed {opts.seed}): {mean:+.3f} ± {half:.3f}  "
        f"({time.perf_counter() - start:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
