"""Matches: several games between the same players.

The rules (001): "the turn to deal alternates … except that the loser of the
game deals first if another game is played".  ``rematch_settings`` gives the
next game's settings with that dealer; ``MatchScore`` adds up game values
(a lurched or skunked loser loses two games, a double skunk four).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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
    return loser_deals_first(game.players, game.dealer, outcome.scores, outcome.winner)


def loser_deals_first(players: int, dealer: int, scores: Sequence[int], winner: int) -> int:
    """`first_dealer_after` from a game's result alone: its number of ``players``, its
    last ``dealer``, the final ``scores`` (per seat, or per side with partners) and the
    ``winner`` (seat, or side) — what an archive's ``deal_proof.follows`` holds, so a
    verifier needs no replay of the game followed. ValueError for a result that is not
    one (a winner or dealer with no seat, scores not one per side)."""
    sides = 2 if players == 4 else players
    if len(scores) != sides or not 0 <= winner < sides or not 0 <= dealer < players:
        raise ValueError(f"not the result of a {players}-player game")

    def side_of(seat: int) -> int:
        return seat % 2 if players == 4 else seat

    order = [(dealer + step) % players for step in range(1, players + 1)]
    losers = [seat for seat in order if side_of(seat) != winner]
    return min(losers, key=lambda seat: (scores[side_of(seat)], order.index(seat)))


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
