"""Hint mails (``hint``): rendered for 2, 3 and 4 players at the discard, in the play and
after a hand, text and HTML; a hint names no card its player may not know (checked
against the hidden cards of the game state), and the reply line suggests the computer's
``medium`` choice, not the first legal move."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from engine import DISCARD, PEGGING, Discard, Game, Play, new_game, player_view
from engine.analysis import discard_analysis
from engine.computer import choose_action
from engine.levels import decide
from pbem.render import render_help, render_turn
from pbem.render.hint import Advice, render_hint, standing
from pbem.render.prompt import SUGGESTING, suggested_action
from pbem.service.game.hints import advice
from tests.pbem.test_render import (
    assert_well_formed,
    cards_in_mail,
    cards_named,
    ctx_for,
    hidden_from,
)


def play_to(game: Game, rng: random.Random, done: Callable[[Game], bool]) -> bool:
    """Random moves (forced ones applied) until ``done``; False if the game ended first."""
    for _ in range(3000):
        while not game.is_over and (forced := game.forced_action()) is not None:
            if done(game):
                return True
            game.apply(forced)
        if done(game):
            return True
        if game.is_over:
            return False
        seat = game.to_act()[0]
        game.apply(choose_action(game, seat, rng, "random"))
    return False


def check_hint(game: Game, seat: int) -> tuple[str, Advice]:
    """Render ``seat``'s hint; assert it is well formed and names no hidden card but
    the seat's own cards of the hand it reviews. Its plain text, and the advice."""
    given = advice(game, seat)
    view = player_view(game, seat, len(game.events))
    mail = render_hint(view, ctx_for(game, seat, len(game.events)), given)
    assert_well_formed(mail.html)
    named = cards_in_mail(mail)
    hidden = hidden_from(game, seat)
    if given.review is not None:
        old = set(given.review.holding)
        # The review names the cards of the hand it looks back on, and nothing else hidden.
        review_text = mail.text.split("Hint: your last discard", 1)[1]
        assert cards_named(review_text.split("\n>>>", 1)[0]) - old - set(view.holding) <= set()
        hidden -= old
    assert not named & hidden, (seat, sorted(map(str, named & hidden)))
    assert mail.subject.startswith("[Cribbage 12] Hint: ")
    return " ".join(mail.text.split()), given


@pytest.mark.parametrize("players", [2, 3, 4])
def test_hints_name_no_hidden_card(players: int) -> None:
    rng = random.Random(players)
    for n in range(3):
        game = new_game(players, seed=f"hint-{players}-{n}", target=121)
        # At the deal: every seat's discard table.
        for seat in range(players):
            text, given = check_hint(game, seat)
            assert given.discard is not None and given.review is None
            ways = 15 if players == 2 else 5
            assert f"There are {ways} ways to lay away" in text
            assert "Total" in text and "Best: lay away" in text
        # In the play: the card to play, with the risks, and the discard just made.
        assert play_to(game, rng, lambda g: g.phase == PEGGING and bool(g.to_act()))
        for seat in range(players):
            text, given = check_hint(game, seat)
            assert given.review is not None and given.review.hand_no == game.hand_no
            assert "In this hand you held" in text
            if seat in game.to_act() and given.play is not None:
                assert "Suggested: play" in text and "leaves the count at" in text
        # The next deal: the new discard, and a look back at the last hand's.
        hand = game.hand_no

        def next_deal(g: Game, hand: int = hand) -> bool:
            return g.phase == DISCARD and g.hand_no > hand

        if not play_to(game, rng, next_deal):
            continue
        for seat in range(players):
            text, given = check_hint(game, seat)
            assert given.review is not None and given.review.hand_no == hand
            assert f"In hand {hand} you held" in text


def test_the_table_marks_the_best_and_the_players_own() -> None:
    game = new_game(2, seed="hint-table", first_dealer=0)
    view = player_view(game, 1)
    mail = render_hint(view, ctx_for(game, 1), advice(game, 1))
    rows = [ln for ln in mail.text.splitlines() if ln[:2] in ("> ", "  ") and ". " in ln[:7]]
    assert len(rows) == 6 and rows[0].startswith("> 1.")
    assert 'class="h"' in mail.html
    # Lay away the worst: the review says what it cost, and marks it "*".
    worst = discard_analysis(view).options[-1]
    game.apply(Discard(1, worst.laid_away))
    text, given = check_hint(game, 1)
    assert given.review is not None and given.review.review.given_away > 0
    place = standing(given.review.review.analysis, worst)
    assert f"That ranked {place}" in text and "of 15" in text
    assert "points given away on average" in text
    again = render_hint(player_view(game, 1), ctx_for(game, 1), given)
    mine = [ln for ln in again.text.splitlines() if ln.startswith("* ")]
    assert len(mine) == 1 and " ".join(str(c) for c in worst.laid_away) in mine[0]
    assert '<tr class="y">' in again.html


def test_nothing_to_advise_before_any_discard_when_not_to_move() -> None:
    game = new_game(3, seed="hint-idle", first_dealer=0)
    seat = game.to_act()[0]
    game.apply(choose_action(game, seat, random.Random(0)))
    text, given = check_hint(game, seat)
    assert given.discard is None and given.play is None
    assert "In this hand you held" in text


# -- the reply line ---------------------------------------------------------------------


def test_the_reply_line_suggests_the_medium_choice_not_the_first_legal_move() -> None:
    assert SUGGESTING == "medium"
    differs = 0
    for n in range(40):
        game = new_game(2, seed=f"first-legal-{n}", first_dealer=0)
        view = player_view(game, 1)
        best = suggested_action(view)
        seed = f"1/discard/{' '.join(c.ascii for c in view.holding)}/0"
        assert best == decide(view, random.Random(seed), "medium")
        first = view.legal[0]
        assert isinstance(best, Discard) and isinstance(first, Discard)
        if set(best.cards) == set(first.cards):
            continue
        differs += 1
        text = render_turn(view, ctx_for(game, 1, suggest=True)).text
        assert f"discard {' '.join(str(c) for c in best.cards)}\n" in text
        assert f"discard {' '.join(str(c) for c in first.cards)}\n" not in text
        # And in the play.
        rng = random.Random(n)
        if not play_to(
            game, rng, lambda g: g.phase == PEGGING and len(g.legal_actions(g.to_act()[0])) > 1
        ):
            continue
        seat = game.to_act()[0]
        view = player_view(game, seat)
        best = suggested_action(view)
        assert isinstance(best, Play)
        assert (
            f"        play {best.card}\n"
            in render_turn(view, ctx_for(game, seat, suggest=True)).text
        )
    assert differs >= 10


def test_the_help_mail_documents_hint_hints_and_level() -> None:
    mail = render_help(None, "Cribbage")
    text = " ".join(mail.text.split())
    for words in ("hint advice on your move", "hints on hints in this game", "level easy"):
        assert words in text, words
    assert all(w in mail.html for w in ("<code>hint</code>", "<code>hints on</code>", "level easy"))
