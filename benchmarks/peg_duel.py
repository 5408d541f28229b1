"""Pegging alone, on duplicate deals: how many points a hand one player's play makes
over another's.

    python benchmarks/peg_duel.py hard medium --deals 4000 --seed p1 --jobs 2

Each deal is the first hand of a 2-player game (game seed ``SEED/D``).  Both seats
discard as ``--discard`` (medium by default), so both seatings hold the same
cards; then A pegs against B, once with A in seat 0 and once in seat 1.  The
figure is A's pegging points minus B's (the go and the last card included, his
heels not), averaged over the two seatings of a deal, with its 95 % interval over
the deals, and split by A as dealer and A as pone.  With ``--discard own``
each player discards for itself and the figure is the whole hand's points
(pegging, hand, crib and his heels).  The whole game's win rate
hangs on far more than this; the duel isolates the play, where the two players'
differences are small and a whole game's noise would hide them.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import math
import multiprocessing
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import levels
from engine.computer import choose_action
from engine.game import DISCARD, PEGGING, Game, Settings
from engine.strategy import hard
from engine.strategy.hard import discard, pegmany, pegtwo


def _module(key: str) -> Any:
    """For ``NAME`` the part of ``engine.strategy.hard`` that holds the constant (its
    discard, its pegging at 2 or at 3 and 4 players); ``engine.strategy.MODULE`` for
    ``MODULE.NAME``."""
    if "." not in key:
        for part in (discard, pegtwo, pegmany):
            if hasattr(part, key):
                return part
        raise SystemExit(f"engine.strategy.hard has no constant {key}")
    return importlib.import_module("engine.strategy." + key.split(".")[0])


def variant(name: str) -> None:
    """Register ``hard@ATTR=VALUE,MODULE.ATTR=VALUE``: hard with module constants of
    ``engine.strategy.hard`` (or of another ``engine.strategy`` module) changed.
    Constants read by memoised functions must not differ between the two players
    of one run."""
    if "@" not in name or name in levels.STRATEGIES:
        return
    changes = {}
    for part in re.split(r",(?=[A-Za-z_][\w.]*=)", name.split("@", 1)[1]):
        key, value = part.split("=")
        changes[key] = ast.literal_eval(value)

    def play(view, rng):  # type: ignore[no-untyped-def]
        saved = {k: getattr(_module(k), k.split(".")[-1]) for k in changes}
        for k, v in changes.items():
            setattr(_module(k), k.split(".")[-1], v)
        try:
            return hard.hard_action(view, rng)
        finally:
            for k, v in saved.items():
                setattr(_module(k), k.split(".")[-1], v)

    levels.STRATEGIES[name] = play


Z95 = 1.959963984540054


def duel(args: tuple[str, str, str, str, int]) -> tuple[float, float, float, float]:
    """(A − B in seating 0, in seating 1; A's points as dealer − B's as dealer with the
    same cards; the same as pone) for one deal."""
    a, b, discard, seed, deal = args
    diffs = []
    by_role: dict[str, int] = {}
    for seating in (0, 1):
        levels = (a, b) if seating == 0 else (b, a)
        game = Game(Settings(2, 121), f"{seed}/{deal}")
        rngs = [random.Random(f"{seed}/{deal}/{seating}/{s}") for s in (0, 1)]
        while game.phase == DISCARD:
            forced = game.forced_action()
            if forced is not None:
                game.apply(forced)
                continue
            seat = game.to_act()[0]
            if discard == "own":
                game.apply(choose_action(game, seat, rngs[seat], levels[seat]))
            else:
                rng = random.Random(f"{seed}/{deal}/d/{seat}")
                game.apply(choose_action(game, seat, rng, discard))
        # the pegging; with --discard own, the whole hand (to the next deal)
        while game.phase == PEGGING or (
            discard == "own" and game.hand_no == 1 and not game.is_over
        ):
            forced = game.forced_action()
            if forced is not None:
                game.apply(forced)
                continue
            seat = game.to_act()[0]
            game.apply(choose_action(game, seat, rngs[seat], levels[seat]))
        pts = [0, 0]
        for e in game.events:
            if e.hand != 1 or not e.points or e.seat is None:
                continue
            if discard == "own" or e.kind in ("play", "count_end"):
                pts[e.seat] += e.points
        a_seat = 0 if seating == 0 else 1
        diffs.append(pts[a_seat] - pts[1 - a_seat])
        role = "dealer" if game.dealer == a_seat else "pone"
        by_role[role] = by_role.get(role, 0) + pts[a_seat]
        by_role["dealer" if role == "pone" else "pone"] = (
            by_role.get("dealer" if role == "pone" else "pone", 0) - pts[1 - a_seat]
        )
    return diffs[0], diffs[1], by_role["dealer"], by_role["pone"]


def interval(values: list[float]) -> str:
    mean = statistics.fmean(values)
    half = Z95 * statistics.stdev(values) / math.sqrt(len(values))
    return f"{mean:+.3f} ± {half:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--seed", default="duel")
    parser.add_argument("--discard", default="medium")
    parser.add_argument("--jobs", type=int, default=1)
    opts = parser.parse_args(argv)
    for name in (opts.a, opts.b):
        variant(name)
    tasks = [(opts.a, opts.b, opts.discard, opts.seed, d) for d in range(opts.deals)]
    start = time.perf_counter()
    if opts.jobs > 1:
        with multiprocessing.get_context("fork").Pool(opts.jobs) as pool:
            rows = pool.map(duel, tasks, chunksize=20)
    else:
        rows = [duel(t) for t in tasks]
    per_deal = [(r[0] + r[1]) / 2 for r in rows]
    print(f"{opts.a} − {opts.b}, pegging points a hand, {opts.deals} deals (seed {opts.seed}):")
    print(f"  both roles {interval(per_deal)}")
    print(f"  as dealer  {interval([r[2] for r in rows])}")
    print(f"  as pone    {interval([r[3] for r in rows])}")
    print(f"  {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
