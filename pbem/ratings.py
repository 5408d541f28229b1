"""Standings: ratings and statistics from finished games, pure (no database, no clock).

Ratings are OpenSkill's Plackett–Luce model (Weng & Lin 2011, the ``openskill``
package): every player starts at mu 25, sigma 25/3 and the table sorts by the
conservative rating ``mu - 3 sigma``. One game is one rating update:

- two players: the winner ranks first, the loser second;
- partnerships (four players): the two sides are teams of two;
- three players, each for themselves: the winner first, the others by their final
  score (equal scores share a rank).

Each computer level is one rated pseudo-player (``computer:good``), whichever seat or
address it played from; when one pseudo-player sits at two places of a game, the first
place's update counts.

Beside the rating: games, wins, skunks (games won by a skunk or better, and lost by
one: ``skunked``), and the average points of each kind, from the engine's events —
pegging (the play, go and last card, his heels) and hand per hand played, crib (shown
or, in muggins games, claimed) per crib the player owned and counted (a player owns
one crib in two hands, three or four: averaged per hand it would look a third or a
half of what it is) — counted for the player who scored them.

Recompute from all finished games, ordered by (end time, game id), and the result is
the same every time. The service does not recompute on each question: it keeps the
table stored and rates each game once, when it ends (`apply_record`, the same update a
recomputation makes), in the order the games ended (see `pbem.service.game.standings`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from pbem.names import clean_name, shown_name

if TYPE_CHECKING:
    from openskill.models import PlackettLuce

    from engine import Game

KINDS = ("pegging", "hand", "crib")
"""The kinds of points the standings average: pegging and hand per hand, crib per crib."""

_PEGGING = {"play", "count_end", "heels"}


@cache
def rating_model() -> PlackettLuce:
    """The rating model (its defaults: mu 25, sigma 25/3), made on first use: reading
    the stored table (``pbem standings``) needs no OpenSkill."""
    from openskill.models import PlackettLuce

    return PlackettLuce()


def computer_key(level: str) -> str:
    """The pseudo-player of a computer level."""
    return f"computer:{level}"


@dataclass(frozen=True)
class Place:
    """Who sat at a seat: a stable key (the email, or ``computer:LEVEL``) and a name."""

    key: str
    name: str
    computer: bool = False


@dataclass(frozen=True)
class GameRecord:
    """What the standings need of one finished game."""

    game_id: int
    finished_at: datetime
    places: tuple[Place, ...]  # by seat
    sides: tuple[tuple[int, ...], ...]  # the seats of each side
    scores: tuple[int, ...]  # by side
    winner: int  # side
    values: dict[int, int]  # each losing side's game value (2: skunked, 4: double)
    hands: int
    points: tuple[dict[str, int], ...]  # by seat: points of each kind
    cribs: tuple[int, ...]  # by seat: the cribs it owned that were counted


def points_of(game: Game) -> tuple[dict[str, int], ...]:
    """Each seat's points by kind (`KINDS`) from the game's events."""
    out: tuple[dict[str, int], ...] = tuple(dict.fromkeys(KINDS, 0) for _ in range(game.players))
    for event in game.events:
        if not event.points or event.seat is None:
            continue
        kind: str | None = None
        if event.kind in _PEGGING:
            kind = "pegging"
        elif event.kind in ("show", "claim"):
            kind = "crib" if event.detail.startswith("crib") else "hand"
        if kind is not None:
            out[event.seat][kind] += event.points
    return out


def cribs_of(game: Game) -> tuple[int, ...]:
    """How many cribs each seat owned that were counted (shown, or claimed in muggins
    games): the dealer's, once per hand that reached the crib's count."""
    out = [0] * game.players
    for event in game.events:
        crib = event.kind in ("show", "claim") and event.detail.startswith("crib")
        if crib and event.seat is not None:
            out[event.seat] += 1
    return tuple(out)


def record_of(
    game_id: int, finished_at: datetime, game: Game, places: Sequence[Place]
) -> GameRecord:
    """The record of a finished engine game; ValueError when it is not over."""
    outcome = game.outcome
    if outcome is None:
        raise ValueError(f"game {game_id} is not over")
    sides = tuple(game.seats_of(side) for side in range(game.settings.sides))
    return GameRecord(
        game_id=game_id,
        finished_at=finished_at,
        places=tuple(places),
        sides=sides,
        scores=tuple(outcome.scores),
        winner=outcome.winner,
        values=dict(outcome.game_values),
        hands=game.hand_no,
        points=points_of(game),
        cribs=cribs_of(game),
    )


def ranks_of(record: GameRecord) -> list[int]:
    """Each side's rank (1 is best): the winner first, the others by score."""
    others = sorted(
        {record.scores[s] for s in range(len(record.sides)) if s != record.winner}, reverse=True
    )
    return [
        1 if side == record.winner else 2 + others.index(record.scores[side])
        for side in range(len(record.sides))
    ]


