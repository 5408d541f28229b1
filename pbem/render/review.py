"""A finished game's review in words, for the game-over mail and the replay page.

`review_text` turns an `engine.review.GameReview` (one seat's decisions beside the hard
computer's, built from that seat's own views) into phrases: a summary with the total
given away, the three costliest decisions each explained in a cribbage player's words,
and one line a hand with every discard and play. It names only the cards the review
holds — the seat's own and the cards played to the count — so it shows nothing the
player could not see when they decided.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine import Card
from engine.review import DiscardDecision, GameReview, PlayDecision
from engine.scoring import RUN, score_play
from pbem.render.scorewords import run_length, score_words, threat_words
from pbem.render.words import Part, Phrase, phrase

SAME = "✓"
"""Marks a decision the computer would have made too."""

NOTE = (
    "Points given away are averages, not what the cards did: for a discard, the kept "
    "cards' show over every starter you had not seen and the crib's expected count (as a "
    "hint reckons them); for a play, what the computer's search of the cards you had not "
    "seen expects by the end of that hand's play. Built from your own cards only."
)


@dataclass(frozen=True)
class ReviewText:
    """A review in phrases: the summary, the costliest decisions explained, a line for
    each hand, and how the points are reckoned."""

    summary: Phrase
    costliest_title: str
    costliest: tuple[Phrase, ...]
    hands: tuple[Phrase, ...]
    note: str = NOTE


def _points(value: float) -> str:
    return f"{value:.1f} point" + ("" if f"{value:.1f}" == "1.0" else "s")


def _crib_of(d: DiscardDecision, seat: int, names: Sequence[str]) -> str:
    if d.dealer == seat:
        return "your crib"
    if d.own_crib:
        return f"your side's crib ({names[d.dealer]} deals)"
    return f"{names[d.dealer]}'s crib"


def _feeds(cards: Sequence[Card]) -> str:
    """Why cards help a crib, in a player's words ("" when nothing stands out)."""
    a, b = cards[0], cards[-1]
    if len(cards) == 2 and a.rank == b.rank:
        return "a pair is 2 in the crib before the starter is even cut"
    if len(cards) == 2 and a.value + b.value == 15:
        return "cards that make fifteen are 2 in the crib already"
    if any(c.rank == 5 for c in cards):
        return "a five is the best card a crib can get"
    if len(cards) == 2 and abs(a.rank - b.rank) <= 2:
        return "cards that touch help the crib to a run"
    return ""


def discard_why(d: DiscardDecision, seat: int, names: Sequence[str]) -> Phrase:
    """``Hand 3: you kept 5♥ 5♠ 6♦ J♣ and laid away 9♠ K♥ to Bob's crib; keeping …, as the
    computer would, is worth about 1.8 points more a hand — the crib: …``."""
    made, hard = d.made, d.computer
    crib = _crib_of(d, seat, names)
    hand_gain = hard.hand - made.hand
    crib_gain = hard.crib - made.crib
    if crib_gain >= hand_gain:
        why = _feeds(made.laid_away) if not d.own_crib else ""
        if d.own_crib:
            why = f"your own crib expects {made.crib:.1f} with yours against {hard.crib:.1f}"
        elif why:
            why = f"{why}: {crib} expects {-made.crib:.1f} with yours against {-hard.crib:.1f}"
        else:
            why = f"{crib} expects {-made.crib:.1f} with yours against {-hard.crib:.1f}"
    else:
        why = f"the hand kept shows {made.hand:.1f} on average against {hard.hand:.1f}"
    return phrase(
        f"Hand {d.hand_no}: you kept ",
        made.kept,
        " and laid away ",
        made.laid_away,
        f" to {crib}; keeping ",
        hard.kept,
        " and laying away ",
        hard.laid_away,
        f", as the computer would, is worth about {_points(d.given_away)} more a hand — {why}.",
    )


def _scores(cards: Sequence[Card]) -> str:
    items = score_play(list(cards))
    kinds = tuple(i.kind for i in items)
    points = sum(i.points for i in items)
    run = run_length(kinds, points) if RUN in kinds else 0
    return score_words(kinds, points, run)


