"""Advice for one player, from that player's view alone.

Pure functions of a ``PlayerView`` (what one seat may see): nothing here looks at the
game, the pack or another player's cards, so advice built from them cannot tell a
player what they may not know.

``discard_analysis(view)``
    Every way to lay away: the kept cards' expected hand points (exact: the mean of
    ``show_points`` over every starter the seat has not seen), the expected crib
    points of the cards laid away (`crib_points`: the hard player's tables, computed
    for cribs whose other cards were laid away as a player would; added for one's own
    crib, taken off for an opponent's), an estimate of what the kept cards are worth
    in the play (`pegging_estimate`), and the total; best first.

``play_analysis(view)``
    Every card the seat may play: what it scores now, the count it leaves, and what the
    next opponent may answer — each rank that scores against it, the points and the
    chance that the opponent holds one (their cards drawn from the cards the seat has
    not seen, narrowed by any go they said this count) — with the computer player's
    value of the play (``engine.players.play_values``); best first.

``discard_review(view, laid_away)``
    How a discard compared with the best one: the points given away on average.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from math import comb

from engine.actions import Play
from engine.cards import Card, full_deck
from engine.game import DISCARD, PEGGING
from engine.players import _go_limits, owns_crib, play_values, unseen_cards
from engine.scoring import FIFTEEN, THIRTY_ONE, score_play, show_points
from engine.view import PlayerView

_DECK: tuple[Card, ...] = tuple(full_deck())

# -- discarding ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DiscardOption:
    """One way to lay away, and what it is worth on average (points per hand)."""

    kept: tuple[Card, ...]
    laid_away: tuple[Card, ...]
    hand: float
    crib: float  # signed: positive for one's own crib, negative for an opponent's
    pegging: float

    @property
    def total(self) -> float:
        return self.hand + self.crib + self.pegging


@dataclass(frozen=True, slots=True)
class DiscardAnalysis:
    """Every discard of one deal, best (highest total) first."""

    own_crib: bool
    options: tuple[DiscardOption, ...]

    @property
    def best(self) -> DiscardOption:
        return self.options[0]

    def option_for(self, laid_away: Sequence[Card]) -> DiscardOption:
        """The option that lays away exactly ``laid_away`` (raises ``KeyError``)."""
        wanted = set(laid_away)
        for option in self.options:
            if set(option.laid_away) == wanted:
                return option
        raise KeyError(" ".join(str(c) for c in laid_away))


# The pegging estimate, in points per hand, relative to a hand of none of these.
PEG_PAIR = 0.4
"""A pair kept: an opponent who pairs one of them may be answered with a pair royal."""
PEG_LOW = 0.15
"""Each card worth 4 or less: it fits late in a count, for a go or 31."""
PEG_NEIGHBOURS = 0.15
"""Each two kept cards of touching ranks: the makings of a run in the play."""
PEG_FIVE_PONE = -0.2
"""Each five kept by the pone, who leads: a five on the table makes fifteen for any of
the sixteen ten cards, and the dealer more often plays on the pone's card."""


def pegging_estimate(kept: Sequence[Card], dealer: bool) -> float:
    """A rough estimate of what ``kept`` adds in the play, relative to a plain hand.

    Not computed from the deal (the play depends on both players' choices): a few
    well-known preferences, weighted in points per hand — pairs (`PEG_PAIR`), low cards
    (`PEG_LOW`), neighbouring ranks (`PEG_NEIGHBOURS`) and, for the pone, fives
    (`PEG_FIVE_PONE`). Small beside the hand and crib values: it splits near ties.
    """
    value = 0.0
    for a, b in combinations(kept, 2):
        if a.rank == b.rank:
            value += PEG_PAIR
        elif abs(a.rank - b.rank) == 1:
            value += PEG_NEIGHBOURS
    for card in kept:
        if card.value <= 4:
            value += PEG_LOW
        if card.rank == 5 and not dealer:
            value += PEG_FIVE_PONE
    return round(value, 3)