@dataclass
class Standing:
    """One player's line."""

    key: str
    name: str
    computer: bool
    mu: float
    sigma: float
    games: int = 0
    wins: int = 0
    skunks: int = 0
    skunked: int = 0
    hands: int = 0
    cribs: int = 0
    points: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    rank: int = 0

    @property
    def rating(self) -> float:
        """The conservative rating, mu - 3 sigma."""
        return self.mu - 3 * self.sigma

    def per_hand(self, kind: str) -> float:
        """The points of ``kind`` per hand played."""
        return self.points[kind] / self.hands if self.hands else 0.0

    def per_crib(self) -> float:
        """The crib's points per crib owned (and counted)."""
        return self.points["crib"] / self.cribs if self.cribs else 0.0

    def average(self, kind: str) -> float:
        """What the table shows for ``kind``: pegging and hand per hand, crib per crib."""
        return self.per_crib() if kind == "crib" else self.per_hand(kind)

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "key": self.key,
            "name": self.name,
            "computer": self.computer,
            "rating": round(self.rating, 3),
            "mu": round(self.mu, 3),
            "sigma": round(self.sigma, 3),
            "games": self.games,
            "wins": self.wins,
            "skunks": self.skunks,
            "skunked": self.skunked,
            "hands": self.hands,
            "cribs": self.cribs,
            "per_hand": {kind: round(self.per_hand(kind), 3) for kind in KINDS if kind != "crib"},
            "per_crib": round(self.per_crib(), 3),
        }


@dataclass(frozen=True)
class Standings:
    """Every rated player, best first, and how many games made the table."""

    rows: tuple[Standing, ...]
    games: int

    def row(self, key: str) -> Standing | None:
        return next((r for r in self.rows if r.key == key), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "model": "openskill PlackettLuce (mu 25, sigma 25/3; rating = mu - 3 sigma)",
            "games": self.games,
            "players": [r.to_json() for r in self.rows],
        }


def new_standing(place: Place, model: PlackettLuce | None = None) -> Standing:
    """The line of a player before their first rated game."""
    model = model or rating_model()
    return Standing(place.key, place.name, place.computer, model.mu, model.sigma)


