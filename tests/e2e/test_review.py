"""The review after a game, by mail through the Maildirs and the database (both backends):
the game-over mail (text and HTML) and its replay page review the player's own
decisions beside the hard computer's, with engine.review's numbers; against the computer
unless the player turned hints off; between people only when every one agreed to hints;
and the review names no card its player had not seen."""

from __future__ import annotations

import json
import re
from email.message import EmailMessage
from html import unescape
from typing import Any

from engine import Card, Game, parse_card
from engine.review import review_game
from pbem.demo.bots import text_of
from pbem.render.review import ReviewText, review_text
from pbem.render.words import plain
from tests.e2e.helpers import ALICE, BOB, DOMAIN, Harness

A, B = ALICE[0], BOB[0]
COMPUTER = (f"computer@{DOMAIN}", "Computer")
HEADING = "Your game, reviewed"


def flat(text: str) -> str:
    return " ".join(text.split())


def html_of(msg: EmailMessage) -> str:
    part = msg.get_body(("html",))
    assert part is not None
    return str(part.get_content())


def replay_of(msg: EmailMessage) -> tuple[str, dict[str, Any]]:
    """The attached replay page's HTML and its embedded data."""
    for part in msg.iter_attachments():
        if part.get_content_type() == "text/html":
            html = part.get_payload(decode=True).decode("utf-8")  # type: ignore[union-attr]
            found = re.search(r'id="replay-data">(.*?)</script>', html, re.S)
            assert found
            return html, json.loads(found.group(1))
    raise AssertionError("no replay page attached")


def page_review(html: str) -> str | None:
    """The words of a replay page's review section (None: the page has none)."""
    found = re.search(r'<section class="review" id="review">(.*?)</section>', html, re.S)
    return flat(unescape(re.sub(r"<[^>]+>", " ", found.group(1)))) if found else None


def says(words: ReviewText, shown: str) -> None:
    """Every line of ``words`` is in ``shown`` (spaces aside)."""
    squeezed = "".join(shown.split())
    for line in (words.summary, *words.costliest, *words.hands):
        # (Any space: a mark is kept by its card with a no-break space.)
        assert "".join(plain(line).split()) in squeezed, plain(line)


def review_part(text: str) -> str:
    """The review section of a mail's text: from its heading to the next heading."""
    start = text.index(HEADING)
    rest = text[start + len(HEADING) :]
    end = re.search(r"\n\n[A-Z][^\n]*\n-{3,}\n", rest)
    return rest[: end.start()] if end else rest


def cards_in(text: str) -> set[Card]:
    return {parse_card(t) for t in re.findall(r"(?:10|[2-9AJQK])[♣♦♥♠]", text)}


def seen_by(game: Game, seat: int) -> set[Card]:
    """Every card the seat held in the game, and every card played to a count."""
    seen: set[Card] = set()
    for e in game.events:
        if e.kind == "play" or (e.kind == "hand" and e.private_to == seat):
            seen |= set(e.cards)
    return seen


def played_out(h: Harness, game_id: int, hands: int) -> Game:
    """The players move (by mail, as a random player would) through ``hands`` hands,
    then whoever is to move resigns (``resign confirm``: a bare ``resign`` only asks)."""
    h.play_until(game_id, lambda g: g.is_over or g.hand_no > hands)
    game = h.game(game_id)
    if not game.is_over:
        h.answer(h.address_of(game_id, game.to_act()[0]), "resign confirm")
    game = h.game(game_id)
    assert game.is_over
    return game


def test_the_game_over_mail_reviews_the_game_against_the_computer(harness: Harness) -> None:
    h = harness
    game_id = h.service.new_game(
        [ALICE, COMPUTER], target=61, seed="review-e2e", computer=[1], level="hard"
    )
    h.step()
    assert h.game_row(game_id).hints
    game = played_out(h, game_id, 3)
    review = review_game(game, 0)
    assert review.decisions and review.total > 0  # a random player gives points away
    words = review_text(review, ["Alice", "Computer"])
    assert words is not None

    last = h.latest(A)
    assert "gameover" in str(last["Message-ID"])
    text, html = text_of(last), html_of(last)
    assert HEADING in text and HEADING in html
    part = flat(review_part(text))
    assert flat(plain(words.summary)) in part
    assert f"About {review.total:.1f} points given away in all" in part
    for line in (*words.costliest, *words.hands):
        assert flat(plain(line)) in part
    # The HTML part says the same (its cards drawn in bold or red).
    flat_html = flat(unescape(re.sub(r"<[^>]+>", "", html)))
    assert flat(plain(words.summary)) in flat_html
    for line in words.costliest:
        assert flat(plain(line)) in flat_html

    # The replay page shows it too, and carries engine.review's numbers.
    page, _ = replay_of(last)
    shown = page_review(page)
    assert shown is not None and HEADING in shown
    says(words, shown)

    # No card the player had not seen: only cards they held and cards played.
    named = cards_in(part)
    assert named and named <= seen_by(game, 0)
    computer_crib = set(game.laid_away(1))
    assert not named & computer_crib - {c for e in game.events if e.kind == "play" for c in e.cards}


def test_no_review_when_the_player_turned_hints_off(harness: Harness) -> None:
    h = harness
    game_id = h.service.new_game(
        [ALICE, COMPUTER], target=61, seed="review-e2e", computer=[1], level="hard"
    )
    h.step()
    h.answer(A, "hints off")
    assert not h.game_row(game_id).hints
    played_out(h, game_id, 1)
    last = h.latest(A)
    assert "gameover" in str(last["Message-ID"])
    assert HEADING not in text_of(last) and HEADING not in html_of(last)
    assert page_review(replay_of(last)[0]) is None


def test_between_people_only_when_both_agreed_to_hints(harness: Harness) -> None:
    """Without hints neither gets a review; once both sent ``hints on`` each gets their
    own (their own decisions, not the other's)."""
    h = harness
    plain_game = h.new_game((ALICE, BOB), seed="review-people")
    h.answer(A, "hints on")  # one agreement is not enough
    assert not h.game_row(plain_game).hints
    played_out(h, plain_game, 1)
    for address in (A, B):
        last = h.latest(address)
        assert "gameover" in str(last["Message-ID"])
        assert HEADING not in text_of(last) and HEADING not in html_of(last)
        assert page_review(replay_of(last)[0]) is None

    agreed = h.new_game((ALICE, BOB), seed="review-people")
    h.answer(A, "hints on")
    h.answer(B, "hints on")
    assert h.game_row(agreed).hints
    game = played_out(h, agreed, 1)
    for seat, address, names in ((0, A, ["Alice", "Bob"]), (1, B, ["Alice", "Bob"])):
        last = h.latest(address)
        review = review_game(game, seat)
        words = review_text(review, names)
        assert words is not None
        assert flat(plain(words.summary)) in flat(text_of(last))
        shown = page_review(replay_of(last)[0])
        assert shown is not None
        says(words, shown)
        assert cards_in(review_part(text_of(last))) <= seen_by(game, seat)
