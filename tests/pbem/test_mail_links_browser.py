"""The HTML part's one-click answers on a phone: in Debian's chromium at 390 px wide, no
mail with links — a discard, a play, the hint's table of discards, the game-over mail,
the invitation and the cut request — is wider than the screen, and every link lies
inside it, fully visible."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import PEGGING, Game, new_game, player_view
from engine.computer import choose_action
from pbem.render import MailContext, RenderedMail, render_turn
from pbem.render.cut import render_cut
from pbem.render.hint import render_hint
from pbem.render.invite import render_invite
from pbem.service.game.hints import advice
from tests.pbem.replay.browser import launch
from tests.pbem.test_render import ctx_for

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

ADDRESS = "cribbage+k5x2ablq7vrm4ysoyhd3@pbem.example.org"
PHONE = 390


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


def _ctx(game: Game, seat: int) -> MailContext:
    ctx = ctx_for(game, seat)
    # A game with hints: its discard mail links the best pairs (without hints it links
    # none, see tests/pbem/test_render_links.py).
    return MailContext(**{**ctx.__dict__, "reply_to": ADDRESS, "game_id": 1234, "suggest": True})


def _advance(game: Game, done: Any) -> None:
    rng = random.Random(9)
    while not done(game):
        assert not game.is_over
        game.apply(choose_action(game, game.to_act()[0], rng, "random"))


def _mails() -> dict[str, RenderedMail]:
    four = new_game(4, seed="phone-4", target=121)
    two = new_game(2, seed="phone-2", target=121)
    mails = {
        "discard-2": render_turn(player_view(two, 0), _ctx(two, 0)),
        "hint-discard-4": render_hint(player_view(four, 1), _ctx(four, 1), advice(four, 1)),
        "hint-discard-2": render_hint(player_view(two, 1), _ctx(two, 1), advice(two, 1)),
    }
    _advance(two, lambda g: g.phase == PEGGING and len(g.legal_actions()) >= 4)
    seat = two.to_act()[0]
    mails["play"] = render_turn(player_view(two, seat), _ctx(two, seat))
    _advance(two, lambda g: g.is_over)
    mails["game-over"] = render_turn(player_view(two, 0), _ctx(two, 0))
    mails["invite"] = render_invite(
        "Alice",
        "alice@example.com",
        "4 players in partnerships, to 121",
        "2026-05-08",
        reply_to=ADDRESS,
    )
    cut = MailContext(1234, ("Alice", "Bob"), 0, "", reply_to=ADDRESS)
    mails["cut"] = render_cut(cut, ["Bob"], have_cut=False)
    return mails


@pytest.mark.parametrize("window", [PHONE, 800])
def test_no_link_overflows_a_phone_screen(browser: Any, tmp_path: Path, window: int) -> None:
    """At a phone's 390 px and a desktop reading pane's 800 px: nothing wider than the
    window, every link inside it and big enough to tap; a screenshot of each mail."""
    context = browser.new_context(viewport={"width": window, "height": 844})
    context.route(
        "**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort()
    )
    try:
        for name, mail in _mails().items():
            path = tmp_path / f"{name}.html"
            path.write_text(mail.html, encoding="utf-8")
            page = context.new_page()
            page.goto(path.resolve().as_uri())
            overflow = page.evaluate("() => document.documentElement.scrollWidth - innerWidth")
            assert overflow <= 0, (name, overflow)
            boxes = page.evaluate(
                """() => [...document.querySelectorAll('a[href^="mailto:"]')].map(a => {
                  const r = a.getBoundingClientRect();
                  return [a.textContent, r.left, r.right, r.width, r.height];
                })"""
            )
            assert boxes, name
            for label, left, right, width, height in boxes:
                assert left >= 0 and right <= window, (name, label, left, right)
                assert width >= 24 and height >= 20, (name, label, width, height)  # tappable
            shot = tmp_path / f"{name}-{window}.png"
            assert len(page.screenshot(path=str(shot), full_page=True)) > 1000
            page.close()
    finally:
        context.close()
