"""The arena: computer players against each other on duplicate deals.

    python -m engine.arena medium bsd --games 2000 --seed s1 --jobs 2
    python -m engine.arena medium bsd --games 500 --players 3 --json

*Duplicate deals.*  Deal sequence *d* is the game seed ``"{seed}/{d}"``; the
engine deals every hand (and the draw for the first deal) from the game seed
alone, so hand *h* of deal *d* puts the same cards in the same seats whoever
sits there.  Each deal is played once in every *seating*:

* 2 players: A in seat 0 against B, then A in seat 1;
* 3 players: one A against two Bs, A in seat 0, 1, then 2 (for two As against
  one B, swap the names: ``arena B A --players 3`` measures B alone);
* 4 players: the partnership A+A against B+B, A in seats 0 and 2, then 1 and 3.

So each player is dealt the other's cards, and the luck of the deal cancels in
the mean over the seatings of a deal.  The win rate of A is the mean, over the
deals, of the share of that deal's games A won; its 95 % interval is
``mean ± 1.96·sd/√n`` over those *n* per-deal means (the games of one deal are
not independent, so the interval is computed over the deals, not the games).
A fair share is 1/2 (2 and 4 players) or 1/3 (one A in three).

Also reported: points per hand per seat by kind (pegging with his heels and
the go; hand; crib; muggins and over-claim points in muggins games), skunks
(the loser under 91 of 121, under 46 of 61) and double skunks (under 61 / 31)
by the winner, and the time each level took per decision, wall clock and the
worker's CPU time (median and 99th percentile; on a shared machine the wall
clock's tail is mostly other processes, the CPU time is the player's own;
forced moves — a go, a single legal card — are applied without asking the
player and not timed).  Every figure except the timings is a pure function of
the arguments, whatever ``--jobs`` is.

This is a measuring tool: unlike the rest of ``engine``, it reads the clock
and starts processes.  Nothing in the engine imports it.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import random
import resource
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.computer import choose_action
from engine.game import Game, Settings
from engine.levels import BASELINES, LEVELS, canonical

KINDS = ("pegging", "hand", "crib", "muggins")
Z95 = 1.959963984540054


@dataclass(frozen=True)
class ArenaConfig:
    """What an arena run plays: A against B on ``deals`` deal sequences."""

    a: str
    b: str
    deals: int
    seed: str = "arena"
    players: int = 2
    target: int = 121
    muggins: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "a", canonical(self.a))
        object.__setattr__(self, "b", canonical(self.b))
        if self.deals < 1:
            raise ValueError("play at least one deal")
        Settings(self.players, self.target)  # validates players and target

    @property
    def settings(self) -> Settings:
        return Settings(self.players, self.target, "skunk", self.muggins)

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "deals": self.deals,
            "seed": self.seed,
            "players": self.players,
            "target": self.target,
            "muggins": self.muggins,
        }


def seatings(players: int) -> list[tuple[str, ...]]:
    """Who sits where, "A" or "B" by seat, in each seating a deal is played in."""
    if players == 2:
        return [("A", "B"), ("B", "A")]
    if players == 3:
        return [("A", "B", "B"), ("B", "A", "B"), ("B", "B", "A")]
    if players == 4:
        return [("A", "B", "A", "B"), ("B", "A", "B", "A")]
    raise ValueError(f"no arena for {players} players")


def deal_seed(seed: str, deal: int) -> str:
    """The game seed of deal sequence ``deal``: every seating of it gets the same cards."""
    return f"{seed}/{deal}"


@dataclass
class GameRecord:
    """One game of the arena, reduced to what the report needs."""

    deal: int
    seating: int
    winner: str
    value: int
    hands: int
    points: dict[str, dict[str, int]]
    times: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    """(wall seconds, CPU seconds) of each decision, by side."""


def _kind(event_kind: str, detail: str) -> str | None:
    if event_kind in ("play", "count_end", "heels"):
        return "pegging"
    if event_kind in ("show", "claim"):
        return "crib" if detail.startswith("crib") else "hand"
    if event_kind in ("muggins", "correction"):
        return "muggins"
    return None


def play_seating(
    config: ArenaConfig, deal: int, seating: int
) -> tuple[Game, dict[str, list[tuple[float, float]]]]:
    """Play deal ``deal`` in seating ``seating`` to the end: the finished game and, for
    each side ("A", "B"), (wall seconds, CPU seconds) of each of its decisions."""
    labels = seatings(config.players)[seating]
    levels = [config.a if label == "A" else config.b for label in labels]
    seed = deal_seed(config.seed, deal)
    game = Game(config.settings, seed)
    rngs = [random.Random(f"{seed}/{seating}/{seat}") for seat in range(config.players)]
    times: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
    clock, cpu_clock = time.perf_counter, time.thread_time
    while not game.is_over:
        forced = game.forced_action()
        if forced is not None:
            game.apply(forced)
            continue
        seat = game.to_act()[0]
        start, start_cpu = clock(), cpu_clock()
        action = choose_action(game, seat, rngs[seat], levels[seat])
        times[labels[seat]].append((clock() - start, cpu_clock() - start_cpu))
        game.apply(action)
    return game, times


def play_game(config: ArenaConfig, deal: int, seating: int) -> GameRecord:
    """Play deal ``deal`` in seating ``seating`` and reduce it to a ``GameRecord``."""
    game, times = play_seating(config, deal, seating)
    labels = seatings(config.players)[seating]
    outcome = game.outcome
    assert outcome is not None
    points = {label: dict.fromkeys(KINDS, 0) for label in ("A", "B")}
    for event in game.events:
        if event.points and event.seat is not None:
            kind = _kind(event.kind, event.detail)
            if kind is not None:
                points[labels[event.seat]][kind] += event.points
    return GameRecord(
        deal=deal,
        seating=seating,
        winner=labels[outcome.winner_seats[0]],
        value=outcome.value,
        hands=game.hand_no,
        points=points,
        times=times,
    )


def play_deal(config: ArenaConfig, deal: int) -> list[GameRecord]:
    """Deal ``deal`` played in every seating."""
    return [play_game(config, deal, s) for s in range(len(seatings(config.players)))]


def _play_deal_task(args: tuple[ArenaConfig, int]) -> list[GameRecord]:
    return play_deal(*args)


def play_deals(config: ArenaConfig, jobs: int = 1) -> list[GameRecord]:
    """Every game of the run, in deal then seating order (the same for any ``jobs``)."""
    tasks = [(config, deal) for deal in range(config.deals)]
    if jobs <= 1 or config.deals == 1:
        return [record for task in tasks for record in _play_deal_task(task)]
    chunk = max(1, min(25, config.deals // (jobs * 8)))
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with context.Pool(jobs) as pool:
        results = pool.map(_play_deal_task, tasks, chunksize=chunk)
    return [record for deal_records in results for record in deal_records]


# -- statistics --------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    n: int

    def to_json(self) -> dict[str, Any]:
        return {"mean": self.mean, "low": self.low, "high": self.high, "n": self.n}


def mean_interval(values: Sequence[float], z: float = Z95) -> Interval:
    """The mean of ``values`` with a normal-approximation interval ``mean ± z·sd/√n``
    (sample standard deviation; the interval is the mean itself for fewer than two)."""
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    mean = statistics.fmean(values)
    if n < 2:
        return Interval(mean, mean, mean, n)
    half = z * statistics.stdev(values) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


def paired_win_rate(records: Iterable[GameRecord]) -> Interval:
    """A's win rate with its 95 % interval over the per-deal means."""
    by_deal: dict[int, list[float]] = {}
    for record in records:
        by_deal.setdefault(record.deal, []).append(1.0 if record.winner == "A" else 0.0)
    return mean_interval([statistics.fmean(v) for _, v in sorted(by_deal.items())])


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile of already sorted values."""
    if not sorted_values:
        return math.nan
    pos = q * (len(sorted_values) - 1)
    low = math.floor(pos)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (pos - low)


def summarize(config: ArenaConfig, records: Sequence[GameRecord], seconds: float) -> dict[str, Any]:
    """The report: deterministic figures, then ``timing`` (which is not)."""
    layout = seatings(config.players)
    seats_of = {label: layout[0].count(label) for label in ("A", "B")}
    hands = sum(r.hands for r in records)
    per_hand: dict[str, dict[str, float]] = {}
    for label in ("A", "B"):
        totals = {kind: sum(r.points[label][kind] for r in records) for kind in KINDS}
        denominator = hands * seats_of[label]
        row = {kind: round(totals[kind] / denominator, 4) for kind in KINDS}
        row["total"] = round(sum(totals.values()) / denominator, 4)
        per_hand[label] = row
    wins = {label: sum(1 for r in records if r.winner == label) for label in ("A", "B")}
    skunks = {
        label: {
            "skunk": sum(1 for r in records if r.winner == label and r.value == 2),
            "double_skunk": sum(1 for r in records if r.winner == label and r.value == 4),
        }
        for label in ("A", "B")
    }
    win = paired_win_rate(records)
    games = len(records)
    naive = mean_interval([1.0 if r.winner == "A" else 0.0 for r in records])
    times: dict[str, list[tuple[float, float]]] = {}
    for r in records:
        for label, values in r.times.items():
            times.setdefault(config.a if label == "A" else config.b, []).extend(values)
    timing: dict[str, Any] = {
        "seconds": round(seconds, 3),
        "games_per_second": round(games / seconds, 2) if seconds > 0 else None,
        "decision_ms": {},
    }
    for level, pairs in sorted(times.items()):
        wall = sorted(w for w, _ in pairs)
        cpu = sorted(c for _, c in pairs)
        timing["decision_ms"][level] = {
            "decisions": len(pairs),
            "median": round(_quantile(wall, 0.5) * 1000, 4),
            "p99": round(_quantile(wall, 0.99) * 1000, 4),
            "mean": round(statistics.fmean(wall) * 1000, 4) if wall else None,
            "cpu_median": round(_quantile(cpu, 0.5) * 1000, 4),
            "cpu_p99": round(_quantile(cpu, 0.99) * 1000, 4),
        }
    return {
        "config": config.to_json(),
        "seatings": ["".join(s) for s in layout],
        "games": games,
        "hands": hands,
        "fair_share": 1 / len(layout) if config.players == 3 else 0.5,
        "a_win_rate": {**win.to_json(), "paired_over": "deals"},
        "a_win_rate_unpaired": naive.to_json(),
        "wins": wins,
        "skunks": skunks,
        "points_per_hand_per_seat": per_hand,
        "timing": timing,
    }


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the worker processes)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def run_arena(config: ArenaConfig, jobs: int = 1) -> dict[str, Any]:
    """Play the run and return its report (see ``summarize``)."""
    start, cpu = time.perf_counter(), _cpu_seconds()
    records = play_deals(config, jobs)
    report = summarize(config, records, time.perf_counter() - start)
    cpu_seconds = _cpu_seconds() - cpu
    report["timing"]["cpu_seconds"] = round(cpu_seconds, 3)
    report["timing"]["games_per_cpu_second"] = (
        round(len(records) / cpu_seconds, 2) if cpu_seconds > 0 else None
    )
    report["timing"]["jobs"] = jobs
    return report


# -- output ------------------------------------------------------------------------


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        rest = zip(row[1:], widths[1:], strict=True)
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in rest]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_report(report: dict[str, Any]) -> str:
    """The report as plain-text tables."""
    config = report["config"]
    a, b = config["a"], config["b"]
    win = report["a_win_rate"]
    naive = report["a_win_rate_unpaired"]
    seating = "one A, two Bs" if config["players"] == 3 else ""
    if config["players"] == 4:
        seating = "partners A+A against B+B"
    head = (
        f"A = {a}, B = {b}: {config['players']} players to {config['target']}"
        f"{', muggins' if config['muggins'] else ''}{f' ({seating})' if seating else ''}, "
        f"seed {config['seed']!r}\n"
        f"{config['deals']} deals x {len(report['seatings'])} seatings "
        f"({', '.join(report['seatings'])}) = {report['games']} games, {report['hands']} hands"
    )
    result = (
        f"A wins {100 * win['mean']:.1f} % "
        f"(95 % CI {100 * win['low']:.1f} – {100 * win['high']:.1f} over {win['n']} deals; "
        f"fair share {100 * report['fair_share']:.1f} %; "
        f"games taken as independent: {100 * naive['low']:.1f} – {100 * naive['high']:.1f})"
    )
    rows = [["per hand, per seat", *KINDS, "total", "wins", "skunks", "double"]]
    for label, level in (("A", a), ("B", b)):
        p = report["points_per_hand_per_seat"][label]
        s = report["skunks"][label]
        rows.append(
            [
                f"{label} {level}",
                *(f"{p[k]:.2f}" for k in KINDS),
                f"{p['total']:.2f}",
                str(report["wins"][label]),
                str(s["skunk"]),
                str(s["double_skunk"]),
            ]
        )
    timing = report["timing"]
    trows = [["decision time", "decisions", "median ms", "p99 ms", "CPU median", "CPU p99"]]
    for level, t in timing["decision_ms"].items():
        trows.append(
            [
                level,
                str(t["decisions"]),
                f"{t['median']:.3f}",
                f"{t['p99']:.3f}",
                f"{t.get('cpu_median', math.nan):.3f}",
                f"{t.get('cpu_p99', math.nan):.3f}",
            ]
        )
    speed = (
        f"{timing['seconds']:.1f} s wall, {timing['games_per_second']} games/s; "
        f"{timing.get('cpu_seconds', 0):.1f} s CPU, "
        f"{timing.get('games_per_cpu_second')} games per CPU second"
    )
    return "\n\n".join([head, result, _table(rows), _table(trows), speed])


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    names = [*LEVELS, *BASELINES]
    parser = argparse.ArgumentParser(
        prog="python -m engine.arena",
        description="Play computer players against each other on duplicate deals.",
        epilog=f"Players: {', '.join(names)} (and the old name 'good' for medium).",
    )
    parser.add_argument("a", help="player A")
    parser.add_argument("b", help="player B")
    parser.add_argument(
        "--games",
        type=int,
        default=200,
        help="deal sequences; each is played once per seating (2 players: 2 games a deal)",
    )
    parser.add_argument("--seed", default="arena", help="seed of the deal sequences")
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
    parser.add_argument("--target", type=int, choices=(61, 121), default=121)
    parser.add_argument("--muggins", action="store_true", help="players count their own hands")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        config = ArenaConfig(
            args.a,
            args.b,
            args.games,
            seed=args.seed,
            players=args.players,
            target=args.target,
            muggins=args.muggins,
        )
    except ValueError as exc:
        print(f"arena: {exc}", file=sys.stderr)
        return 2
    report = run_arena(config, max(1, args.jobs))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(format_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
