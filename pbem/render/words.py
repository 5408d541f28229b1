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
    "they_do",
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


def they_do(names: Sequence[str], singular: str, plural: str) -> str:
    """Names with their verb, agreeing in number: "Bob agrees", "Bob and Carol agree"
    (``names`` are third persons; "you" goes through `People.plural`)."""
    return f"{join_words(names)} {singular if len(names) == 1 else plural}"


def pegged(score: int, target: int) -> str:
    """A score as a board shows it: it stops at the target, where the side pegs out
    ("121, pegged out"); the engine's own count may run past it (the show that took a
    side home scores in full), the players never see that."""
    return f"{target}, pegged out" if score >= target else str(score)


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


class People:
    """Names as the recipient reads them: "you", "Bob", "your crib", "Bob's crib".

    A computer seat is "Computer" in every line and table; its level is said in the
    header alone (`matchup`: "You vs Computer (hard)"), where it is read once."""

    def __init__(self, view: PlayerView, ctx: MailContext) -> None:
        self.me = view.seat
        self.players = view.players
        self.target = view.target
        self.names = tuple(
            clean_name(ctx.names[s])
            if s < len(ctx.names) and ctx.names[s].strip()
            else f"Seat {s + 1}"
            for s in range(view.players)
        )
        self.levels = tuple(
            clean_name(ctx.levels[s], 20) if s < len(ctx.levels) else ""
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

    def billed(self, seat: int) -> str:
        """A seat's name as the header shows it: a computer with its level,
        "Computer (hard)"; anyone else as `who`."""
        name = self.who(seat)
        level = self.levels[seat] if 0 <= seat < self.players and seat != self.me else ""
        return f"{name} ({level})" if level else name

    def side(self, side: int, header: bool = False) -> str:
        """The players of a side, the recipient first ("you and Carol"); ``header``:
        each named as the header shows them (`billed`)."""
        seats = sorted(self.side_seats(side), key=lambda s: (s != self.me, s))
        return join_words([self.billed(s) if header else self.who(s) for s in seats])

    def plural(self, seats: Sequence[int]) -> bool:
        """Whether ``seats``, named together, take a plural verb: several of them, or
        "you" ("you win", "Bob wins", "Bob and Carol agree")."""
        return len(seats) > 1 or self.me in seats

    def side_label(self, side: int) -> str:
        seats = sorted(self.side_seats(side), key=lambda s: (s != self.me, s))
        return " & ".join(cap(self.who(s)) for s in seats)

    def side_wins(self, side: int) -> str:
        """Who won, as a clause: "Alice wins", "you win", "you and Carol win"."""
        return f"{self.side(side)} {'win' if self.plural(self.side_seats(side)) else 'wins'}"

    def score(self) -> str:
        """``Score: you 36, Alice 20, Bob 32`` (yours first); once a side has pegged out,
        ``Score: you 121, pegged out; Bob 98``."""
        order = sorted(self.sides, key=lambda s: self.me not in s.seats)
        out = any(s.front >= self.target for s in order)
        return "Score: " + ("; " if out else ", ").join(
            f"{self.side_label(s.side)} {pegged(s.front, self.target)}" for s in order
        )

    def matchup(self) -> str:
        mine = next((s.side for s in self.sides if self.me in s.seats), None)
        if mine is None:  # an observer: nobody is "you"
            return cap(" vs ".join(self.side(s.side, header=True) for s in self.sides))
        order = [mine] + [s.side for s in self.sides if s.side != mine]
        return cap(" vs ".join(self.side(side, header=True) for side in order))


def seats_of(view: PlayerView, side: int) -> tuple[int, ...]:
    for s in view.scores:
        if s.side == side:
            return s.seats
    return (side,)
