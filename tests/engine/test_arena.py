"""The arena: duplicate deals, the paired interval, the report, and the command."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from engine import Card, Event
from engine.arena import (
    KINDS,
    ArenaConfig,
    GameRecord,
    format_report,
    main,
    mean_interval,
    paired_win_rate,
    play_deal,
    play_seating,
    run_arena,
    seatings,
    summarize,
)

ROOT = Path(__file__).resolve().parents[2]


def _dealt(events: Sequence[Event]) -> dict[tuple[int, int], tuple[Card, ...]]:
    """(hand, seat) -> the cards dealt; (hand, -1) -> the starter; (0, -2 - i) -> draw i."""
    out: dict[tuple[int, int], tuple[Card, ...]] = {}
    draws = 0
    for event in events:
        if event.kind == "hand" and event.seat is not None:
            out[event.hand, event.seat] = event.cards
        elif event.kind == "starter":
            out[event.hand, -1] = event.cards
        elif event.kind == "draw":
            out[0, -2 - draws] = event.cards
            draws += 1
    return out


def test_seatings() -> None:
    assert seatings(2) == [("A", "B"), ("B", "A")]
    assert seatings(3) == [("A", "B", "B"), ("B", "A", "B"), ("B", "B", "A")]
    assert seatings(4) == [("A", "B", "A", "B"), ("B", "A", "B", "A")]
    with pytest.raises(ValueError):
        seatings(5)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_seating_of_a_deal_gets_the_same_cards(players: int) -> None:
    """The seats hold the same cards hand by hand whoever sits in them, so A in one
    seating is dealt exactly what B was dealt in the other."""
    config = ArenaConfig("medium", "random", 3, seed="pairing", players=players, target=61)
    for deal in range(2):
        games = [play_seating(config, deal, s)[0] for s in range(len(seatings(players)))]
        dealt = [_dealt(g.events) for g in games]
        hands = [g.hand_no for g in games]
        assert min(hands) >= 2
        for other in dealt[1:]:
            common = dealt[0].keys() & other.keys()
            assert {h for h, _ in common} >= set(range(1, min(hands) + 1))
            assert all(dealt[0][k] == other[k] for k in common)
        # Different players really sat there: the games differ.
        assert len({tuple(str(a) for a in g.actions) for g in games}) == len(games)
    # And another deal is dealt differently.
    other_deal = _dealt(play_seating(config, 1, 0)[0].events)
    assert other_deal[1, 0] != _dealt(play_seating(config, 0, 0)[0].events)[1, 0]


def test_mean_interval_known_example() -> None:
    # Mean 0.5; sample sd sqrt(0.5 / 3); half-width 1.959964 * sd / 2.
    interval = mean_interval([1.0, 0.0, 0.5, 0.5])
    half = 1.959963984540054 * math.sqrt(0.5 / 3) / 2
    assert interval.mean == pytest.approx(0.5)
    assert interval.low == pytest.approx(0.5 - half)
    assert interval.high == pytest.approx(0.5 + half)
    assert interval.n == 4
    assert mean_interval([0.25]).low == mean_interval([0.25]).high == 0.25
    with pytest.raises(ValueError):
        mean_interval([])


def _record(deal: int, seating: int, winner: str) -> GameRecord:
    points = {label: dict.fromkeys(KINDS, 1) for label in ("A", "B")}
    return GameRecord(deal, seating, winner, 1, 10, points)


def test_win_rate_interval_is_over_deals_not_games() -> None:
    """Deal 0: A won both seatings (1); deal 1: one of two (0.5); deal 2: neither (0).
    The interval is over those three per-deal means, not over six independent games."""
    records = [
        _record(0, 0, "A"),
        _record(0, 1, "A"),
        _record(1, 0, "A"),
        _record(1, 1, "B"),
        _record(2, 0, "B"),
        _record(2, 1, "B"),
    ]
    interval = paired_win_rate(records)
    half = 1.959963984540054 * 0.5 / math.sqrt(3)
    assert interval.n == 3
    assert interval.mean == pytest.approx(0.5)
    assert (interval.low, interval.high) == pytest.approx((0.5 - half, 0.5 + half))
    # A deal each seating of which the players split evenly has no spread at all.
    even = [_record(d, s, "AB"[s]) for d in range(5) for s in range(2)]
    assert paired_win_rate(even).low == paired_win_rate(even).high == pytest.approx(0.5)


def test_report_figures_add_up() -> None:
    config = ArenaConfig("greedy", "bsd", 4, seed="report", muggins=True)
    records = [r for deal in range(4) for r in play_deal(config, deal)]
    report = summarize(config, records, seconds=1.0)
    assert report["games"] == 8 and report["config"]["deals"] == 4
    assert report["wins"]["A"] + report["wins"]["B"] == 8
    assert report["hands"] == sum(r.hands for r in records)
    # Every point pegged is in exactly one kind: they add up to the final scores.
    for deal in range(2):
        for seating in range(2):
            game, _ = play_seating(config, deal, seating)
            record = next(r for r in records if (r.deal, r.seating) == (deal, seating))
            assert game.outcome is not None
            assert sum(sum(p.values()) for p in record.points.values()) == sum(game.scores)
            assert record.winner == seatings(2)[seating][game.outcome.winner]
    for label in ("A", "B"):
        row = report["points_per_hand_per_seat"][label]
        assert row["total"] == pytest.approx(sum(row[k] for k in KINDS), abs=1e-3)
        assert 5 < row["total"] < 25
    text = format_report({**report, "timing": {**report["timing"], "cpu_seconds": 1.0}})
    assert "A greedy" in text and "B bsd" in text and "95 % CI" in text


def test_skunks_are_counted_for_the_winner() -> None:
    report = run_arena(ArenaConfig("greedy", "random", 10, seed="skunks"))
    assert report["a_win_rate"]["mean"] > 0.9
    assert report["skunks"]["A"]["skunk"] + report["skunks"]["A"]["double_skunk"] > 5
    assert report["skunks"]["B"] == {"skunk": 0, "double_skunk": 0}


def _without_timing(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "timing"}


@pytest.mark.parametrize("players", [2, 3, 4])
def test_same_result_with_one_or_two_processes(players: int) -> None:
    config = ArenaConfig("medium", "bsd", 5, seed="jobs", players=players, target=61)
    one = run_arena(config, jobs=1)
    two = run_arena(config, jobs=2)
    assert _without_timing(one) == _without_timing(two)
    assert one["timing"]["decision_ms"].keys() == {"medium", "bsd"}
    assert one["fair_share"] == pytest.approx(1 / 3 if players == 3 else 1 / 2)


def test_config_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="unknown level"):
        ArenaConfig("medium", "hard!", 2)
    with pytest.raises(ValueError):
        ArenaConfig("medium", "bsd", 0)
    with pytest.raises(ValueError):
        ArenaConfig("medium", "bsd", 2, players=5)
    with pytest.raises(ValueError):
        ArenaConfig("medium", "bsd", 2, target=100)
    assert ArenaConfig("good", "bsd", 1).a == "medium"


def _arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine.arena", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=300,
        check=False,
    )


def test_command_line_smoke() -> None:
    result = _arena("random", "greedy", "--games", "20")
    assert result.returncode == 0, result.stderr
    assert "A = random, B = greedy" in result.stdout
    assert "A wins" in result.stdout and "95 % CI" in result.stdout
    assert "20 deals x 2 seatings (AB, BA) = 40 games" in result.stdout


def test_command_line_json_and_jobs() -> None:
    args = ("greedy", "random", "--games", "6", "--seed", "cli", "--target", "61", "--json")
    one = json.loads(_arena(*args).stdout)
    two = json.loads(_arena(*args, "--jobs", "2").stdout)
    assert _without_timing(one) == _without_timing(two)
    assert one["config"] == {
        "a": "greedy",
        "b": "random",
        "deals": 6,
        "seed": "cli",
        "players": 2,
        "target": 61,
        "muggins": False,
    }
    assert two["timing"]["jobs"] == 2


def test_command_line_errors() -> None:
    result = _arena("medium", "genius", "--games", "2")
    assert result.returncode == 2
    assert "unknown level 'genius'" in result.stderr and "Traceback" not in result.stderr
    assert _arena("medium", "bsd", "--players", "5").returncode == 2
    assert main(["medium", "bsd", "--games", "0"]) == 2
