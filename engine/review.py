"""A finished game reviewed for one seat: each of its discards and plays beside the
``hard`` computer's choice, and the points given away at each.

Pure functions. `review_game` replays the game from its seed and actions and, at each
decision of the seat, builds that seat's own view (`engine.computer.computer_view`:
what the computer would decide from in that seat); everything after that is a function
of the view alone (`review_discard`, `review_play`), so a review cannot show a card
the seat had not seen when it decided.

Discards
    Every way to lay away valued as a hint values it (`engine.analysis.discard_analysis`:
    the kept cards' mean show over every starter the seat has not seen, ± the crib the
    cards laid away lead to, + the small pegging estimate). Given away: the value of the
    hard player's discard less the value of the one made (never below 0).
Plays
    Every card the seat could play valued as the hard player values it when it chooses
    (`engine.strategy.hard.peg_values`: points won less lost to the end of the hand's
    play, by its search over sampled deals of the cards the seat has not seen; a
    2-player lead, which it makes by medium's rules, by medium's values). Given away:
    the value of the hard player's card less that of the card played (never below 0).
    A play with one choice (one card, or cards of one rank) and a go are no decisions.

The hard player's choice is `engine.computer.computer_move` on the same view: what it
would have done in the seat, tie-breaks and all. Near the end of a game it chooses by
the chance of winning, so its choice may be worth fewer points than the seat's: then
nothing was given away.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.actions import Discard, Play
from engine.analysis import (
    DiscardAnalysis,
    DiscardOption,
    Threat,
    discard_analysis,
    next_opponent,
    threats,
)
from engine.cards import Card
from engine.computer import computer_move, computer_view, view_rng
from engine.game import PEGGING, Game
from engine.scoring import score_play
from engine.view import PlayerView

LEVEL = "hard"
"""The computer player a review compares with."""
COSTLIEST = 3
"""How many of the costliest decisions a review explains."""


@dataclass(frozen=True, slots=True)
class DiscardDecision:
    """A discard made, beside the hard player's, valued as a hint values discards."""

    hand_no: int
    dealer: int  # the seat whose crib it was
    own_crib: bool  # the seat's side's crib
    holding: tuple[Card, ...]  # the cards dealt (the seat's own)
    made: DiscardOption
    computer: DiscardOption
    analysis: DiscardAnalysis

    @property
    def given_away(self) -> float:
        """Expected points per hand the discard gave away against the computer's."""
        return max(0.0, self.computer.total - self.made.total)

    @property
    def matched(self) -> bool:
        return set(self.made.laid_away) == set(self.computer.laid_away)

    def cards(self) -> set[Card]:
        """Every card the decision names (the seat's own, all of them)."""
        return set(self.holding)


@dataclass(frozen=True, slots=True)
class PlayDecision:
    """A card played, beside the hard player's, valued by its pegging search."""

    hand_no: int
    count: int  # the count before the play
    count_cards: tuple[Card, ...]  # the cards of the count so far (played: public)
    holding: tuple[Card, ...]  # the seat's cards in hand before the play
    made: Card
    computer: Card
    values: tuple[tuple[Card, float], ...]  # each card the seat could play, best first
    made_points: int  # what the card played scored at once (the go aside)
    computer_points: int
    answering: int | None  # the next opponent to play, when one can
    threat: Threat | None  # that opponent's costliest answer on average to the card played

    def value_of(self, card: Card) -> float:
        return next(v for c, v in self.values if c == card)

    @property
    def given_away(self) -> float:
        """Points the play gave away by the end of the hand, against the computer's."""
        return max(0.0, self.value_of(self.computer) - self.value_of(self.made))

    @property
    def matched(self) -> bool:
        return self.made.rank == self.computer.rank  # the suit does not peg

    def cards(self) -> set[Card]:
        return set(self.holding) | set(self.count_cards)


Decision = DiscardDecision | PlayDecision


