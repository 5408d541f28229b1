"""A game mail's HTML at phone width in a real browser (Debian's chromium, driven by
Playwright, as the replay page's tests): the 64-digit commitment and server seed of a
fair game wrap instead of pushing the page wider than 390 px."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import new_game, player_view
from pbem.render import MailContext, render_error, render_turn
from pbem.render.invite import render_invite
from tests.pbem.replay.browser import launch

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

COMMITMENT = "3b" * 32
SEED = "c4" * 32
PHONE = 390


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


def overflow(browser: Any, path: Path, shot: Path) -> int:
    """How many pixels the page at ``path`` is wider than a 390 px phone (0: none); a
    screenshot is kept beside it."""
    context = browser.new_context(viewport={"width": PHONE, "height": 844})
    try:
        page = context.new_page()
        page.route(
            "**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort()
        )
        page.goto(path.resolve().as_uri())
        width = int(page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth"))
        # The long tokens wrap, the words of the tables' labels do not ("Choos-ing").
        lines = page.evaluate(
            """() => [...document.querySelectorAll('td.l')].map(td => {
                const range = document.createRange();
                range.selectNodeContents(td);
                return range.getClientRects().length;
            })"""
        )
        assert all(n == 1 for n in lines), lines
        assert len(page.screenshot(path=str(shot), full_page=True)) > 1000
        return width
    finally:
        context.close()


def test_the_commitment_wraps_at_phone_width(browser: Any, tmp_path: Path) -> None:
    game = new_game(2, seed="phone", target=61)
    lines = (
        f"Deal commitment (pbem-deal/1): {COMMITMENT}",
        # The start of each seat's cut hash (`pbem.service.game.deals.cut_hash_line`).
        f"Cuts as recorded (SHA-256, first 16 hex digits): Alice {SEED[:16]}.",
        f"Server seed, revealed now the game is over: {SEED} — check every deal.",
    )
    ctx = MailContext(
        game_id=12,
        names=("Alice", "Computer"),
        recipient_seat=0,
        reply_hint="Reply to this email with your move.",
        deal_lines=lines,
        levels=("", "medium"),
    )
    turn = render_turn(player_view(game, 0, 0), ctx)
    outside = render_error(
        MailContext(
            game_id=12, names=("Alice",), recipient_seat=0, reply_hint="", deal_lines=lines
        ),
        None,
        "Your mail could not be applied",
    )
    invite = render_invite("Alice", "alice@example.com", "to 61", "1 April", commitment=COMMITMENT)
    for name, mail in (("turn", turn), ("error", outside), ("invite", invite)):
        assert COMMITMENT in mail.html
        path = tmp_path / f"{name}.html"
        path.write_text(mail.html, encoding="utf-8")
        assert overflow(browser, path, tmp_path / f"{name}.png") <= 0, name
