"""What four kept cards are worth in the pegging, and the script that measures it.

``python -m engine.strategy.pegtable [--samples N] [--pool P] [--seed S] [--jobs J] [--write]``
prints (or writes) ``engine/strategy/pegdata.py``.

For every multiset of four ranks (1,820 of them) and each role, the table holds
the mean pegging difference (my points minus the opponent's over the whole
play of the hand, gos and last card included; the pone leads) against the
opponent the hard player pegs against (``pegsearch.solve_model``: it cannot see
my cards and plays the best of points now less what a hidden hand can answer,
and I play the best answer to that), holding what a player keeps:

* the opponents come from one pool per role of ``--pool`` six-card deals (real
  cards, so suits exist), each reduced to the four a player keeps by a quick
  rule: the best mean show of the four over the starters it cannot see, plus
  (its crib) or minus (mine) the realistic crib value of the two laid away
  (``cribdata.OWN_PAIR``/``OPP_PAIR``);
* every multiset is measured against the same opponents (common random
  numbers): the first ``--samples`` kept hands of the pool that fit beside the
  four ranks (no rank more than four times), so the noise that matters — the
  difference between two keeps — is far smaller than one entry's own.

One entry is a mean of 400 deals (standard error 0.09; with the common
opponents the error of a difference between two keeps is smaller still), and
the entries spread 0.88 (dealer) and 0.68 (pone).  ``fit`` smooths the table
on the count of each rank and of each pair of ranks among the four
(``features``: 13 + 91 weights, ``DEALER_FIT``/``PONE_FIT``), but what it
misses (residual 0.22 and 0.32: three and four of a rank, three-card runs and
fifteens) is real, not noise, so the hard player uses the table itself
(``hard.PEG_SOURCE = "table"``), × ``hard.PEG_WEIGHT``.

Measured with ``benchmarks/discard_duel.py`` (whole hands on the deals where the
discards differ, 16,000 deals screened, seed k3): the table at weight 0.5 beats
the earlier open-card per-rank fit at 0.5 by +0.027 ± 0.014 points a hand (its
discard differs on 13 % of deals; as pone +0.057 ± 0.024, as dealer
-0.003 ± 0.017); at weight 1.0 +0.016 ± 0.022; weight 0.3 against 0.5:
-0.004 ± 0.012 (14,000 deals, seed k4).  The pairwise fit at 0.5 did not
differ from the old fit (``peg_duel``, 4,000 deals: -0.008 ± 0.050).  The hard
player with the table against ``medium``: +0.100 ± 0.055 a whole hand
(``peg_duel --discard own``, 4,000 deals, seed k4).

``python -m engine.strategy.pegtable --samples 400 --pool 700 --seed 1 --jobs 2
--write``: 6.5 minutes of CPU.  Against the modelled opponent I see its cards
and it does not see mine, so both roles come out ahead on average (dealer
+3.31, pone +1.10): only the differences between keeps are used.  The
entries are in ``pegdata`` (``SUMMARY``: means, spreads, residuals, errors).
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
from collections.abc import Sequence
from itertools import combinations, combinations_with_replacement

from engine.strategy import cribdata
from engine.strategy.cribtables import pair_key
from engine.strategy.handvalue import mean_show
from engine.strategy.pegsearch import solve_model

Ranks = tuple[int, ...]
PAIRS: list[tuple[int, int]] = [(a, b) for a in range(1, 14) for b in range(a, 14)]
"""The 91 unordered pairs of ranks (a ≤ b), in the order of ``features``."""
PAIR_INDEX = {p: 13 + i for i, p in enumerate(PAIRS)}
"""Index in ``features`` of each pair of ranks."""


def kept_multisets() -> list[Ranks]:
    """Every sorted multiset of four ranks (no rank more than four times)."""
    return list(combinations_with_replacement(range(1, 14), 4))


def keep_rule(six: Sequence[int], own_crib: bool) -> tuple[int, ...]:
    """The four cards (indices) a player keeps from ``six``: best mean show over the
    starters it cannot see ± the realistic crib value of the other two."""
    table = cribdata.OWN_PAIR if own_crib else cribdata.OPP_PAIR
    sign = 1.0 if own_crib else -1.0
    best = -1e9
    out: tuple[int, ...] = ()
    for kept in combinations(six, 4):
        d = [c for c in six if c not in kept]
        v = mean_show(kept, six) + sign * table[pair_key(d[0], d[1])]
        if v > best:
            best = v
            out = kept
    return out


def opponent_pool(size: int, seed: int, own_crib: bool) -> list[Ranks]:
    """``size`` opponent hands (sorted ranks) kept by ``keep_rule`` from six random cards."""
    rng = random.Random(seed)
    pool = []
    for _ in range(size):
        kept = keep_rule(rng.sample(range(52), 6), own_crib)
        pool.append(tuple(sorted(c // 4 + 1 for c in kept)))
    return pool


def fits(kept: Ranks, theirs: Ranks) -> bool:
    return all(kept.count(r) + theirs.count(r) <= 4 for r in set(theirs))


def opponents(kept: Ranks, pool: Sequence[Ranks], samples: int) -> list[Ranks]:
    """The first ``samples`` hands of ``pool`` that fit beside ``kept``."""
    out = []
    for theirs in pool:
        if fits(kept, theirs):
            out.append(theirs)
            if len(out) == samples:
                break
    return out


def entry(kept: Ranks, pool: Sequence[Ranks], samples: int, dealer: bool) -> tuple[float, float]:
    """(mean, standard error) of my pegging points minus theirs keeping ``kept``."""
    turn = 1 if dealer else 0  # the pone leads
    values = [
        solve_model(kept, theirs, (), 0, turn, -1) for theirs in opponents(kept, pool, samples)
    ]
    return statistics.fmean(values), statistics.stdev(values) / len(values) ** 0.5


def _work(args: tuple[list[Ranks], list[Ranks], int, bool]) -> list[tuple[float, float]]:
    keys, pool, samples, dealer = args
    return [entry(k, pool, samples, dealer) for k in keys]


Table = dict[Ranks, float]


def measure(
    samples: int, pool_size: int, seed: int, jobs: int = 1
) -> tuple[Table, Table, dict[str, float]]:
    """(as dealer, as pone, summary): the mean pegging difference of each multiset."""
    keys = kept_multisets()
    # the opponent of the dealer is the pone (its discard goes to my crib) and back
    pools = {
        True: opponent_pool(pool_size, seed, False),
        False: opponent_pool(pool_size, seed + 1, True),
    }
    chunks = [keys[i : i + 60] for i in range(0, len(keys), 60)]
    tasks = [(c, pools[d], samples, d) for d in (True, False) for c in chunks]
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as p:
            parts = p.map(_work, tasks, chunksize=1)
    else:
        parts = [_work(t) for t in tasks]
    flat = [x for part in parts for x in part]
    n = len(keys)
    dealer = {k: flat[i][0] for i, k in enumerate(keys)}
    pone = {k: flat[n + i][0] for i, k in enumerate(keys)}
    summary = {
        "dealer_se": statistics.fmean(x[1] for x in flat[:n]),
        "pone_se": statistics.fmean(x[1] for x in flat[n:]),
    }
    return dealer, pone, summary


def features(kept: Ranks) -> list[float]:
    """How many of each rank (13), and how many of each pair of ranks (91, ``PAIRS``)
    among the four cards."""
    out = [0.0] * (13 + len(PAIRS))
    for r in kept:
        out[r - 1] += 1.0
    for i, j in combinations(range(len(kept)), 2):
        a, b = sorted((kept[i], kept[j]))
        out[PAIR_INDEX[(a, b)]] += 1.0
    return out


def fit(table: Table) -> list[float]:
    """Least-squares weights of ``features`` for ``table`` (ridge-stabilised: the
    features are collinear, four ranks and six pairs in every hand)."""
    import numpy as np

    keys = list(table)
    x = np.array([features(k) for k in keys])
    y = np.array([table[k] for k in keys])
    lam = 1e-3
    coef = np.linalg.solve(x.T @ x + lam * np.eye(x.shape[1]), x.T @ y)
    return [round(float(c), 4) for c in coef]


def predict(weights: Sequence[float], kept: Ranks) -> float:
    return sum(w * f for w, f in zip(weights, features(kept), strict=True))


def residual_sd(table: Table, weights: Sequence[float]) -> float:
    return statistics.pstdev([table[k] - predict(weights, k) for k in table])


def render(
    samples: int,
    pool_size: int,
    seed: int,
    measured: tuple[Table, Table, dict[str, float]],
) -> str:
    dealer, pone, summary = measured
    lines = [
        '"""Pegging value of four kept ranks (do not edit).',
        "",
        f"Generated by ``python -m engine.strategy.pegtable --samples {samples} --pool {pool_size}"
        f" --seed {seed} --write``",
        "(``pegtable``: against ``pegsearch.solve_model``, opponents that keep by a rule).",
        '"""',
        "",
    ]
    for name, table in (("DEALER", dealer), ("PONE", pone)):
        lines.append(f"{name}: dict[tuple[int, ...], float] = {{")
        lines.extend(f"    {k!r}: {v:.3f}," for k, v in table.items())
        lines.append("}")
    stats = dict(summary)
    for name, table in (("DEALER", dealer), ("PONE", pone)):
        w = fit(table)
        lines.append(f"{name}_FIT: tuple[float, ...] = (")
        lines.extend(f"    {x!r}," for x in w)
        lines.append(")")
        key = name.lower()
        stats[f"{key}_mean"] = statistics.fmean(table.values())
        stats[f"{key}_sd"] = statistics.pstdev(table.values())
        stats[f"{key}_residual"] = residual_sd(table, w)
    lines.append('"""Weights of ``pegtable.features``: per rank (ace..king), then per pair of')
    lines.append('ranks (``pegtable.PAIRS``)."""')
    lines.append("SUMMARY: dict[str, float] = {")
    lines.extend(f'    "{k}": {v:.3f},' for k, v in stats.items())
    lines.append("}")
    lines.append('"""Mean, spread and fit residual of each table, and the mean standard error of')
    lines.append('an entry."""')
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="measure the pegging value of kept hands")
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--pool", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    measured = measure(args.samples, args.pool, args.seed, args.jobs)
    text = render(args.samples, args.pool, args.seed, measured)
    if args.write:
        from pathlib import Path

        Path(__file__).with_name("pegdata.py").write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