@dataclass(frozen=True, slots=True)
class GameReview:
    """Every decision of one seat in one game, in order."""

    seat: int
    level: str
    decisions: tuple[Decision, ...]

    @property
    def discards(self) -> tuple[DiscardDecision, ...]:
        return tuple(d for d in self.decisions if isinstance(d, DiscardDecision))

    @property
    def plays(self) -> tuple[PlayDecision, ...]:
        return tuple(d for d in self.decisions if isinstance(d, PlayDecision))

    @property
    def total(self) -> float:
        return sum(d.given_away for d in self.decisions)

    @property
    def matched(self) -> int:
        return sum(1 for d in self.decisions if d.matched)

    def costliest(self, n: int = COSTLIEST) -> tuple[Decision, ...]:
        """The ``n`` decisions that gave away most (only those that gave some away),
        costliest first; the earlier first among equals."""
        order = sorted(
            (i for i, d in enumerate(self.decisions) if d.given_away >= 0.05),
            key=lambda i: (-self.decisions[i].given_away, i),
        )
        return tuple(self.decisions[i] for i in order[:n])


def review_discard(
    view: PlayerView, laid_away: Sequence[Card], level: str = LEVEL
) -> DiscardDecision:
    """The discard ``laid_away`` made from ``view`` beside the ``level`` player's
    (raises ValueError when the seat had nothing to lay away, KeyError when
    ``laid_away`` is not a discard of its holding)."""
    analysis = discard_analysis(view)
    chosen = computer_move(view, level)
    assert isinstance(chosen, Discard)
    return DiscardDecision(
        hand_no=view.hand_no,
        dealer=view.dealer,
        own_crib=analysis.own_crib,
        holding=view.holding,
        made=analysis.option_for(laid_away),
        computer=analysis.option_for(chosen.cards),
        analysis=analysis,
    )


def is_choice(view: PlayerView) -> bool:
    """Whether the seat has a pegging decision to make: cards of two ranks or more."""
    return view.phase == PEGGING and len({c.rank for c in view.playable}) > 1


def review_play(view: PlayerView, card: Card, level: str = LEVEL) -> PlayDecision:
    """The card ``card`` played from ``view`` beside the ``level`` player's choice, each
    playable card valued by the hard player's search (raises ValueError when the seat
    may play no card or ``card`` is not one of them)."""
    from engine.strategy.hard import peg_values  # its tables: numpy

    if card not in view.playable:
        raise ValueError(f"{card} is not a card seat {view.seat} may play")
    chosen = computer_move(view, level)
    assert isinstance(chosen, Play)
    # A generator in the state the hard player's own came in: the same sampled deals.
    values = peg_values(view, view_rng(view))
    ranked = tuple(sorted(values.items(), key=lambda cv: (-cv[1], cv[0].index)))
    sequence = [c for _, c in view.count_cards]
    answering = next_opponent(view)
    after = [*sequence, card]
    found = (
        threats(view, after, answering)
        if answering is not None and view.count + card.value < 31
        else ()
    )
    return PlayDecision(
        hand_no=view.hand_no,
        count=view.count,
        count_cards=tuple(sequence),
        holding=view.holding,
        made=card,
        computer=chosen.card,
        values=ranked,
        made_points=sum(i.points for i in score_play(after)),
        computer_points=sum(i.points for i in score_play([*sequence, chosen.card])),
        answering=answering,
        threat=max(found, key=lambda t: t.points * t.chance) if found else None,
    )


def review_game(game: Game, seat: int, level: str = LEVEL) -> GameReview:
    """Every discard and every play with a choice that ``seat`` made in ``game``, each
    from the view the seat had then (raises ValueError for a seat not in the game)."""
    if not 0 <= seat < game.players:
        raise ValueError(f"no seat {seat} in a {game.players}-player game")
    replayed = Game(game.settings, game.seed)
    decisions: list[Decision] = []
    for action in game.actions:
        if action.seat == seat and isinstance(action, Discard | Play):
            view = computer_view(replayed, seat)
            if isinstance(action, Discard):
                decisions.append(review_discard(view, action.cards, level))
            elif is_choice(view):
                decisions.append(review_play(view, action.card, level))
        replayed.apply(action)
    return GameReview(seat, level, tuple(decisions))


__all__ = [
    "COSTLIEST",
    "LEVEL",
    "Decision",
    "DiscardDecision",
    "GameReview",
    "PlayDecision",
    "is_choice",
    "review_discard",
    "review_game",
    "review_play",
]