def crib_points(laid_away: Sequence[Card], players: int, own: bool) -> float:
    """The mean crib (before its sign) that laying away ``laid_away`` leads to.

    From the hard player's tables (``engine.strategy.cribdata``): the crib's other
    cards laid away by the other players as a player would — the dealer's partner
    helps the crib, an opponent keeps its best cards out of it — rather than at random
    (``engine.players.CRIB_PAIR_VALUE``, which the medium player uses): a pone's
    discard to the dealer's crib is worth a little more to the dealer, and the
    dealer's own crib a little less, than random cribs say.
    """
    from engine.strategy.hard import crib_value as hard_crib_value  # its tables: numpy

    return hard_crib_value([c.index for c in laid_away], players, own)


def discard_analysis(view: PlayerView) -> DiscardAnalysis:
    """Every discard open to the seat now, best first (raises ``ValueError`` when the
    seat has nothing to lay away)."""
    if view.phase != DISCARD or not view.must_discard:
        raise ValueError(f"seat {view.seat} has nothing to lay away now")
    holding = view.holding
    need = view.must_discard
    unseen = [c for c in _DECK if c not in holding]
    own = owns_crib(view)
    sign = 1.0 if own else -1.0
    dealer = view.dealer == view.seat
    options: list[DiscardOption] = []
    for laid in combinations(holding, need):
        kept = tuple(c for c in holding if c not in laid)
        hand = sum(show_points(kept, starter) for starter in unseen) / len(unseen)
        options.append(
            DiscardOption(
                kept=kept,
                laid_away=tuple(laid),
                hand=hand,
                crib=sign * crib_points(laid, view.players, own),
                pegging=pegging_estimate(kept, dealer),
            )
        )
    options.sort(key=lambda o: (-o.total, [c.index for c in o.laid_away]))
    return DiscardAnalysis(own, tuple(options))


@dataclass(frozen=True, slots=True)
class DiscardReview:
    """A discard made, beside the best one of the same deal."""

    analysis: DiscardAnalysis
    made: DiscardOption
    rank: int  # 1 for the best

    @property
    def given_away(self) -> float:
        """Expected points per hand the discard cost, against the best one (0 or more)."""
        return max(0.0, self.analysis.best.total - self.made.total)


def discard_review(view: PlayerView, laid_away: Sequence[Card]) -> DiscardReview:
    """``laid_away``, made from ``view`` (the seat's view when it had to discard),
    beside the best discard."""
    analysis = discard_analysis(view)
    made = analysis.option_for(laid_away)
    return DiscardReview(analysis, made, analysis.options.index(made) + 1)


# -- the play -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Threat:
    """Cards the next opponent may answer with, and what one would score them.

    ``ranks`` holds one rank, or the four ten cards (10, J, Q, K) when any of them
    scores the same (a fifteen or a 31: only the value counts)."""

    ranks: tuple[int, ...]
    points: int
    kinds: tuple[str, ...]  # fifteen, thirty-one, pair, pair royal, run …
    chance: float  # that they hold at least one card of these ranks

    @property
    def ten_cards(self) -> bool:
        return len(self.ranks) > 1


@dataclass(frozen=True, slots=True)
class PlayOption:
    """One card the seat may play now."""

    card: Card
    count: int  # the count after it
    points: int  # what it scores now (the go point aside)
    kinds: tuple[str, ...]
    value: float  # the computer player's value of the play (points won less lost)
    threats: tuple[Threat, ...]  # most expected points first

    @property
    def risk(self) -> float:
        """Expected points the next opponent's best answer makes (their cards unknown)."""
        miss, out = 1.0, 0.0
        for t in sorted(self.threats, key=lambda t: -t.points):  # the best answer held
            out += miss * t.chance * t.points
            miss *= 1.0 - t.chance
        return out


