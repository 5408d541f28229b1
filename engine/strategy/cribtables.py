"""Crib tables computed for realistic discards, and the script that makes them.

``python -m engine.strategy.cribtables [--samples N] [--rounds R] [--seed S]``
prints ``engine/strategy/cribdata.py`` (``--write`` writes it).

Why: the medium player values a discard by ``CRIB_PAIR_VALUE`` — the mean crib
when the *other* cards of the crib are random.  A real crib is not random: the
pone lays away cards that do not help the dealer and the dealer lays away cards
that do, and each side's choice depends on what it thinks the crib is worth.

The method (2 players).  Four tables, keyed by (low rank, high rank, suited):

``OWN[a, b, s]``
    the mean crib when the dealer lays away (a, b) and the pone's two cards come
    from the pone's discard policy;
``OPP[a, b, s]``
    the mean crib when the pone lays away (a, b) and the dealer's two cards come
    from the dealer's discard policy.

A discard policy picks, from six cards, the discard with the highest mean kept
hand (over every starter it has not seen) plus ``OWN`` (dealer) or minus
``OPP`` (pone) of the discard.  Start both tables at the random-crib values
(``random_pair_tables``: exact, by enumerating every crib and starter), then
repeat: for each class (a, b, s), deal the other player ``--samples`` random
six-card hands from the remaining 50 cards, let them discard by the current
policy, and average the crib's exact mean over the 44 starters left; the new
tables give new policies; stop after ``--rounds`` rounds (the tables settle to
within the sampling noise, about ±0.1, after two or three).  Every sample uses
the same seeded generator, so the script is deterministic.

3 and 4 players: the same with one card each (``OWN3``/``OPP3``, ``OWN4``/
``OPP4``, by rank, suit averaged; the 3-player crib's fourth card is from the
pack; at 4 players the dealer's partner lays away by the dealer's table).

The numbers (``--samples 1500 --rounds 4 --seed 1``, about 6 minutes on one
core) are in ``cribdata.py``.  Each round's largest change fell 1.30, 0.37,
0.45, 0.28 — the last rounds are at the sampling noise (a table entry's
standard error is about 0.07, and the largest of 338 such errors about 0.25).
The crib is worth less to the dealer and more to the pone than the random-crib
table says, because the pone throws away from the crib and the dealer throws
to it.  Some entries (random / own crib / opponent's crib):

==========  ======  =======  ============
discard     random  own      opponent's
==========  ======  =======  ============
5-5         8.99    8.87     9.42
A-2         4.44    4.07     5.00
10-J        5.04    4.37     5.47
==========  ======  =======  ============

One card (3 players, own / opponent's): a five 6.48 / 6.63, a king 3.92 / 4.10;
(4 players): a five 6.60 / 6.74, a king 4.10 / 4.29 (random: 6.65, 4.09).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from itertools import combinations

from engine.cards import Card, Suit
from engine.players import exact_crib_mean
from engine.strategy.handvalue import mean_show, rank_of

PairKey = tuple[int, int, bool]
PairTable = dict[PairKey, float]
SingleTable = dict[int, float]


def pair_key(c1: int, c2: int) -> PairKey:
    """Table key of two card indices: (low rank, high rank, suited)."""
    a, b = sorted((rank_of(c1), rank_of(c2)))
    return a, b, a != b and c1 % 4 == c2 % 4


def pair_keys() -> list[PairKey]:
    keys: list[PairKey] = []
    for a in range(1, 14):
        for b in range(a, 14):
            keys.append((a, b, False))
            if a != b:
                keys.append((a, b, True))
    return keys


def _pair_cards(key: PairKey) -> tuple[int, int]:
    a, b, suited = key
    return (a - 1) * 4, (b - 1) * 4 + (0 if suited else 1)


def random_pair_tables() -> PairTable:
    """Exact mean crib for each pair class when the rest of the crib is random."""
    out: PairTable = {}
    for key in pair_keys():
        a, b, suited = key
        out[key] = exact_crib_mean([Card(a, Suit.CLUBS), Card(b, Suit(0 if suited else 1))])
    return out


def random_single_table() -> SingleTable:
    return {r: exact_crib_mean([Card(r, Suit.HEARTS)]) for r in range(1, 14)}


def best_discard_pair(hand: Sequence[int], table: PairTable, sign: float) -> tuple[int, int]:
    """The two cards a player laying away by ``table`` (sign +1 own crib, -1 not) throws."""
    best = -1e9
    choice = (hand[0], hand[1])
    for d in combinations(hand, 2):
        kept = [c for c in hand if c not in d]
        v = mean_show(kept, hand) + sign * table[pair_key(*d)]
        if v > best:
            best, choice = v, d
    return choice


def best_discard_single(hand: Sequence[int], table: SingleTable, sign: float) -> int:
    best = -1e9
    choice = hand[0]
    for d in hand:
        kept = [c for c in hand if c != d]
        v = mean_show(kept, hand) + sign * table[rank_of(d)]
        if v > best:
            best, choice = v, d
    return choice


def crib_mean(crib: Sequence[int], excluded: Sequence[int]) -> float:
    return mean_show(crib, excluded, crib=True)


def iterate_pairs(
    samples: int, rounds: int, seed: int, log: bool = True, start: PairTable | None = None
) -> tuple[PairTable, PairTable]:
    """(OWN, OPP) after ``rounds`` rounds of re-deriving each table from the other's
    policy, starting from ``start`` (default: the exact random-crib table)."""
    rng = random.Random(seed)
    if start is None:
        start = random_pair_tables()
    own, opp = dict(start), dict(start)
    for rnd in range(rounds):
        new_own: PairTable = {}
        new_opp: PairTable = {}
        for key in pair_keys():
            cards = _pair_cards(key)
            rest = [c for c in range(52) if c not in cards]
            tot_own = tot_opp = 0.0
            for _ in range(samples):
                other = rng.sample(rest, 6)
                # the dealer laid away ``cards``; the pone throws away from the crib
                d = best_discard_pair(other, opp, -1.0)
                tot_own += crib_mean([*cards, *d], [*cards, *other])
                # the pone laid away ``cards``; the dealer throws to the crib
                d = best_discard_pair(other, own, 1.0)
                tot_opp += crib_mean([*cards, *d], [*cards, *other])
            new_own[key] = tot_own / samples
            new_opp[key] = tot_opp / samples
        shift = max(
            max(abs(new_own[k] - own[k]) for k in own), max(abs(new_opp[k] - opp[k]) for k in opp)
        )
        own, opp = new_own, new_opp
        if log:
            print(f"pairs round {rnd + 1}: largest change {shift:.3f}", file=sys.stderr)
    return own, opp


def iterate_singles(
    players: int, samples: int, rounds: int, seed: int, log: bool = True
) -> tuple[SingleTable, SingleTable]:
    """(OWN, OPP) one-card tables for 3 or 4 players."""
    rng = random.Random(seed)
    start = random_single_table()
    own, opp = dict(start), dict(start)
    for rnd in range(rounds):
        new_own: SingleTable = {}
        new_opp: SingleTable = {}
        for r in range(1, 14):
            t_own = t_opp = 0.0
            for i in range(samples):
                card = (r - 1) * 4 + i % 4
                rest = [c for c in range(52) if c != card]
                dealt = rng.sample(rest, 5 * (players - 1) + (1 if players == 3 else 0))
                hands = [dealt[5 * k : 5 * k + 5] for k in range(players - 1)]
                extra = dealt[5 * (players - 1) :]
                seen = [card, *dealt]
                # own crib: I deal; hands[0] and hands[-1] are opponents, a partner sits opposite
                throws = []
                for k, h in enumerate(hands):
                    partner = players == 4 and k == 1
                    throws.append(
                        best_discard_single(h, own, 1.0)
                        if partner
                        else best_discard_single(h, opp, -1.0)
                    )
                t_own += crib_mean([card, *throws, *extra], seen)
                # opponent's crib: hands[0] deals; at 4 players hands[2] is the dealer's partner
                throws = []
                for k, h in enumerate(hands):
                    dealer_side = k == 0 or (players == 4 and k == 2)
                    throws.append(
                        best_discard_single(h, own, 1.0)
                        if dealer_side
                        else best_discard_single(h, opp, -1.0)
                    )
                t_opp += crib_mean([card, *throws, *extra], seen)
            new_own[r] = t_own / samples
            new_opp[r] = t_opp / samples
        shift = max(
            max(abs(new_own[r] - own[r]) for r in own), max(abs(new_opp[r] - opp[r]) for r in opp)
        )
        own, opp = new_own, new_opp
        if log:
            print(f"{players} players round {rnd + 1}: largest change {shift:.3f}", file=sys.stderr)
    return own, opp


def _fmt_pairs(name: str, table: PairTable) -> str:
    lines = [f"{name}: dict[tuple[int, int, bool], float] = {{"]
    for key in pair_keys():
        lines.append(f"    {key!r}: {table[key]:.3f},")
    lines.append("}")
    return "\n".join(lines)


def _fmt_single(name: str, table: SingleTable) -> str:
    body = ", ".join(f"{r}: {table[r]:.3f}" for r in range(1, 14))
    return f"{name}: dict[int, float] = {{{body}}}"


def render(samples: int, rounds: int, seed: int) -> str:
    rand = random_pair_tables()
    own, opp = iterate_pairs(samples, rounds, seed)
    own3, opp3 = iterate_singles(3, samples * 4, rounds, seed)
    own4, opp4 = iterate_singles(4, samples * 4, rounds, seed)
    header = (
        '"""Crib tables (generated by ``python -m engine.strategy.cribtables '
        f"--samples {samples} --rounds {rounds} --seed {seed} --write``; do not edit).\n\n"
        "Keys (low rank, high rank, suited) for two cards, rank for one; values are mean\n"
        "crib scores.  ``RANDOM_PAIR``: the rest of the crib random (exact).  ``OWN_PAIR``/\n"
        "``OPP_PAIR``: the dealer's / the pone's discard with the other player's cards from\n"
        'their discard policy (see ``engine.strategy.cribtables``).\n"""\n'
    )
    parts = [
        header,
        "# ruff: noqa: E501",
        "",
        _fmt_pairs("RANDOM_PAIR", rand),
        "",
        _fmt_pairs("OWN_PAIR", own),
        "",
        _fmt_pairs("OPP_PAIR", opp),
        "",
        _fmt_single("OWN_SINGLE_3", own3),
        _fmt_single("OPP_SINGLE_3", opp3),
        _fmt_single("OWN_SINGLE_4", own4),
        _fmt_single("OPP_SINGLE_4", opp4),
        "",
    ]
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--write", action="store_true", help="write engine/strategy/cribdata.py")
    args = parser.parse_args(argv)
    text = render(args.samples, args.rounds, args.seed)
    if args.write:
        from pathlib import Path

        Path(__file__).with_name("cribdata.py").write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
