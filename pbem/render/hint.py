"""A hint in words: the discards or plays open to the player, and how their last discard
compared with the best one.

The service hands over an `Advice` (analyses from `engine.analysis`, built from the
player's own views) and the player's current view; nothing else reaches the mail, so a
hint cannot show another player's hidden cards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from engine import Action, Card, Discard, PlayerView
from engine.analysis import (
    DiscardAnalysis,
    DiscardOption,
    DiscardReview,
    PlayAnalysis,
    PlayOption,
)
from engine.scoring import RUN
from pbem.render.context import MailContext, RenderedMail
from pbem.render.links import Link, discard_link
from pbem.render.mail import _render
from pbem.render.page import build_page, titled
from pbem.render.scorewords import run_length, score_words, threat_words
from pbem.render.words import People, Phrase, phrase, plain

SHOWN = 6
"""How many discards the table shows (the best ones)."""


@dataclass(frozen=True)
class Review:
    """One's latest discard beside the best one of that deal."""

    hand_no: int
    holding: tuple[Card, ...]
    review: DiscardReview


@dataclass(frozen=True)
class Advice:
    """What a hint is made of (every part optional)."""

    discard: DiscardAnalysis | None = None
    play: PlayAnalysis | None = None
    suggested: Action | None = None  # the reply line's move (the computer's choice)
    must_go: bool = False
    review: Review | None = None


@dataclass(frozen=True)
class HintTable:
    """A table of discards: the header, each row's cells, and which rows to mark."""

    header: tuple[str, ...]
    rows: tuple[tuple[Phrase, ...], ...]
    marks: tuple[str, ...]  # per row: "best", "yours", "best yours" or ""
    text: tuple[str, ...]  # the table laid out in plain text, header first
    links: tuple[Link, ...] = ()  # per row, the one-click discard (HTML only), or none


@dataclass(frozen=True)
class HintSection:
    """One part of a hint: a heading, lines, an optional table, lines after it."""

    heading: str
    lines: tuple[Phrase, ...] = ()
    table: HintTable | None = None
    after: tuple[Phrase, ...] = ()


# -- words --------------------------------------------------------------------------


def _signed(value: float) -> str:
    return f"{value:+.1f}".replace("-", "−")


def _number(value: float) -> str:
    return f"{value:.1f}"


# -- discards -------------------------------------------------------------------------


def discard_table(
    analysis: DiscardAnalysis,
    crib_owner: str,
    show: int = SHOWN,
    yours: Sequence[Card] | None = None,
    answer: tuple[str, str] | None = None,
) -> HintTable:
    """The best ``show`` discards (and ``yours`` below them when it is not among them);
    with ``answer`` (the reply address and the mail's subject) each row also lays its
    cards away in one click."""
    options = list(analysis.options[:show])
    mine = analysis.option_for(yours) if yours is not None else None
    if mine is not None and mine not in options:
        options.append(mine)
    header = ("", "Keep", "Lay away", "Hand", f"Crib ({crib_owner})", "Play", "Total")
    rows: list[tuple[Phrase, ...]] = []
    marks: list[str] = []
    for option in options:
        mark = " ".join(
            word
            for word, on in (("best", option is analysis.best), ("yours", option is mine))
            if on
        )
        marks.append(mark)
        rank = standing(analysis, option)
        rows.append(
            (
                phrase(f"{rank}."),
                phrase(option.kept),
                phrase(option.laid_away),
                phrase(_number(option.hand)),
                phrase(_signed(option.crib)),
                phrase(_signed(option.pegging)),
                phrase(_number(option.total)),
            )
        )
    links: tuple[Link, ...] = ()
    if answer is not None:
        reply_to, subject = answer
        links = tuple(discard_link(reply_to, subject, o.laid_away) for o in options)
    text = _text_table(header, rows, marks)
    return HintTable(header, tuple(rows), tuple(marks), text, links)


def standing(analysis: DiscardAnalysis, option: DiscardOption) -> int:
    """1 + how many discards are worth more than ``option`` (equal ones share a place)."""
    return 1 + sum(1 for o in analysis.options if o.total > option.total + 1e-9)


