"""Player views → emails: a subject, a plain-text part and an HTML part.

Every mail is built from one ``PlayerView`` (what the recipient's seat may
see) and a ``MailContext`` (names, notices, hints the service provides), so a
mail cannot show another player's hidden cards: they are not in its input.
Events are narrated only when they are public or private to the recipient.

This module turns the view into small presentation values (phrases of text
and cards, a peg board, a prompt saying what to reply); the Jinja2 templates
in ``templates/`` lay them out, once as plain text (at most 78 columns where
the words allow) and once as HTML (autoescaped, inline styles only).

Build the view for a turn mail with ``player_view(game, seat, since)`` and pass
the same ``since`` as ``MailContext.since_event``: ``view.events`` are the
moves the mail reports as "since your last mail".
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, pass_eval_context
from jinja2.nodes import EvalContext
from markupsafe import Markup, escape

from engine import DISCARD, GAME_OVER, PEGGING, SHOW, Card, Event, PlayerView, Suit
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

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
WIDTH = 78

NOTICE_LABELS = {
    "applied": "done",
    "refused": "refused",
    "ignored": "ignored",
    "ambiguous": "unclear",
    "info": "note",
}


@dataclass(frozen=True)
class Notice:
    """The result of one of the recipient's own commands (or a note from the service).

    ``status`` is one of ``applied``, ``refused``, ``ignored``, ``ambiguous``,
    ``info``; ``legal`` says what would have been allowed, for refusals.
    """

    status: str
    command: str
    message: str
    legal: str | None = None


@dataclass(frozen=True)
class MailContext:
    """What the service knows beyond the view.

    ``names`` holds a display name per seat (the recipient is always "you");
    ``reply_hint`` is printed under the reply line; ``notices`` report the
    recipient's own commands; ``since_event`` is the ``since`` the view was
    built with (0: the mail tells the game from the start); ``archive_hint``
    tells how to replay a finished game; ``paused`` marks a game on hold.
    """

    game_id: int
    names: tuple[str, ...]
    recipient_seat: int
    reply_hint: str
    notices: tuple[Notice, ...] = ()
    since_event: int = 0
    archive_hint: str | None = None
    paused: bool = False


@dataclass(frozen=True)
class RenderedMail:
    """One mail: a one-line subject, a plain-text part and an HTML part."""

    subject: str
    text: str
    html: str


# -- presentation values ----------------------------------------------------------------

Part = str | Card
Phrase = tuple[Part, ...]


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


@dataclass(frozen=True)
class Line:
    """One line of a narrative; a heading starts a new hand."""

    phrase: Phrase
    heading: bool = False


@dataclass(frozen=True)
class Prompt:
    """What the recipient may do now (``mine``), or whom the game waits for."""

    mine: bool
    headline: Phrase
    replies: tuple[Phrase, ...] = ()
    notes: tuple[Phrase, ...] = ()


@dataclass(frozen=True)
class Track:
    label: str
    color: str
    segments: tuple[tuple[str, str], ...]  # (kind: hole|front|back, characters)


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


@dataclass(frozen=True)
class NoticeView:
    label: str
    status: str
    command: str
    message: str
    legal: str | None


@dataclass(frozen=True)
class Page:
    """Everything one mail shows; every field but ``kind`` and ``title`` may be empty."""

    kind: str
    subject: str
    title: Phrase
    matchup: str
    score: str = ""
    intro: tuple[Phrase, ...] = ()
    notices: tuple[NoticeView, ...] = ()
    prompt: Prompt | None = None
    result: tuple[Phrase, ...] = ()
    news_title: str = ""
    news: tuple[Line, ...] = ()
    table: tuple[tuple[str, Phrase], ...] = ()
    hand: tuple[tuple[str, Phrase], ...] = ()
    board: Board | None = None
    footer: tuple[str, ...] = ()


# -- names ------------------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")
_SIDE_COLORS = ("#1d5fa8", "#2e7d32", "#a35200")
RED = "#c62828"


def clean_name(name: str, limit: int = 40) -> str:
    """A display name safe for one line: no control characters, not too long."""
    text = " ".join(_CONTROL.sub(" ", name).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _join(words: Sequence[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


class _People:
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
        return _join([self.who(s) for s in seats])

    def side_label(self, side: int) -> str:
        seats = sorted(self.side_seats(side), key=lambda s: (s != self.me, s))
        return " & ".join(_cap(self.who(s)) for s in seats)

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
        mine = next((s.side for s in self.sides if self.me in s.seats), self.me)
        order = [mine] + [s.side for s in self.sides if s.side != mine]
        return _cap(" vs ".join(self.side(side) for side in order))


# -- narrating events -------------------------------------------------------------------

_CLAIMED = re.compile(r"claimed (\d+)")


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


class _Narrator:
    """Events in words, from the recipient's side of the table."""

    def __init__(self, view: PlayerView, people: _People) -> None:
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
        who = _cap(p.who(e.seat))
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
            card = e.cards[0] if e.cards else None
            said = f" — {peg_words(e.items)}" if e.items else ""
            return Line(phrase(f"{who} played ", card, f" for {e.count}{said}."))
        if e.kind == "go":
            return Line(phrase(f"{who} said go at {e.count}."))
        if e.kind == "count_end":
            if not e.points:
                return None  # 31 was already told with the card that made it
            why = "the last card" if e.detail == "last card" else "the go"
            return Line(phrase(f"{who} pegged 1 for {why} (count {e.count}). New count."))
        if e.kind == "show":
            what = "crib" if e.detail == "crib" else "hand"
            shown = self._shown(e, _cap(p.whose(e.seat or 0)), what)
            return Line(shown + phrase(": ", count_words(e.items), "."))
        if e.kind == "claim":
            self.last_claim = e
            m = _CLAIMED.search(e.detail)
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
            owner = _cap(p.whose(e.seat or 0))
            return Line(phrase(f"{owner} {what} makes {count_words(e.items)}."))
        if e.kind == "correction":
            claimant = p.who(self.last_claim.seat) if self.last_claim else "the count"
            return Line(
                phrase(
                    f"{_cap(claimant)} counted {e.points} too many, so {p.who(e.seat)} "
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
                reached = f"{_cap(p.side(e.side))} reached {self.view.target}: game over."
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
            cuts.extend([", " if i else "", _cap(p.who(seat)), " ", card])
        low = min(c.rank for c in e.cards)
        lowest = [s for s, c in zip(seats, e.cards, strict=True) if c.rank == low]
        if len(lowest) > 1:
            self.contenders = lowest
            cuts.append(f" — a tie for low card; {_join([p.who(s) for s in lowest])} cut again.")
        else:
            self.contenders = list(range(self.view.players))
            cuts.append(" — low card deals.")
        return Line(tuple(cuts))


# -- the board --------------------------------------------------------------------------

HOLE, FRONT, BACK = "·", "●", "○"
ROW = 30
GROUP = 5


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


def _board(view: PlayerView, people: _People) -> Board:
    lines: list[ScoreLine] = []
    others = iter(_SIDE_COLORS[1:])
    for s in view.scores:
        mine = view.seat in s.seats
        color = _SIDE_COLORS[0] if mine else next(others, _SIDE_COLORS[-1])
        lines.append(
            ScoreLine(
                label=clean_name(people.side_label(s.side), 18),
                color=color,
                mine=mine,
                front=s.front,
                back=s.back,
                to_go=max(view.target - s.front, 0),
            )
        )
    lines.sort(key=lambda line: not line.mine)
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
    return Board(view.target, tuple(lines), tuple(rows), width, home)


# -- what the recipient may do ----------------------------------------------------------


def _notes(*notes: Phrase | None) -> tuple[Phrase, ...]:
    return tuple(n for n in notes if n)


def _typed(verb: str, cards: Sequence[Card]) -> Phrase:
    """``Plain letters work too: "play 7c".`` (only ever the recipient's own cards)."""
    return phrase(f'Plain letters work too: "{verb} {" ".join(c.ascii.lower() for c in cards)}".')


def _prompt(view: PlayerView, p: _People, ctx: MailContext) -> Prompt | None:
    hint = phrase(ctx.reply_hint) if ctx.reply_hint else None
    waiting = _join([p.who(s) for s in view.to_act])
    if view.phase == GAME_OVER or view.outcome is not None:
        return None
    crib = "your own crib" if view.dealer == p.me else f"{p.whose(view.dealer)} crib"
    if view.phase == DISCARD:
        need = view.must_discard
        if need:
            example = view.holding[:need]
            cards = "1 card" if need == 1 else f"{need} cards"
            choose = phrase(f"(choose {need} of your {len(view.holding)} cards for {crib})")
            return Prompt(
                True,
                phrase(f"Your turn: lay away {cards} to {crib}"),
                (phrase("discard ", example),),
                _notes(choose, _typed("discard", example), hint),
            )
        done = phrase("You laid away ", view.laid_away, ".") if view.laid_away else None
        return Prompt(
            False, phrase(f"Waiting for {waiting} to lay away to the crib"), notes=_notes(done)
        )
    if view.phase == PEGGING:
        count = f"the count is {view.count}" if view.count else "a new count starts at 0"
        if view.my_turn and view.must_go:
            return Prompt(
                True,
                phrase(f"Your turn: say go — no card of yours fits under 31 (count {view.count})"),
                (phrase("go"),),
                _notes(hint),
            )
        if view.my_turn and view.playable:
            first = view.playable[0]
            can = (
                phrase("(", first, " is the only card you can play)")
                if len(view.playable) == 1
                else phrase("(you can play ", either(view.playable), ")")
            )
            verb = "play a card" if view.count else "lead a card"
            return Prompt(
                True,
                phrase(f"Your turn: {verb} — {count}"),
                (phrase("play ", first),),
                _notes(can, _typed("play", (first,)), hint),
            )
        return Prompt(False, phrase(f"Waiting for {waiting} to play — {count}"))
    if view.phase == SHOW:
        return _show_prompt(view, p, hint, waiting)
    return None


def _show_prompt(view: PlayerView, p: _People, hint: Phrase | None, waiting: str) -> Prompt:
    """Muggins games: count a hand, or answer someone's count."""
    counter, what = view.show_entry if view.show_entry else (view.dealer, "hand")
    mine = _seats_of(view, view.my_side)
    opponents = _join([p.who(s) for s in range(view.players) if s not in mine])
    with_starter = (" + starter ", view.starter) if view.starter else ()
    if view.awaiting_muggins:
        claim = next(
            (e for e in reversed(view.events) if e.kind == "claim" and e.hand == view.hand_no),
            None,
        )
        claimed: Phrase | None = None
        if claim is not None:
            m = _CLAIMED.search(claim.detail)
            claimed = phrase(
                f"{_cap(p.who(claim.seat))} counted {m.group(1) if m else claim.points} for ",
                f"{'your' if claim.seat == p.me else 'the'} {what}: ",
                claim.cards,
                *with_starter,
                ".",
            )
        if view.may_call_muggins:
            rule = phrase(
                "Muggins takes any points the count missed; if it missed nothing, "
                "it costs you nothing."
            )
            return Prompt(
                True,
                phrase(f"Your turn: accept {p.whose(counter)} count, or call muggins"),
                (phrase("accept"), phrase("muggins")),
                _notes(claimed, rule, hint),
            )
        return Prompt(
            False,
            phrase(f"Waiting for {waiting} to accept {p.whose(counter)} count or call muggins"),
            _notes(claimed),
        )
    if view.may_claim:
        if what == "hand":
            cards = phrase("Your hand: ", view.kept, *with_starter)
        else:
            others = view.crib_size - len(view.laid_away)
            cards = phrase(
                "Your crib: your ",
                view.laid_away,
                f" and {others} more",
                *with_starter,
                ". The other cards are turned up with your count.",
            )
        rule = phrase(
            f"Put your total for N. Muggins is on: {opponents} may take any points you "
            f"miss, and a count too high gives {opponents} the difference."
        )
        return Prompt(
            True,
            phrase(f"Your turn: count your {what}"),
            (phrase("count N"),),
            _notes(cards, rule, hint),
        )
    return Prompt(False, phrase(f"Waiting for {waiting} to count {p.whose(counter)} {what}"))


def _seats_of(view: PlayerView, side: int) -> tuple[int, ...]:
    for s in view.scores:
        if s.side == side:
            return s.seats
    return (side,)


# -- the table and the hand -------------------------------------------------------------


def _table(view: PlayerView, p: _People) -> tuple[tuple[str, Phrase], ...]:
    rows: list[tuple[str, Phrase]] = []
    if view.phase == GAME_OVER:
        return ()
    dealer = "You" if view.dealer == p.me else p.names[view.dealer]
    owner = "yours" if view.dealer == p.me else p.whose(view.dealer)
    crib = f" ({view.crib_size} card{'s' if view.crib_size != 1 else ''})" if view.crib_size else ""
    rows.append(("Dealer", phrase(f"{dealer} — the crib{crib} is {owner}")))
    rows.append(
        ("Starter", phrase(view.starter) if view.starter else phrase("turned after the discards"))
    )
    if view.phase == PEGGING:
        parts: list[Part] = [f"{view.count}" if view.count_cards else "0 — a new count"]
        if view.count_cards:
            parts.append("  (")
            for i, (seat, card) in enumerate(view.count_cards):
                parts.extend([", " if i else "", card, " ", p.who(seat)])
            parts.append(")")
        rows.append(("Count", tuple(parts)))
    order = [(view.dealer + i) % view.players for i in range(1, view.players + 1)]
    for seat in order:
        label = "You" if seat == p.me else p.names[seat]
        if view.phase == DISCARD:
            status = "still choosing" if seat in view.to_act else "has laid away"
            if seat == p.me:
                status = "still to lay away" if seat in view.to_act else "laid away"
            rows.append((label, phrase(status)))
        elif view.phase == PEGGING:
            played = [c for s, c, _ in view.plays if s == seat]
            left = view.cards_left[seat] if seat < len(view.cards_left) else 0
            state = f"{left} card{'s' if left != 1 else ''} left"
            if seat in view.to_act:
                state += ", to play"
            rows.append((label, phrase(state, "; played " if played else None, played or None)))
    return tuple(rows)


def _hand(view: PlayerView, p: _People) -> tuple[tuple[str, Phrase], ...]:
    rows: list[tuple[str, Phrase]] = []
    crib = "your crib" if view.dealer == p.me else f"{p.whose(view.dealer)} crib"
    laid = ("Laid away", phrase(view.laid_away, f"  (in {crib})")) if view.laid_away else None
    if view.phase == DISCARD:
        if view.must_discard:
            rows.append(("Holding", phrase(view.holding)))
        else:
            rows.append(("You keep", phrase(view.kept or view.holding)))
    elif view.phase == PEGGING:
        rows.append(("In hand", phrase(view.holding) if view.holding else phrase("none left")))
        if view.kept:
            rows.append(("You kept", phrase(view.kept)))
    elif view.phase == SHOW:
        if view.kept:
            rows.append(("Your hand", phrase(view.kept)))
    elif view.holding:
        rows.append(("In hand", phrase(view.holding)))
    if laid and view.phase != GAME_OVER:
        rows.append(laid)
    return tuple(rows)


# -- the end of the game ----------------------------------------------------------------


def _result(view: PlayerView, p: _People, ctx: MailContext) -> tuple[Phrase, ...]:
    out = view.outcome
    if out is None:
        return ()
    losers: list[str] = []
    for side, value in sorted(out.game_values.items()):
        if value <= 1:
            continue
        word = "lurched" if view.skunk == "lurch" else "skunked"
        if value >= 4:
            word = "double skunked"
        seats = _seats_of(view, side)
        was = "were" if len(seats) > 1 or p.me in seats else "was"
        score = out.scores[side] if side < len(out.scores) else 0
        losers.append(f"{p.side(side)} {was} {word} at {score}")
    head = f"{_cap(p.side_wins(out.winner))} {out.label}"
    if losers:
        head += f" ({'; '.join(losers)})"
    lines: list[Phrase] = []
    if out.reason != "target":
        quitter = next((e.seat for e in view.events if e.kind == "resign"), None)
        if quitter is not None:
            how = "resigned" if out.reason == "resign" else "ran out of time"
            lines.append(phrase(f"{_cap(p.who(quitter))} {how}."))
        else:
            how = "by resignation" if out.reason == "resign" else f"by {out.reason}"
            lines.append(phrase(f"The game ended {how}."))
    lines.insert(0, phrase(head + "."))
    order = sorted(range(len(out.scores)), key=lambda side: (side != out.winner, side))
    finals = ", ".join(f"{p.side_label(side)} {out.scores[side]}" for side in order)
    lines.append(phrase(f"Final score: {finals}."))
    if ctx.archive_hint:
        lines.append(phrase(f"To replay the game move by move: {ctx.archive_hint}"))
    return tuple(lines)


# -- subjects ---------------------------------------------------------------------------


def _tag(ctx: MailContext | None, label: str | None = None) -> str:
    if label:
        return f"[{clean_name(label, 30)}]"
    if ctx is None or ctx.game_id <= 0:
        return "[Cribbage]"
    return f"[Cribbage {ctx.game_id}]"


def _short(name: str) -> str:
    return clean_name(name, 20)


def _state_subject(view: PlayerView, p: _People, ctx: MailContext) -> str:
    if view.outcome is not None:
        return f"Game over — {_short(p.side_wins(view.outcome.winner))}"
    if ctx.paused:
        return f"Hand {view.hand_no} — paused"
    if view.my_turn and view.legal:
        if view.phase == DISCARD:
            what = "discard"
        elif view.phase == PEGGING:
            what = "go" if view.must_go else "play"
        elif view.awaiting_muggins:
            what = "muggins or accept"
        else:
            what = f"count your {view.show_entry[1] if view.show_entry else 'hand'}"
        return f"Hand {view.hand_no} — your turn: {what}"
    names = [_short(p.who(s)) for s in view.to_act if s != p.me]
    if not names:
        return f"Hand {view.hand_no}"
    if len(names) > 2:
        names = [*names[:1], f"{len(names) - 1} others"]
    return f"Hand {view.hand_no} — waiting for {_join(names)}"


# -- assembling -------------------------------------------------------------------------


def _notices(ctx: MailContext | None) -> tuple[NoticeView, ...]:
    if ctx is None:
        return ()
    return tuple(
        NoticeView(
            NOTICE_LABELS.get(n.status, n.status),
            n.status,
            clean_name(n.command, 60),
            n.message,
            n.legal,
        )
        for n in ctx.notices
    )


def _footer(game_over: bool = False) -> tuple[str, ...]:
    lines = (
        []
        if game_over
        else [
            'Reply "help" for the commands, "history" for the moves so far, '
            '"hand" for this mail again.'
        ]
    )
    lines.append("This mail was sent automatically; your replies are read by a program.")
    return tuple(lines)


def _title(view: PlayerView, p: _People, ctx: MailContext) -> Phrase:
    title = f"Cribbage · game {ctx.game_id}" if ctx.game_id > 0 else "Cribbage"
    if view.outcome is None:
        title += f" · hand {view.hand_no}"
    return phrase(title + f" · to {view.target}")


def _page(
    kind: str,
    view: PlayerView,
    ctx: MailContext,
    subject: str,
    *,
    news: bool = True,
    intro: tuple[Phrase, ...] = (),
    events: Sequence[Event] | None = None,
) -> Page:
    p = _People(view, ctx)
    narrated: tuple[Line, ...] = ()
    news_title = ""
    if events is not None:
        narrated = _Narrator(view, p).lines(events)
        news_title = "The game so far"
    elif news:
        narrated = _Narrator(view, p).lines(view.events)
        news_title = "Since your last mail" if ctx.since_event else "The game so far"
    if ctx.paused and view.outcome is None:
        intro = (*intro, phrase("This game is paused: moves wait until it is resumed."))
    return Page(
        kind=kind,
        subject=subject,
        title=_title(view, p, ctx),
        matchup=p.matchup(),
        score=p.score(),
        intro=intro,
        notices=_notices(ctx),
        prompt=_prompt(view, p, ctx),
        result=_result(view, p, ctx),
        news_title=news_title,
        news=narrated,
        table=_table(view, p),
        hand=_hand(view, p),
        board=_board(view, p),
        footer=_footer(view.outcome is not None),
    )


# -- template filters -------------------------------------------------------------------


def _card_html(card: Card) -> Markup:
    red = card.suit in (Suit.HEARTS, Suit.DIAMONDS)
    color = RED if red else "#1a1a1a"
    return Markup('<span style="color:{};font-weight:bold;white-space:nowrap">{}</span>').format(
        color, str(card)
    )


def _tile_html(card: Card) -> Markup:
    red = card.suit in (Suit.HEARTS, Suit.DIAMONDS)
    return Markup(
        '<span style="display:inline-block;min-width:24px;text-align:center;padding:1px 4px;'
        "margin:1px 1px;border:1px solid #cfc6b4;border-radius:4px;background:#ffffff;"
        'color:{};font-weight:bold;white-space:nowrap">{}</span>'
    ).format(RED if red else "#1a1a1a", str(card))


def _tiles_filter(value: Phrase) -> Markup:
    """HTML only: a phrase with its cards drawn as small white cards."""
    return Markup("").join(_tile_html(x) if isinstance(x, Card) else escape(x) for x in value)


@pass_eval_context
def _phrase_filter(eval_ctx: EvalContext, value: Phrase | Card | str) -> str | Markup:
    parts: Sequence[Part] = (value,) if isinstance(value, str | Card) else value
    if not eval_ctx.autoescape:
        return "".join(str(x) for x in parts)
    return Markup("").join(_card_html(x) if isinstance(x, Card) else escape(x) for x in parts)


def _wrap(text: str, first: str = "", rest: str | None = None, width: int = WIDTH) -> str:
    """Wrap plain text; lines start with ``first`` then ``rest`` (default: as wide, blank)."""
    rest = " " * len(first) if rest is None else rest
    out: list[str] = []
    for i, para in enumerate(str(text).split("\n")):
        lines = textwrap.wrap(
            para,
            width=width,
            initial_indent=first if i == 0 else rest,
            subsequent_indent=rest,
            break_long_words=False,
            break_on_hyphens=False,
        )
        out.extend(lines or [rest.rstrip()])
    return "\n".join(out)


@cache
def _environment(folder: str) -> Environment:
    env = Environment(
        loader=FileSystemLoader(folder),
        autoescape=lambda name: name is not None and name.endswith(".html"),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["phrase"] = _phrase_filter
    env.filters["tiles"] = _tiles_filter
    env.filters["wrap"] = _wrap
    env.globals["WIDTH"] = WIDTH
    env.globals["RED"] = RED
    return env


def _render(page: Page, name: str, templates: Path | None, **extra: Any) -> RenderedMail:
    env = _environment(str(templates or TEMPLATES))
    preview = ""
    if page.result:
        preview = plain(page.result[0])
    elif page.prompt is not None:
        preview = plain(page.prompt.headline)
    values = {"page": page, "preview": preview, **extra}
    text = env.get_template(f"{name}.txt").render(values)
    html = env.get_template(f"{name}.html").render(values)
    return RenderedMail(page.subject, _tidy(text), html)


def _tidy(text: str) -> str:
    """Trailing spaces off (but keep the "-- " signature line), at most one blank line."""
    lines = [line if line == "-- " else line.rstrip() for line in text.splitlines()]
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip("\n") + "\n"


_BLANKS = re.compile(r"\n{3,}")


# -- the public functions ---------------------------------------------------------------


def render_turn(view: PlayerView, ctx: MailContext, templates: Path | None = None) -> RenderedMail:
    """The mail after a move (or the game-over mail when ``view.outcome`` is set)."""
    p = _People(view, ctx)
    subject = f"{_tag(ctx)} {_state_subject(view, p, ctx)}"
    kind = "gameover" if view.outcome is not None else "turn"
    return _render(_page(kind, view, ctx, subject), "mail", templates)


def render_error(
    ctx: MailContext, view: PlayerView | None, title: str, templates: Path | None = None
) -> RenderedMail:
    """A reply to a known player whose mail could not be applied; the notices say why."""
    subject = f"{_tag(ctx)} {clean_name(title, 60)}"
    if view is None:
        page = Page(
            kind="error",
            subject=subject,
            title=phrase(clean_name(title, 70)),
            matchup="",
            notices=_notices(ctx),
            footer=_footer(),
        )
        return _render(page, "mail", templates)
    page = _page("error", view, ctx, subject, news=False, intro=(phrase(clean_name(title, 70)),))
    return _render(page, "mail", templates)


def render_help(
    ctx: MailContext | None, game_label: str, templates: Path | None = None
) -> RenderedMail:
    """The command language, with the service's reply hint when a game is known."""
    subject = f"{_tag(ctx, game_label)} How to play by mail"
    page = Page(
        kind="help",
        subject=subject,
        title=phrase(f"{clean_name(game_label, 40)}: how to play by mail"),
        matchup="",
        notices=_notices(ctx),
        footer=_footer()[1:],
    )
    return _render(page, "help", templates)


def render_history(
    view: PlayerView,
    ctx: MailContext,
    events: tuple[Event, ...],
    templates: Path | None = None,
) -> RenderedMail:
    """Every move the recipient may see so far, hand by hand, and the board now."""
    subject = f"{_tag(ctx)} The moves so far"
    page = _page("history", view, ctx, subject, events=events)
    return _render(page, "mail", templates)


def render_reminder(
    view: PlayerView, ctx: MailContext, waited: str, templates: Path | None = None
) -> RenderedMail:
    """A nudge to a player the game has waited for since ``waited`` (e.g. "2 days")."""
    p = _People(view, ctx)
    state = _state_subject(view, p, ctx)
    subject = f"{_tag(ctx)} Reminder — {state.split(' — ', 1)[-1]}"
    waited = clean_name(waited, 40)
    if view.my_turn:
        intro = phrase(f"A reminder: the game has been waiting for your move for {waited}.")
    else:
        intro = phrase(f"A reminder: the game has been quiet for {waited}.")
    page = _page("reminder", view, ctx, subject, news=False, intro=(intro,))
    return _render(page, "mail", templates)


__all__ = [
    "MailContext",
    "Notice",
    "RenderedMail",
    "render_error",
    "render_help",
    "render_history",
    "render_reminder",
    "render_turn",
]
