"""What the recipient may do now, and how to reply; or whom the game waits for."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from engine import DISCARD, GAME_OVER, PEGGING, SHOW, Action, Card, Discard, Play, PlayerView
from engine.computer import decide
from pbem.render.context import MailContext
from pbem.render.links import GridRow, Link
from pbem.render.narrate import CLAIMED
from pbem.render.words import People, Phrase, either, join_words, phrase, seats_of


@dataclass(frozen=True)
class Prompt:
    """What the recipient may do now (``mine``), or whom the game waits for.

    ``showing`` (muggins games, in the show) names the hand or crib being counted
    now, its cards face up and the starter, with the count when one is waiting
    for an answer. ``suggested`` holds the cards of the reply line's discard or play
    (a game that gives hints: the computer's choice).
    ``links`` are the answers as one-click ``mailto:`` links (the HTML part's;
    `pbem.render.links`), ``link_note`` what to know of them beyond a click.
    """

    mine: bool
    headline: Phrase
    replies: tuple[Phrase, ...] = ()
    notes: tuple[Phrase, ...] = ()
    showing: Phrase = ()
    suggested: tuple[Card, ...] = ()
    links: tuple[Link, ...] = ()
    link_note: str = ""
    # Two cards to lay away from six: the fifteen pairs as a grid of links.
    grid: tuple[GridRow, ...] = ()
    # The reply line's suggested move (a game that gives hints) as one click.
    reply_link: Link | None = None


def _notes(*notes: Phrase | None) -> tuple[Phrase, ...]:
    return tuple(n for n in notes if n)


def _typed(verb: str, cards: Sequence[Card]) -> Phrase:
    """``Plain letters work too: "play 7c".`` (only ever the recipient's own cards)."""
    return phrase(f'Plain letters work too: "{verb} {" ".join(c.ascii.lower() for c in cards)}".')


def _letters(cards: Sequence[Card]) -> Phrase:
    """``Plain letters work too: 2h 5c 10d.`` (the recipient's own cards, none chosen)."""
    return phrase(f"Plain letters work too: {' '.join(c.ascii.lower() for c in cards)}.")


_HOW_MANY = {1: "one", 2: "two"}

SUGGESTING = "medium"
"""The level whose choice the reply line offers, in a game that gives hints (never
simply the first legal move); without hints the reply line lists the legal choices."""


def suggested_action(view: PlayerView) -> Action | None:
    """The move the reply line offers: the computer player's choice (``medium``), decided
    from ``view`` alone — what the recipient may see — with a random generator seeded
    from that view, so the same view always suggests the same move."""
    if not (view.my_turn and view.legal) or view.outcome is not None:
        return None
    seed = f"{view.hand_no}/{view.phase}/{' '.join(c.ascii for c in view.holding)}/{view.count}"
    return decide(view, random.Random(seed), SUGGESTING)


def build_prompt(view: PlayerView, p: People, ctx: MailContext) -> Prompt | None:
    hint = phrase(ctx.reply_hint) if ctx.reply_hint else None
    waiting = join_words([p.who(s) for s in view.to_act])
    if view.phase == GAME_OVER or view.outcome is not None:
        return None
    crib = "your own crib" if view.dealer == p.me else f"{p.whose(view.dealer)} crib"
    if view.phase == DISCARD:
        need = view.must_discard
        if need:
            cards = "1 card" if need == 1 else f"{need} cards"
            headline = phrase(f"Your turn: lay away {cards} to {crib}")
            choose = phrase(f"(choose {need} of your {len(view.holding)} cards for {crib})")
            if not ctx.suggest:
                # No hints in this game: the choices, and no one's choice among them.
                how_many = _HOW_MANY.get(need, str(need))
                return Prompt(
                    True,
                    headline,
                    (phrase(f"discard {how_many} of: ", view.holding),),
                    _notes(choose, _letters(view.holding), hint),
                )
            best = suggested_action(view)
            example = best.cards if isinstance(best, Discard) else view.holding[:need]
            return Prompt(
                True,
                headline,
                (phrase("discard ", example),),
                _notes(choose, _typed("discard", example), hint),
                suggested=tuple(example),
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
            verb = "play a card" if view.count else "lead a card"
            headline = phrase(f"Your turn: {verb} — {count}")
            if not ctx.suggest and len(view.playable) > 1:
                # No hints in this game: the cards that may be played, none chosen.
                return Prompt(
                    True,
                    headline,
                    (phrase("play one of: ", view.playable),),
                    _notes(_letters(view.playable), hint),
                )
            best = suggested_action(view) if ctx.suggest else None
            first = best.card if isinstance(best, Play) else view.playable[0]
            can = (
                phrase("(", view.playable[0], " is the only card you can play)")
                if len(view.playable) == 1
                else phrase("(you can play ", either(view.playable), ")")
            )
            return Prompt(
                True,
                headline,
                (phrase("play ", first),),
                _notes(can, _typed("play", (first,)), hint),
                suggested=(first,) if best is not None else (),
            )
        return Prompt(False, phrase(f"Waiting for {waiting} to play — {count}"))
    if view.phase == SHOW:
        return _show_prompt(view, p, hint, waiting)
    return None


def _show_prompt(view: PlayerView, p: People, hint: Phrase | None, waiting: str) -> Prompt:
    """Muggins games: count a hand, or answer someone's count."""
    counter, what = view.show_entry if view.show_entry else (view.dealer, "hand")
    mine = seats_of(view, view.my_side)
    opponents = join_words([p.who(s) for s in range(view.players) if s not in mine])
    counting = _counting(view, p, counter, what)
    if view.awaiting_muggins:
        claimed = claim_for(view, counter, what)
        if claimed is not None:
            said = f" — {p.who(counter)} counted {claimed}"
        else:
            said = f" — {p.whose(counter)} count is waiting for muggins or accept"
        showing = counting + phrase(said)
        if view.may_call_muggins:
            rule = phrase(
                "Muggins takes any points the count missed; if it missed nothing, "
                "it costs you nothing."
            )
            return Prompt(
                True,
                phrase(f"Your turn: accept {p.whose(counter)} count, or call muggins"),
                (phrase("accept"), phrase("muggins")),
                _notes(rule, hint),
                showing,
            )
        return Prompt(
            False,
            phrase(f"Waiting for {waiting} to accept {p.whose(counter)} count or call muggins"),
            showing=showing,
        )
    if view.may_claim:
        rule = phrase(
            f"Put your total for N. Muggins is on: {opponents} may take any points you "
            f"miss, and a count too high gives {opponents} the difference."
        )
        return Prompt(
            True,
            phrase(f"Your turn: count your {what}"),
            (phrase("count N"),),
            _notes(rule, hint),
            counting + phrase(' — reply "count N"'),
        )
    return Prompt(
        False,
        phrase(f"Waiting for {waiting} to count {p.whose(counter)} {what}"),
        showing=counting,
    )


def _counting(view: PlayerView, p: People, counter: int, what: str) -> Phrase:
    """``Counting now: Alice's hand 5♥ 5♠ J♦ 4♣ + starter 6♦`` (the cards lie face up)."""
    cards = view.showing
    if not cards and what == "hand" and counter == p.me:
        cards = view.kept  # a view without ``showing``: one's own hand is known anyway
    return phrase(
        f"Counting now: {p.whose(counter)} {what}",
        " " if cards else None,
        cards or None,
        *((" + starter ", view.starter) if view.starter is not None else ()),
    )


def claim_for(view: PlayerView, counter: int, what: str) -> str | None:
    """The count claimed for the hand or crib being counted, when ``view.events``
    reaches back to its claim (a status or reminder mail starts after it)."""
    latest = next(
        (e for e in reversed(view.events) if e.kind == "claim" and e.hand == view.hand_no),
        None,
    )
    if latest is None or latest.seat != counter or not latest.detail.startswith(f"{what}:"):
        return None
    m = CLAIMED.search(latest.detail)
    return m.group(1) if m else str(latest.points)
