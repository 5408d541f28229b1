"""Two discard policies at 3 or 4 players compared over one whole hand, on the deals
where they differ.

    python benchmarks/discard_duel_multi.py A B --players 4 --deals 20000 --seed S --jobs 2

Deal ``D`` is the first hand of a game with seed ``SEED/D``.  A deal is kept when
A's and B's discards differ for any seat (their first decisions, same view).  Each
kept deal is played in the arena's seatings (4 players: partners A+A against B+B,
both ways round; 3 players: one A and two Bs, A in each seat): the A seats discard
as A, the B seats as B, then every seat plays the rest of the hand — the pegging,
the shows and the crib — as ``--play`` (medium by default), so the two policies
differ in their discards alone.  The figure is A's points per seat minus B's a
hand, averaged over the seatings of a deal; the mean over the kept deals times the
share of deals kept is the gain a hand over every deal, with its 95 % interval.
``hard@ATTR=VALUE`` names a variant of hard (as in ``peg_duel.py``).
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

from peg_duel import Z95, variant

from engine.actions import Discard
from engine.arena import seatings
from engine.computer import choose_action
from engine.game import DISCARD, Game, Settings

Task = tuple[str, str, str, str, int, int]


def differs(task: Task) -> bool:
    """Whether A and B lay away different cards for any seat of the deal."""
    a, b, _, seed, players, deal = task
    game = Game(Settings(players, 121), f"{seed}/{deal}")
    for seat in range(players):
        choices = set()
        for level in (a, b):
            action = choose_action(game, seat, random.Random(f"{seed}/{deal}/s/{seat}"), level)
            assert isinstance(action, Discard)
            choices.add(action.cards)
        if len(choices) > 1:
            return True
    return False


def duel(task: Task) -> float:
    """A's points per seat minus B's over the first hand, averaged over the seatings."""
    a, b, play, seed, players, deal = task
    diffs = []
    for labels in seatings(players):
        game = Game(Settings(players, 121), f"{seed}/{deal}")
        while game.phase == DISCARD:
            forced = game.forced_action()
            if forced is not None:
                game.apply(forced)
                continue
            seat = game.to_act()[0]
            level = a if labels[seat] == "A" else b
            rng = random.Random(f"{seed}/{deal}/s/{seat}")
            game.apply(choose_action(game, seat, rng, level))
        rngs = [random.Random(f"{seed}/{deal}/p/{s}") for s in range(players)]
        while game.hand_no == 1 and not game.is_over:
            forced = game.forced_action()
            if forced is not None:
                game.apply(forced)
                continue
            seat = game.to_act()[0]
            game.apply(choose_action(game, seat, rngs[seat], play))
        pts = {"A": 0, "B": 0}
        for e in game.events:
            if e.hand == 1 and e.points and e.seat is not None:
                pts[labels[e.seat]] += e.points
        diffs.append(pts["A"] / labels.count("A") - pts["B"] / labels.count("B"))
    return statistics.fmean(diffs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--players", type=int, choices=(3, 4), default=4)
    parser.add_argument("--deals", type=int, default=20000)
    parser.add_argument("--seed", default="mdisc")
    parser.add_argument("--play", default="medium")
    parser.add_argument("--jobs", type=int, default=1)
    opts = parser.parse_args(argv)
    for name in (opts.a, opts.b, opts.play):
        variant(name)
    start = time.perf_counter()
    tasks = [(opts.a, opts.b, opts.play, opts.seed, opts.players, d) for d in range(opts.deals)]
    with multiprocessing.get_context("fork").Pool(opts.jobs) as pool:
        flags = pool.map(differs, tasks, chunksize=50)
        kept = [t for t, f in zip(tasks, flags, strict=True) if f]
        rows = pool.map(duel, kept, chunksize=20)
    share = len(kept) / opts.deals
    mean = statistics.fmean(rows)
    half = Z95 * statistics.stdev(rows) / math.sqrt(len(rows))
    print(
        f"{opts.a} − {opts.b}, {opts.players} players, one whole hand, "
        f"{opts.deals} deals (seed {opts.seed}, play {opts.play}):"
    )
    print(f"  discards differ on {len(kept)} deals ({share:.1%})")
    print(f"  on those deals  {mean:+.3f} ± {half:.3f}")
    print(f"  a hand (every deal)  {mean * share:+.4f} ± {half * share:.4f}")
    print(f"  {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
