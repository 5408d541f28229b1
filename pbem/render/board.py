"""The peg board and the scores: one track of holes per side."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from engine import PlayerView
from pbem.render.words import People, clean_name

SIDE_COLORS = ("#1d5fa8", "#2e7d32", "#a35200")

HOLE, FRONT, BACK = ".", "●", "○"
ROW = 30
GROUP = 5


@dataclass(frozen=True)
class Track:
    label: str
    color: str
    segments: tuple[tuple[str, str], ...]  # (kind: hole|front|back, characters)

    @property
    def holes(self) -> str:
        """The track as one line of characters (for plain text)."""
        return "".join(chars for _, chars in self.segments)


@dataclass(frozen=True)
class BoardRow:
    first: int
    last: int
    tracks: tuple[Track, ...]


@dataclass(frozen=True)
class ScoreLine:
    label: str
    color: str
    mine: bool
    front: int
    back: int
    to_go: int


@dataclass(frozen=True)
class Board:
    target: int
    scores: tuple[ScoreLine, ...]
    rows: tuple[BoardRow, ...]
    label_width: int
    home: tuple[ScoreLine, ...]  # sides pegged into the game hole
    rules: str = ""  # the house rules, in words (`house_rules`)


def house_rules(players: int, target: int, muggins: bool, skunk: str) -> str:
    """The game's house rules in one line: target, muggins, the skunk rule, the players."""
    half = (target + 1) // 2
    if skunk == "lurch":
        skunks = f"lurch under {half} (2 games)"
    elif skunk == "skunk":
        three_quarters = 91 if target == 121 else 46
        skunks = f"skunk under {three_quarters} (2 games), double under {half} (4)"
    else:
        skunks = "no skunks"
    who = "2 partnerships" if players == 4 else f"{players} players"
    return f"to {target}, muggins {'on' if muggins else 'off'}, {skunks}, {who}"


@lru_cache(maxsize=4096)
def _track(first: int, last: int, front: int, back: int) -> tuple[tuple[str, str], ...]:
    segments: list[tuple[str, str]] = []
    for hole in range(first, last + 1):
        if hole != first and (hole - first) % GROUP == 0:
            segments.append(("hole", " "))
        if hole == front:
            segments.append(("front", FRONT))
        elif hole == back:
            segments.append(("back", BACK))
        else:
            segments.append(("hole", HOLE))
    merged: list[tuple[str, str]] = []
    for kind, text in segments:
        if merged and merged[-1][0] == kind == "hole":
            merged[-1] = (kind, merged[-1][1] + text)
        else:
            merged.append((kind, text))
    return tuple(merged)


def build_board(view: PlayerView, people: People) -> Board:
    lines: list[ScoreLine] = []
    others = iter(SIDE_COLORS[1:])
    for s in view.scores:
        mine = view.seat in s.seats
        color = SIDE_COLORS[0] if mine else next(others, SIDE_COLORS[-1])
        lines.append(
            ScoreLine(
                label=clean_name(people.side_label(s.side), 18),
                color=color,
                mine=mine,
                front=min(s.front, view.target),  # a board stops at the target
                back=min(s.back, view.target),
                to_go=max(view.target - s.front, 0),
            )
        )
    lines.sort(key=lambda line: not line.mine)
    return _board(view, lines)


def named_board(view: PlayerView, names: Sequence[str]) -> Board:
    """The board as an onlooker sees it: each side labelled with its players' names
    (``names`` by seat), the side ahead first (the winner, once the game is over)."""
    lines = [
        ScoreLine(
            label=clean_name(" & ".join(names[seat] for seat in s.seats), 18),
            color=color,
            mine=False,
            front=min(s.front, view.target),
            back=min(s.back, view.target),
            to_go=max(view.target - s.front, 0),
        )
        for s, color in zip(view.scores, SIDE_COLORS, strict=False)
    ]
    lines.sort(key=lambda line: -line.front)
    return _board(view, lines)


def _board(view: PlayerView, lines: list[ScoreLine]) -> Board:
    rows: list[BoardRow] = []
    for first in range(1, view.target, ROW):
        last = min(first + ROW - 1, view.target - 1)
        tracks = tuple(
            Track(line.label, line.color, _track(first, last, line.front, line.back))
            for line in lines
        )
        rows.append(BoardRow(first, last, tracks))
    width = max(len(line.label) for line in lines)
    home = tuple(line for line in lines if line.front >= view.target)
    rules = house_rules(view.players, view.target, view.muggins, view.skunk)
    return Board(view.target, tuple(lines), tuple(rows), width, home, rules)
