"""Engine benchmarks: show scoring, the exhaustive distribution, whole games.

Usage::

    python benchmarks/engine_bench.py            # print the table
    python benchmarks/engine_bench.py --write    # also update its section of BENCHMARKS.md

Everything is deterministic (fixed seeds); only the timings vary from run to run.
Each timing is the best of several repeats, which is the least disturbed by
other work on the machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import Game, full_deck, new_game, score_show, show_points  # noqa: E402
from engine.computer import choose_action  # noqa: E402
from engine.distribution import clear_cache, mean, show_distribution  # noqa: E402
from engine.scoring import rank_points  # noqa: E402

SECTION = "## Engine (benchmarks/engine_bench.py)"
COMMAND = "python benchmarks/engine_bench.py --write"


@dataclass
class Row:
    name: str
    value: str
    note: str = ""


def best_of(repeats: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def machine() -> dict[str, str]:
    model = platform.processor() or "unknown"
    if shutil.which("lscpu"):
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        match = re.search(r"^Model name:\s*(.+)$", out, re.MULTILINE)
        if match:
            model = match.group(1).strip()
    nproc = "?"
    if shutil.which("nproc"):
        nproc = subprocess.run(["nproc"], capture_output=True, text=True, check=False).stdout
    return {
        "cores (nproc)": nproc.strip() or str(os.cpu_count()),
        "CPU (lscpu model name)": model,
        "Python": platform.python_version(),
        "numpy": np.__version__,
        "OS": f"{platform.system()} {platform.release()}",
        "load average at start (1/5/15 min)": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def bench_show(samples: int, repeats: int) -> list[Row]:
    rng = random.Random(1)
    deck = full_deck()
    deals = []
    for _ in range(samples):
        cards = rng.sample(deck, 5)
        deals.append((cards[:4], cards[4]))

    def breakdown() -> None:
        for hand, starter in deals:
            score_show(hand, starter)

    def fast() -> None:
        for hand, starter in deals:
            show_points(hand, starter)

    fast()  # fill the rank_points cache: steady state is what a long-running service sees
    t_break = best_of(repeats, breakdown)
    t_fast = best_of(repeats, fast)
    return [
        Row("score_show (breakdown)", f"{samples / t_break:,.0f} /s", f"{samples:,} random deals"),
        Row("show_points (total only)", f"{samples / t_fast:,.0f} /s", "rank_points cache warm"),
    ]


def bench_distribution(repeats: int) -> list[Row]:
    def cold_both() -> None:
        clear_cache()
        rank_points.cache_clear()
        hand = show_distribution()
        crib = show_distribution(crib=True)
        assert sum(hand.values()) == sum(crib.values()) == 12_994_800
        assert round(mean(hand), 6) == 4.769152 and round(mean(crib), 6) == 4.734819

    def cold_hand() -> None:
        clear_cache()
        rank_points.cache_clear()
        show_distribution()

    t_both = best_of(repeats, cold_both)
    t_hand = best_of(repeats, cold_hand)
    show_distribution()
    t_crib_warm = best_of(repeats, lambda: show_distribution(crib=True))
    return [
        Row("distribution, both modes, cold", f"{t_both:.3f} s", "tables and caches cleared first"),
        Row("distribution, hand mode, cold", f"{t_hand:.3f} s", "12,994,800 combinations"),
        Row("distribution, crib mode, tables built", f"{t_crib_warm:.3f} s", "a second mode"),
    ]


def engine_only_game(seed: str) -> Game:
    """A random game driven straight from ``legal_actions`` (the engine's own cost)."""
    game = new_game(2, seed=seed)
    rng = random.Random(seed)
    while not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
    return game


def player_game(seed: str, level: str) -> Game:
    game = new_game(2, seed=seed)
    rng = random.Random(seed)
    while not game.is_over:
        seat = game.to_act()[0]
        game.apply(choose_action(game, seat, rng, level))
    return game


def per_game(games: int, repeats: int, fn: Callable[[str], Game]) -> tuple[float, float]:
    """(best seconds per game over repeats, mean actions per game)."""
    actions: list[int] = []

    def batch() -> None:
        actions.clear()
        for i in range(games):
            actions.append(len(fn(f"bench-{i}").actions))

    return best_of(repeats, batch) / games, statistics.mean(actions)


def bench_games(random_games: int, good_games: int, repeats: int) -> list[Row]:
    t_engine, n_engine = per_game(random_games, repeats, engine_only_game)
    t_random, n_random = per_game(random_games, repeats, lambda s: player_game(s, "random"))
    t_good, n_good = per_game(good_games, max(1, repeats // 2), lambda s: player_game(s, "good"))
    return [
        Row(
            "2-player game to 121, engine only",
            f"{t_engine * 1000:.2f} ms",
            f"rng.choice(legal_actions()); {n_engine:.0f} actions/game; {random_games} games",
        ),
        Row(
            "2-player game to 121, two 'random' players",
            f"{t_random * 1000:.2f} ms",
            f"choose_action via player_view; {n_random:.0f} actions/game; {random_games} games",
        ),
        Row(
            "2-player game to 121, two 'good' players",
            f"{t_good * 1000:.1f} ms",
            f"{n_good:.0f} actions/game; {good_games} games",
        ),
    ]


def markdown(rows: list[Row], info: dict[str, str], command: str) -> str:
    lines = [
        SECTION,
        "",
        "Command (from the repository root):",
        "",
        "```sh",
        command,
        "```",
        "",
        "Machine:",
        "",
    ]
    lines += [f"- {key}: {value}" for key, value in info.items()]
    lines += [
        "",
        "Timings are the best of several repeats; throughputs use the best repeat too.",
        "",
        "| Benchmark | Result | Notes |",
        "| --- | ---: | --- |",
    ]
    lines += [f"| {r.name} | {r.value} | {r.note} |" for r in rows]
    return "\n".join(lines) + "\n"


HEADER = """# Benchmarks

Measured figures for the project's benchmarks, one section per benchmark.  Each
section names the exact command that produced it and the machine it ran on; rerun
the command to refresh the section.
"""


def write_section(path: Path, section: str) -> None:
    text = path.read_text() if path.exists() else HEADER
    start = text.find(SECTION)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        following = re.search(r"^## ", text[start + len(SECTION) :], re.MULTILINE)
        end = start + len(SECTION) + following.start() if following else len(text)
        rest = text[end:]
        text = text[:start] + section + ("\n" + rest if rest else "")
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    parser.add_argument("--file", type=Path, default=ROOT / "BENCHMARKS.md")
    parser.add_argument("--samples", type=int, default=20_000, help="deals for show scoring")
    parser.add_argument("--games", type=int, default=200, help="random games per repeat")
    parser.add_argument("--good-games", type=int, default=40, help="good-vs-good games")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    info = machine()  # before the work, so the load average is the machine's, not ours
    rows: list[Row] = []
    rows += bench_show(args.samples, args.repeats)
    rows += bench_distribution(args.repeats)
    rows += bench_games(args.games, args.good_games, args.repeats)

    width = max(len(r.name) for r in rows)
    vwidth = max(len(r.value) for r in rows)
    for key, value in info.items():
        print(f"{key}: {value}")
    print()
    for r in rows:
        print(f"{r.name:<{width}}  {r.value:>{vwidth}}  {r.note}")
    if args.write:
        defaults = (
            args.samples == 20_000
            and args.games == 200
            and args.good_games == 40
            and args.repeats == 5
        )
        command = (
            COMMAND
            if defaults
            else "python benchmarks/engine_bench.py "
            + " ".join(sys.argv[1:] if argv is None else argv)
        )
        write_section(args.file, markdown(rows, info, command))
        print(f"\nwrote {args.file}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
