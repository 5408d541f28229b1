"""The arena's win rate from runs over parts of the deals, for long runs on a shared
machine (each part its own short process).

    python benchmarks/arena_parts.py run hard medium --players 3 --seed h3 \\
        --deals 0:500 --out /tmp/h3-0.json
    python benchmarks/arena_parts.py merge /tmp/h3-*.json

``run`` plays deals ``start:stop`` exactly as ``python -m engine.arena`` plays them
(the same game seeds, seatings and generators: ``engine.arena.play_deal``) and writes
each deal's share of games A won, A's pegging points per hand per seat and A's CPU
time per decision.  ``merge`` reports the win rate over all the deals of the parts
with the arena's 95 % interval (over deals), and the CPU decision-time quantiles.
``hard@ATTR=VALUE`` names a variant of hard (as in ``peg_duel.py``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from peg_duel import variant

from engine import arena, levels


def run(opts: argparse.Namespace) -> None:
    for name in (opts.a, opts.b):
        variant(name)
    if opts.a not in levels.STRATEGIES or opts.b not in levels.STRATEGIES:
        raise SystemExit("unknown player")
    start, stop = (int(x) for x in opts.deals.split(":"))
    config = arena.ArenaConfig(opts.a, opts.b, stop, seed=opts.seed, players=opts.players)
    out: dict[str, object] = {"a": opts.a, "b": opts.b, "players": opts.players}
    shares: list[float] = []
    cpu: list[float] = []
    pegs, hands = 0, 0
    began = time.perf_counter()
    for deal in range(start, stop):
        records = arena.play_deal(config, deal)
        shares.append(statistics.fmean(1.0 if r.winner == "A" else 0.0 for r in records))
        for r in records:
            cpu.extend(c for _, c in r.times["A"])
            pegs += r.points["A"]["pegging"]
            hands += r.hands
    seats_a = arena.seatings(opts.players)[0].count("A")
    out.update(
        deals=[start, stop],
        seed=opts.seed,
        shares=shares,
        cpu=cpu,
        peg_per_hand=pegs / (hands * seats_a),
        seconds=time.perf_counter() - began,
    )
    Path(opts.out).write_text(json.dumps(out))


def merge(paths: list[str]) -> None:
    parts = [json.loads(Path(p).read_text()) for p in paths]
    parts.sort(key=lambda p: p["deals"][0])
    shares = [s for p in parts for s in p["shares"]]
    cpu = sorted(c for p in parts for c in p["cpu"])
    win = arena.mean_interval(shares)
    first = parts[0]
    spans = ", ".join(f"{p['deals'][0]}:{p['deals'][1]}" for p in parts)
    print(
        f"{first['a']} vs {first['b']}, {first['players']} players, seed {first['seed']}, "
        f"deals {spans}: A wins {100 * win.mean:.1f} % "
        f"(95 % CI {100 * win.low:.1f} – {100 * win.high:.1f} over {win.n} deals)"
    )
    print(
        f"A's CPU ms per decision: median {1000 * arena._quantile(cpu, 0.5):.2f}, "
        f"p99 {1000 * arena._quantile(cpu, 0.99):.1f}, max {1000 * cpu[-1]:.1f} "
        f"({len(cpu)} decisions)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("a")
    r.add_argument("b")
    r.add_argument("--players", type=int, choices=(2, 3, 4), default=3)
    r.add_argument("--seed", default="arena")
    r.add_argument("--deals", required=True, help="start:stop")
    r.add_argument("--out", required=True)
    m = sub.add_parser("merge")
    m.add_argument("paths", nargs="+")
    opts = parser.parse_args(argv)
    if opts.cmd == "run":
        run(opts)
    else:
        merge(opts.paths)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