def _text_table(
    header: Sequence[str], rows: Sequence[Sequence[Phrase]], marks: Sequence[str]
) -> tuple[str, ...]:
    """The table in plain text: cards left-aligned, numbers right-aligned; the best
    row marked ``>``, the player's own ``*``."""
    cells = [list(header)] + [[plain(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = []
    for n, row in enumerate(cells):
        mark = marks[n - 1] if n else ""
        lead = ">" if "best" in mark else "*" if "yours" in mark else " "
        parts = [
            cell.ljust(widths[i]) if i in (1, 2) or n == 0 else cell.rjust(widths[i])
            for i, cell in enumerate(row)
        ]
        out.append(f"{lead} " + "  ".join(parts).rstrip())
    return tuple(out)


def _option_words(option: DiscardOption) -> str:
    return (
        f"hand {_number(option.hand)}, crib {_signed(option.crib)}, "
        f"play {_signed(option.pegging)}: {_number(option.total)} in all"
    )


def discard_section(
    view: PlayerView,
    p: People,
    analysis: DiscardAnalysis,
    suggested: Action | None,
    answer: tuple[str, str] | None = None,
) -> HintSection:
    owner = "yours" if analysis.own_crib else p.whose(view.dealer)
    if view.partner is not None and view.dealer == view.partner:
        owner = f"{p.whose(view.dealer)}, your side's"
    need = view.must_discard
    cards = "1 card" if need == 1 else f"{need} cards"
    best = analysis.best
    lines: list[Phrase] = [
        phrase(
            f"There are {len(analysis.options)} ways to lay away {cards} from ",
            view.holding,
            f"; the best {min(SHOWN, len(analysis.options))}, in expected points a hand:",
        )
    ]
    after: list[Phrase] = [
        phrase(
            "Best: lay away ",
            best.laid_away,
            " and keep ",
            best.kept,
            f" — {_option_words(best)}.",
        ),
        phrase(
            f"Hand: the mean of the kept cards' points over the {52 - len(view.holding)} "
            "starters you have not seen (exact). Crib: the mean points of a crib holding "
            "the cards laid away, its other cards laid away as players do (added for "
            "your crib, taken off for an opponent's). "
            "Play: a rough estimate of what the kept cards are worth in the play (pairs, "
            "low cards, neighbouring ranks; fives held by the pone)."
        ),
    ]
    if isinstance(suggested, Discard) and set(suggested.cards) != set(best.laid_away):
        mine = analysis.option_for(suggested.cards)
        after.append(
            phrase(
                "The reply line suggests laying away ",
                mine.laid_away,
                f" (the computer's choice, which leaves the play aside: {_option_words(mine)}).",
            )
        )
    table = discard_table(analysis, owner, answer=answer if view.must_discard else None)
    return HintSection("your discard", tuple(lines), table, tuple(after))


def review_section(view: PlayerView, p: People, review: Review) -> HintSection:
    r = review.review
    analysis = r.analysis
    made, best = r.made, analysis.best
    when = "this hand" if review.hand_no == view.hand_no else f"hand {review.hand_no}"
    crib = "your crib" if analysis.own_crib else "an opponent's crib"
    lines: list[Phrase] = [
        phrase(
            f"In {when} you held ",
            review.holding,
            " and laid away ",
            made.laid_away,
            f" to {crib}.",
        )
    ]
    n = len(analysis.options)
    place = standing(analysis, made)
    if place == 1 or r.given_away < 0.05:
        lines.append(
            phrase(
                f"That was the best of the {n} ways ({_option_words(made)}): no points given away."
            )
        )
    else:
        lines.append(
            phrase(
                f"That ranked {_ordinal(place)} of {n}: {_number(made.total)} expected points, "
                "against ",
                f"{_number(best.total)} for laying away ",
                best.laid_away,
                " (keeping ",
                best.kept,
                f") — about {_number(r.given_away)} points given away on average.",
            )
        )
    owner = "yours" if analysis.own_crib else "theirs"
    table = discard_table(analysis, owner, show=3, yours=made.laid_away)
    return HintSection("your last discard", tuple(lines), table)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# -- the play -------------------------------------------------------------------------


def play_line(option: PlayOption, answering: str | None) -> Phrase:
    """``7♣: count 22; leaves the count at 22: an 9 makes 31 for 2 (…)``."""
    parts: list[str] = []
    if option.points:
        run = run_length(option.kinds, option.points) if RUN in option.kinds else 0
        parts.append(f"makes {score_words(option.kinds, option.points, run)}")
    if option.count == 31:
        parts.append("ends the count at 31: a new count starts")
    elif answering is None:
        parts.append(f"leaves the count at {option.count}; no opponent can answer it now")
    elif option.threats:
        worst = option.threats[0]
        said = f"leaves the count at {option.count}: {threat_words(worst, answering)}"
        for t in option.threats[1:2]:
            said += f"; {threat_words(t, answering)}"
        parts.append(said)
    else:
        parts.append(
            f"leaves the count at {option.count}: no card {answering} may hold scores on it"
        )
    return phrase(option.card, ": " + "; ".join(parts) + ".")


def play_section(p: People, analysis: PlayAnalysis, suggested: Action | None) -> HintSection:
    answering = p.who(analysis.answering) if analysis.answering is not None else None
    best = analysis.best
    lines: list[Phrase] = [play_line(best, answering)]
    why = (
        f"Why: it makes {best.points if best.points else 'nothing'} now"
        + (
            f" and gives away about {_number(best.risk)} on {answering}'s best answer"
            if answering
            else ""
        )
        + f"; reckoning also your own answers and the go, it is worth {_signed(best.value)}"
    )
    others = [o for o in analysis.options if o is not best]
    if others:
        runner = max(others, key=lambda o: o.value)
        why += ", against " + f"{_signed(runner.value)} for "
        lines.append(phrase(why, runner.card, "."))
    else:
        lines.append(phrase(why + ": it is the only card you can play."))
    lines.append(
        phrase(
            "The chances: the cards you have not seen (neither in your hand nor on the "
            "table), dealt at random, narrowed by any go said this hand."
        )
    )
    rest = tuple(play_line(o, answering) for o in others)
    heading = "your play"
    return HintSection(
        heading,
        (phrase("Suggested: play ", best.card, "."), *lines),
        None,
        ((phrase("The other cards you could play:"), *rest) if rest else ()),
    )


# -- the mail -------------------------------------------------------------------------


def hint_sections(
    view: PlayerView, ctx: MailContext, advice: Advice, subject: str = ""
) -> tuple[HintSection, ...]:
    """The hint's parts; with ``ctx.reply_to`` (and the mail's ``subject``) the rows of
    a discard table for the discard to make now are one-click answers too."""
    p = People(view, ctx)
    out: list[HintSection] = []
    answer = (ctx.reply_to, subject) if ctx.reply_to and not ctx.paused else None
    if advice.discard is not None:
        out.append(discard_section(view, p, advice.discard, advice.suggested, answer))
    elif advice.play is not None:
        out.append(play_section(p, advice.play, advice.suggested))
    elif advice.must_go:
        out.append(
            HintSection(
                "your play",
                (phrase(f"No card of yours fits under 31 (the count is {view.count}): say go."),),
            )
        )
    if advice.review is not None:
        out.append(review_section(view, p, advice.review))
    if not out:
        out.append(
            HintSection(
                "nothing to advise yet",
                (phrase("You have no move to make now and no discard to look back on."),),
            )
        )
    return tuple(out)


def render_hint(
    view: PlayerView, ctx: MailContext, advice: Advice, templates: Path | None = None
) -> RenderedMail:
    """The hint mail: advice on the recipient's move (or last discard), their cards,
    and the reply line."""
    if advice.discard is not None:
        what = "your discard"
    elif advice.play is not None or advice.must_go:
        what = "your play"
    else:
        what = "your last discard"
    subject, state = titled(ctx, f"Hint: {what}")
    page = build_page("hint", view, ctx, subject, news=False, state=state)
    sections = hint_sections(view, ctx, advice, subject)
    if page.prompt is not None and any(s.table and s.table.links for s in sections):
        # The table's rows are the discards to click: the prompt need not offer them again.
        page = replace(
            page,
            prompt=replace(page.prompt, links=(), link_note="", grid=(), reply_link=None),
        )
    return _render(page, "hint", templates, sections=sections)