def play_why(d: PlayDecision, names: Sequence[str]) -> Phrase:
    """``Hand 5, count 11 on 7♣ 4♥: you played 8♥ (19); 5♠, as the computer would, is
    about 0.9 points better by the end of the play — after your 8♥, an 8 makes a pair for
    2 (Bob holds one: about 20%).``"""
    after = d.count + d.made.value
    why: tuple[Part, ...]
    if d.computer_points > d.made_points:
        why = (
            d.computer,
            f" makes {_scores([*d.count_cards, d.computer])} at once",
        )
    elif d.threat is not None and d.answering is not None and d.threat.points >= 2:
        why = ("after your ", d.made, f", {threat_words(d.threat, names[d.answering])}")
    else:
        why = (
            d.computer,
            " keeps the better cards for later in the play",
        )
    where: tuple[Part, ...] = (
        (f"Hand {d.hand_no}, count {d.count} on ", *phrase(d.count_cards))
        if d.count_cards
        else (f"Hand {d.hand_no}, leading",)
    )
    return phrase(
        where,
        ": you played ",
        d.made,
        f" ({after}); ",
        d.computer,
        f", as the computer would, is about {_points(d.given_away)} better by the end of "
        "the play — ",
        why,
        ".",
    )


def _mark(given: float, computer: Sequence[Card], same: bool) -> Phrase:
    if same:
        return phrase("\u00a0", SAME)  # a no-break space: the mark stays by its card
    if given < 0.05:
        return phrase(" (computer ", computer, ": as good)")
    return phrase(" (computer ", computer, f", −{given:.1f})")


def hand_lines(review: GameReview) -> tuple[Phrase, ...]:
    """One line a hand: its discard and its plays with a choice, each marked ✓ (the
    computer's choice too) or with the computer's and the points given away."""
    lines: list[Phrase] = []
    hands = sorted({d.hand_no for d in review.decisions})
    for hand in hands:
        parts: list[Part] = [f"Hand {hand}: "]
        mine = [d for d in review.decisions if d.hand_no == hand]
        discards = [d for d in mine if isinstance(d, DiscardDecision)]
        plays = [d for d in mine if isinstance(d, PlayDecision)]
        for d in discards:
            parts += ["laid away ", *phrase(d.made.laid_away)]
            parts += _mark(d.given_away, d.computer.laid_away, d.matched)
        if plays:
            parts.append("; played " if discards else "played ")
            for i, p in enumerate(plays):
                if i:
                    parts.append(", ")
                parts += [p.made, *_mark(p.given_away, (p.computer,), p.matched)]
        lines.append(tuple(parts))
    return tuple(lines)


def review_text(review: GameReview, names: Sequence[str]) -> ReviewText | None:
    """The review in words for its seat (``names``: each seat's name; the seat's own is
    not used: it is "you"); None when the seat made no decision."""
    if not review.decisions:
        return None
    discards, plays = review.discards, review.plays
    given_d = sum(d.given_away for d in discards)
    given_p = sum(d.given_away for d in plays)
    summary = phrase(
        f"Your {len(review.decisions)} decisions beside the {review.level} computer's: "
        f"you chose as it would at {review.matched} of them. About "
        f"{_points(review.total)} given away in all — {given_d:.1f} in your "
        f"{len(discards)} discards, {given_p:.1f} in your {len(plays)} plays with a "
        "choice (a play with one card to choose is not counted)."
    )
    top = review.costliest()
    explained = tuple(
        discard_why(d, review.seat, names) if isinstance(d, DiscardDecision) else play_why(d, names)
        for d in top
    )
    title = (
        "Every decision was the computer's own: nothing to explain."
        if not top
        else "The costliest decision"
        if len(top) == 1
        else f"The {len(top)} costliest decisions"
    )
    return ReviewText(summary, title, explained, hand_lines(review))


__all__ = ["NOTE", "SAME", "ReviewText", "discard_why", "hand_lines", "play_why", "review_text"]
