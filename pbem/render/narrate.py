"""Events in words, from the recipient's side of the table."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engine import Card, Event, PlayerView
from engine.scoring import (
    DOUBLE_PAIR_ROYAL,
    FIFTEEN,
    PAIR,
    PAIR_ROYAL,
    RUN,
    THIRTY_ONE,
    ScoreItem,
    count_words,
)
from pbem.render.words import Part, People, Phrase, cap, join_words, phrase

CLAIMED = re.compile(r"claimed (\d+)")


_PEG_WORDS = {
    FIFTEEN: "fifteen two",
    THIRTY_ONE: "thirty-one for two",
    PAIR: "a pair for two",
    PAIR_ROYAL: "a pair royal for six",
    DOUBLE_PAIR_ROYAL: "a double pair royal for twelve",
}


def peg_words(items: Sequence[ScoreItem]) -> str:
    """What a pegging score is called: ``fifteen two and a pair for two — 4 in all``."""
    words = [
        f"a run of {len(i.cards)} for {i.points}"
        if i.kind == RUN
        else _PEG_WORDS.get(i.kind, f"{i.kind} for {i.points}")
        for i in items
    ]
    said = " and ".join(words)
    return f"{said} — {sum(i.points for i in items)} in all" if len(items) > 1 else said


@dataclass(frozen=True)
class Line:
    """One line of a narrative; a heading starts a new hand."""

    phrase: Phrase
    heading: bool = False


class Narrator:
    """Events in words, from the recipient's side of the table."""

    def __init__(self, view: PlayerView, people: People) -> None:
        self.view = view
        self.p = people
        self.starters: dict[int, Card] = {}
        if view.starter is not None:
            self.starters[view.hand_no] = view.starter
        self.contenders: list[int] = list(range(view.players))
        self.dealers: dict[int, int] = {view.hand_no: view.dealer}
        self.last_claim: Event | None = None

    def lines(self, events: Iterable[Event]) -> tuple[Line, ...]:
        visible = [e for e in events if e.private_to is None or e.private_to == self.view.seat]
        for e in visible:
            if e.kind == "deal" and e.seat is not None:
                self.dealers[e.hand] = e.seat
            if e.kind == "starter" and e.cards:
                self.starters[e.hand] = e.cards[0]
            elif e.kind in ("show", "reveal") and e.hand not in self.starters:
                # A combination using a card outside the hand names the starter.
                extra = {c for item in e.items for c in item.cards if c not in e.cards}
                if len(extra) == 1:
                    self.starters[e.hand] = extra.pop()
        hands = {e.hand for e in visible if e.hand > 0}
        out: list[Line] = []
        for e in visible:
            line = self.line(e)
            if line is None:
                continue
            if len(hands) > 1 and not out and not line.heading and e.hand > 0:
                out.append(Line(phrase(f"Hand {e.hand}:"), heading=True))
            out.append(line)
        return tuple(out)

    def _starter_of(self, e: Event) -> Card | None:
        return self.starters.get(e.hand)

    def _shown(self, e: Event, owner: str, what: str) -> Phrase:
        """``your hand 5♥ 5♠ J♦ 4♣ + starter 6♦``."""
        starter = self._starter_of(e)
        return phrase(
            f"{owner} {what} ",
            e.cards,
            *((" + starter ", starter) if starter is not None else ()),
        )

    def line(self, e: Event) -> Line | None:  # one branch per event kind
        p = self.p
        who = cap(p.who(e.seat))
        if e.kind == "draw":
            return self._draw(e)
        if e.kind == "deal":
            crib = "the crib is yours" if e.seat == p.me else f"the crib is {p.whose(e.seat or 0)}"
            verb = "deal" if e.seat == p.me else "deals"
            return Line(phrase(f"Hand {e.hand}: {p.who(e.seat)} {verb}; {crib}."), heading=True)
        if e.kind == "hand":
            return Line(phrase("You were dealt ", e.cards, "."))
        if e.kind == "discard":
            dealer = self.dealers.get(e.hand)
            crib = "the crib" if dealer is None else f"{p.whose(dealer)} crib"
            return Line(phrase("You laid away ", e.cards, f" to {crib}."))
        if e.kind == "starter":
            return Line(phrase(f"{who} turned up the starter: ", e.cards, "."))
        if e.kind == "heels":
            return Line(phrase(f"{who} pegged 2 for his heels (the starter is a jack)."))
        if e.kind == "play":
            # The count is a count, never points: "for two" is kept for what is pegged.
            card = e.cards[0] if e.cards else None
            said = f" — {peg_words(e.items)}" if e.items else ""
            return Line(phrase(f"{who} played ", card, f", the count is {e.count}{said}."))
        if e.kind == "go":
            return Line(phrase(f"{who} said go at {e.count}."))
        if e.kind == "count_end":
            if not e.points:
                return None  # 31 was already told with the card that made it
            why = "the last card" if e.detail == "last card" else "the go"
            return Line(phrase(f"{who} pegged 1 for {why} (count {e.count}). New count."))
        if e.kind == "show":
            what = "crib" if e.detail == "crib" else "hand"
            shown = self._shown(e, cap(p.whose(e.seat or 0)), what)
            return Line(shown + phrase(": ", count_words(e.items), "."))
        if e.kind == "claim":
            self.last_claim = e
            m = CLAIMED.search(e.detail)
            claimed = m.group(1) if m else str(e.points)
            return Line(
                phrase(f"{who} counted {claimed} for ")
                + self._shown(
                    e,
                    "your" if e.seat == p.me else "the",
                    "crib" if e.detail.startswith("crib") else "hand",
                )
                + phrase(".")
            )
        if e.kind == "reveal":
            what = "crib" if e.detail == "crib" else "hand"
            self.last_claim = e  # the claimant, when the claim came in an earlier mail
            owner = cap(p.whose(e.seat or 0))
            return Line(phrase(f"{owner} {what} makes {count_words(e.items)}."))
        if e.kind == "correction":
            claimant = p.who(self.last_claim.seat) if self.last_claim else "the count"
            return Line(
                phrase(
                    f"{cap(claimant)} counted {e.points} too many, so {p.who(e.seat)} "
                    f"pegged {e.points}."
                )
            )
        if e.kind == "muggins":
            claimant = p.who(self.last_claim.seat) if self.last_claim else "the count"
            if e.points:
                return Line(phrase(f"Muggins! {who} pegged the {e.points} that {claimant} missed."))
            return Line(phrase(f"{who} called muggins, but {claimant} missed nothing."))
        if e.kind == "resign":
            if e.detail == "resign":
                return Line(phrase(f"{who} resigned."))
            return Line(phrase(f"{who} ran out of time and forfeited."))
        if e.kind == "game_over":
            if e.detail == "target" and e.side is not None:
                reached = f"{cap(p.side(e.side))} reached {self.view.target}: game over."
                return Line(phrase(reached))
            return None
        return None

    def _draw(self, e: Event) -> Line:
        p = self.p
        seats = self.contenders if len(self.contenders) == len(e.cards) else []
        if not seats:
            return Line(phrase("Cut for the first deal: ", e.cards, "."))
        cuts: list[Part] = ["Cut for the first deal: "]
        for i, (seat, card) in enumerate(zip(seats, e.cards, strict=True)):
            cuts.extend([", " if i else "", cap(p.who(seat)), " ", card])
        low = min(c.rank for c in e.cards)
        lowest = [s for s, c in zip(seats, e.cards, strict=True) if c.rank == low]
        if len(lowest) > 1:
            self.contenders = lowest
            cuts.append(
                f" — a tie for low card; {join_words([p.who(s) for s in lowest])} cut again."
            )
        else:
            self.contenders = list(range(self.view.players))
            cuts.append(" — low card deals.")
        return Line(tuple(cuts))