def apply_record(
    table: dict[str, Standing], record: GameRecord, model: PlackettLuce | None = None
) -> None:
    """Rate one finished game: update (or add) the lines of its players in ``table``.

    The one rating update both `compute_standings` (a recomputation from scratch) and the
    stored table (updated when a game ends) make, so the two agree to the last bit when
    they take the same games in the same order.
    """
    model = model or rating_model()
    for place in record.places:
        if place.key not in table:
            table[place.key] = new_standing(place, model)
        elif not place.computer:
            table[place.key].name = place.name  # the latest name
    teams = [
        [
            model.rating(mu=table[record.places[s].key].mu, sigma=table[record.places[s].key].sigma)
            for s in seats
        ]
        for seats in record.sides
    ]
    new = model.rate(teams, ranks=[float(r) for r in ranks_of(record)])
    updated: set[str] = set()
    for side, seats in enumerate(record.sides):
        for seat, rating in zip(seats, new[side], strict=True):
            key = record.places[seat].key
            if key not in updated:
                table[key].mu, table[key].sigma = rating.mu, rating.sigma
                updated.add(key)
    counted: set[str] = set()
    for side, seats in enumerate(record.sides):
        for seat in seats:
            row = table[record.places[seat].key]
            for kind in KINDS:
                row.points[kind] += record.points[seat][kind]
            row.hands += record.hands
            row.cribs += record.cribs[seat] if seat < len(record.cribs) else 0
            if row.key in counted:
                continue
            counted.add(row.key)
            row.games += 1
            if side == record.winner:
                row.wins += 1
                if max(record.values.values(), default=1) >= 2:
                    row.skunks += 1
            elif record.values.get(side, 1) >= 2:
                row.skunked += 1


def order_key(row: Standing) -> tuple[float, int, str]:
    """The table's order: best rating first, then more games, then the key."""
    return (-row.rating, -row.games, row.key)


def compute_standings(records: Iterable[GameRecord], *, ordered: bool = False) -> Standings:
    """The standings after ``records``, taken in order of (end time, game id) — or in the
    order given, with ``ordered`` (the stored table's order of rating)."""
    model = rating_model()
    table: dict[str, Standing] = {}
    games = list(records) if ordered else sorted(records, key=lambda r: (r.finished_at, r.game_id))
    for record in games:
        apply_record(table, record, model)
    rows = sorted(table.values(), key=order_key)
    for number, row in enumerate(rows, start=1):
        row.rank = number
    return Standings(tuple(rows), len(games))


def standing_read(line: Mapping[str, Any], rank: int) -> Standing:
    """A stored line (as ``pbem.store.ratings.top_lines`` reads it) as a `Standing`: a
    person's name as they show it now, a computer level's as stored."""
    owner = line["player_id"]
    return Standing(
        key=line["key"],
        name=line["name"] if owner is None else shown_name(owner, line["display_name"]),
        computer=line["computer"],
        mu=line["mu"],
        sigma=line["sigma"],
        games=line["games"],
        wins=line["wins"],
        skunks=line["skunks"],
        skunked=line["skunked"],
        hands=line["hands"],
        cribs=line["cribs"],
        points={kind: line[kind] for kind in KINDS},
        rank=rank,
    )


def standings_read(lines: Iterable[Mapping[str, Any]], games: int) -> Standings:
    """The stored lines, best first (as ``pbem.store.lines.top_lines`` reads them), ranked
    from 1, and the count of rated games, as `Standings`."""
    return Standings(
        tuple(standing_read(line, rank) for rank, line in enumerate(lines, start=1)), games
    )


# --- the table as text (the terminal, the text part of mails) ----------------------------

COLUMNS = ("#", "player", "rating", "games", "wins", "skunks", "peg/hand", "hand", "crib")


def cells(row: Standing) -> tuple[str, ...]:
    """One row's values as the table shows them."""
    return (
        str(row.rank),
        clean_name(row.name, 30),
        f"{row.rating:.1f}",
        str(row.games),
        str(row.wins),
        str(row.skunks),
        *(f"{row.average(kind):.2f}" for kind in KINDS),
    )


def text_table(rows: Sequence[Standing]) -> str:
    """The rows as a plain-text table (for the terminal and the text part of mails): the
    player's column left-aligned, the numbers right-aligned, each as wide as its widest
    value (one format for every line: ``pbem standings`` lays out 20,000 of them)."""
    lines = [COLUMNS, *(cells(r) for r in rows)]
    widths = [max(map(len, column)) for column in zip(*lines, strict=True)]
    pattern = "  ".join(
        ("{:<%d}" if i == 1 else "{:>%d}") % width for i, width in enumerate(widths)
    )
    return "\n".join(pattern.format(*line).rstrip() for line in lines)
