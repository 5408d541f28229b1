"""Phrases of text and cards, and names as the recipient reads them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine import Card, PlayerView
from pbem.names import clean_name
from pbem.render.context import MailContext

Part = str | Card
Phrase = tuple[Part, ...]

__all__ = [
    "Part",
    "People",
    "Phrase",
    "cap",
    "clean_name",
    "either",
    "join_words",
    "phrase",
    "plain",
    "seats_of",
]


def phrase(*parts: Part | Iterable[Part] | None) -> Phrase:
    """A phrase from strings, cards, card sequences (spaced) and phrases; None is skipped."""
    out: list[Part] = []
    for part in parts:
        if part is None:
            continue
        if isinstance(part, str | Card):
            out.append(part)
            continue
        items = tuple(part)
        if not all(isinstance(x, Card) for x in items):
            out.extend(items)  # already a phrase
            continue
        for i, card in enumerate(items):
            if i:
                out.append(" ")
            out.append(card)
    return tuple(out)


def plain(p: Phrase) -> str:
    return "".join(str(x) for x in p)


def either(cards: Sequence[Card], word: str = "or") -> Phrase:
    """``7♣``, ``7♣ or 9♦``, ``2♣, 7♣ or 9♦``."""
    out: list[Part] = []
    for i, card in enumerate(cards):
        if i:
            out.append(f" {word} " if i == len(cards) - 1 else ", ")
        out.append(card)
    return tuple(out)


def join_words(words: Sequence[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


class People:
    """Names as the recipient reads them: "you", "Bob", "your crib", "Bob's crib"."""

    def __init__(self, view: PlayerView, ctx: MailContext) -> None:
        self.me = view.seat
        self.players = view.players
        self.names = tuple(
            clean_name(ctx.names[s])
            if s < len(ctx.names) and ctx.names[s].strip()
            else f"Seat {s + 1}"
            for s in range(view.players)
        )
        self.sides = view.scores

    def who(self, seat: int | None) -> str:
        if seat is None or not 0 <= seat < self.players:
            return "someone"
        return "you" if seat == self.me else self.names[seat]

    def whose(self, seat: int) -> str:
        return "your" if seat == self.me else f"{self.who(seat)}'s"

    def side_seats(self, side: int) -> tuple[int, ...]:
        for s in self.sides:
            if s.side == side:
                return s.seats
        return (side,)

    def side(self, side: int) -> str:
        seats = sorted(self.side_seats(side), key=lambda s: (s != self.me, s))
        return join_words([self.who(s) for s in seats])

    def side_label(self, side: int) -> str:
        seats = sorted(self.side_seats(side), key=lambda s: (s != self.me, s))
        return " & ".join(cap(self.who(s)) for s in seats)

    def side_wins(self, side: int) -> str:
        """Who won, as a clause: "Alice wins", "you win", "you and Carol win"."""
        seats = self.side_seats(side)
        plural = len(seats) > 1 or self.me in seats
        return f"{self.side(side)} {'win' if plural else 'wins'}"

    def score(self) -> str:
        """``Score: you 36, Alice 20, Bob 32`` (yours first)."""
        order = sorted(self.sides, key=lambda s: self.me not in s.seats)
        return "Score: " + ", ".join(f"{self.side_label(s.side)} {s.front}" for s in order)

    def matchup(self) -> str:
        mine = next((s.side for s in self.sides if self.me in s.seats), None)
        if mine is None:  # an observer: nobody is "you"
            return cap(" vs ".join(self.side(s.side) for s in self.sides))
        order = [mine] + [s.side for s in self.sides if s.side != mine]
        return cap(" vs ".join(self.side(side) for side in order))


def seats_of(view: PlayerView, side: int) -> tuple[int, ...]:
    for s in view.scores:
        if s.side == side:
            return s.seats
    return (side,)
