"""Two discard policies compared on the deals where they differ.

    python benchmarks/discard_duel.py A B --deals 20000 --seed S

Screens deals ``0..N-1`` of ``peg_duel`` (game seed ``SEED/D``): a deal is kept when
A's and B's discard differ for either seat (their first decisions, same view).
Each kept deal is played as ``peg_duel --discard own`` does (one whole hand,
both seatings).  On the other deals the two players hold the same cards, and
when they differ only in the discard they are then the same player, so those
deals add nothing to the mean but noise: the figure is the mean over the kept
deals times the share of deals kept (A's points minus B's a hand, every deal),
with its 95 % interval.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from peg_duel import Z95, duel, variant

from engine.actions import Discard
from engine.cards import Card
from engine.computer import choose_action
from engine.game import Game, Settings


def discard(game: Game, seat: int, rng: random.Random, level: str) -> tuple[Card, ...]:
    """The cards ``level`` lays away for ``seat`` (its first decision of the deal)."""
    action = choose_action(game, seat, rng, level)
    assert isinstance(action, Discard), action
    return action.cards


def differs(a: str, b: str, seed: str, deal: int) -> bool:
    game = Game(Settings(2, 121), f"{seed}/{deal}")
    for seat in (0, 1):
        choices = {
            discard(game, seat, random.Random(f"{seed}/{deal}/s/{seat}"), level) for level in (a, b)
        }
        if len(choices) > 1:
            return True
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--deals", type=int, default=20000)
    parser.add_argument("--seed", default="disc")
    opts = parser.parse_args(argv)
    for name in (opts.a, opts.b):
        variant(name)
    start = time.perf_counter()
    kept = [d for d in range(opts.deals) if differs(opts.a, opts.b, opts.seed, d)]
    rows = [duel((opts.a, opts.b, "own", opts.seed, d)) for d in kept]
    share = len(kept) / opts.deals
    per_deal = [(r[0] + r[1]) / 2 for r in rows]
    mean = statistics.fmean(per_deal)
    half = Z95 * statistics.stdev(per_deal) / math.sqrt(len(per_deal))
    print(f"{opts.a} − {opts.b}, whole hand, {opts.deals} deals (seed {opts.seed}):")
    print(f"  discards differ on {len(kept)} deals ({share:.1%})")
    print(f"  on those deals  {mean:+.3f} ± {half:.3f}")
    print(f"  a hand (every deal)  {mean * share:+.4f} ± {half * share:.4f}")
    for i, role in ((2, "dealer"), (3, "pone")):
        vals = [r[i] for r in rows]
        h = Z95 * statistics.stdev(vals) / math.sqrt(len(vals))
        print(f"  A as {role}: {statistics.fmean(vals) * share:+.4f} ± {h * share:.4f} a hand")
    print(f"  {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
