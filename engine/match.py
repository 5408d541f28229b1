"""Matches: several games between the same players.

The rules (001): "the turn to deal alternates … except that the loser of the
game deals first if another game is played".  ``rematch_settings`` gives the
next game's settings with that dealer; ``MatchScore`` adds up game values
(a lurched or skunked loser loses two games, a double skunk four).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from engine.game import Game, Outcome, Settings


def first_dealer_after(game: Game) -> int:
    """Who deals first in the next game: a loser of ``game``.

    With two players, the loser.  With partners, the losing partner next in turn
    after the last dealer.  With three players, the loser with the lower score
    (the one who lost most), ties broken by turn order after the last dealer.
    """
    outcome = game.outcome
    if outcome is None:
        raise ValueError("the game is not over")
    n = game.players
    order = [(game.dealer + step) % n for step in range(1, n + 1)]
    losers = [seat for seat in order if seat not in outcome.winner_seats]
    return min(losers, key=lambda seat: (outcome.scores[game.side_of(seat)], order.index(seat)))


def rematch_settings(game: Game) -> Settings:
    """The settings of the next game of a match: the same, with the loser dealing first."""
    return replace(game.settings, first_dealer=first_dealer_after(game))


@dataclass
class MatchScore:
    """Games won by each side over a match, counting lurches and skunks."""

    sides: int
    games: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.games:
            self.games = [0] * self.sides

    def add(self, outcome: Outcome) -> None:
        self.games[outcome.winner] += outcome.value

    @classmethod
    def of(cls, sides: int, outcomes: Iterable[Outcome]) -> MatchScore:
        score = cls(sides)
        for outcome in outcomes:
            score.add(outcome)
        return score