@dataclass(frozen=True, slots=True)
class PlayAnalysis:
    """Every card the seat may play now, the suggested one first."""

    count: int  # the count now
    answering: int | None  # the seat that plays next, if an opponent can
    options: tuple[PlayOption, ...]

    @property
    def best(self) -> PlayOption:
        return self.options[0]


def next_opponent(view: PlayerView) -> int | None:
    """The next seat to play after this one that is an opponent with cards and no go
    said in this count (None when there is none)."""
    gone, _ = _go_limits(view)
    n = view.players
    for step in range(1, n):
        seat = (view.seat + step) % n
        if not view.cards_left[seat] or seat in gone:
            continue
        if view.partner is not None and seat == view.partner:
            return None  # the partner answers first
        return seat
    return None


def threats(view: PlayerView, after: Sequence[Card], seat: int) -> tuple[Threat, ...]:
    """What ``seat`` (an opponent) may answer to the cards ``after`` of the current
    count, and the chance of each: their cards drawn from those ``view``'s seat has not
    seen (and, after a go this hand, only cards too high for that count). Most expected
    points first."""
    _, low = _go_limits(view)
    pool = [c for c in unseen_cards(view) if c.value >= low.get(seat, 0)]
    holds = min(view.cards_left[seat], len(pool))
    count = sum(c.value for c in after)
    if holds <= 0:
        return ()
    total = comb(len(pool), holds)
    groups: dict[object, tuple[list[int], int, tuple[str, ...], int]] = {}
    for rank in sorted({c.rank for c in pool if count + c.value <= 31}):
        cards = [c for c in pool if c.rank == rank]
        items = score_play([*after, cards[0]])
        points = sum(i.points for i in items)
        if not points:
            continue
        kinds = tuple(i.kind for i in items)
        key: object = rank
        if cards[0].value == 10 and set(kinds) <= _VALUE_KINDS:
            key = ("ten", kinds)
        ranks, _, _, n = groups.get(key, ([], points, kinds, 0))
        groups[key] = ([*ranks, rank], points, kinds, n + len(cards))
    out = [
        Threat(tuple(ranks), points, kinds, 1.0 - comb(len(pool) - n, holds) / total)
        for ranks, points, kinds, n in groups.values()
    ]
    out.sort(key=lambda t: (-t.points * t.chance, -t.points, t.ranks))
    return tuple(out)


_VALUE_KINDS = {FIFTEEN, THIRTY_ONE}


def play_analysis(view: PlayerView, suggested: Card | None = None) -> PlayAnalysis:
    """Every card the seat may play now; ``suggested`` (e.g. the reply line's card)
    first, then the rest by value (raises ``ValueError`` when the seat may play none)."""
    if view.phase != PEGGING or not view.my_turn or not view.playable:
        raise ValueError(f"seat {view.seat} has no card to play now")
    values = {a.card: v for v, a in play_values(view) if isinstance(a, Play)}
    sequence = [card for _, card in view.count_cards]
    answering = next_opponent(view)
    options: list[PlayOption] = []
    for card in view.playable:
        after = [*sequence, card]
        items = score_play(after)
        count = view.count + card.value
        options.append(
            PlayOption(
                card=card,
                count=count,
                points=sum(i.points for i in items),
                kinds=tuple(i.kind for i in items),
                value=values.get(card, 0.0),
                threats=threats(view, after, answering)
                if answering is not None and count < 31
                else (),
            )
        )
    options.sort(key=lambda o: (o.card != suggested, -o.value, o.card.index))
    return PlayAnalysis(view.count, answering, tuple(options))


__all__ = [
    "DiscardAnalysis",
    "DiscardOption",
    "DiscardReview",
    "PlayAnalysis",
    "PlayOption",
    "Threat",
    "crib_points",
    "discard_analysis",
    "discard_review",
    "next_opponent",
    "pegging_estimate",
    "play_analysis",
    "threats",
]
