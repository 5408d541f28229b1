"""The mails as a player's client shows them, in a real browser (Debian's chromium,
driven by Playwright): a turn mail with the grid of the fifteen discards, a play mail
with the suggested card, and the game-over mail with its review, each at a phone's
390 px and a desktop's 800 px. None is wider than the window, and every one-click
answer and the grid are on screen. The screenshots are written beside the test (and,
with ``PBEM_SCREENSHOTS=DIR``, into DIR: how ``docs/screenshots/`` is made)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import Game, Play, Settings, player_view
from engine.computer import computer_move, computer_view
from engine.game import PEGGING
from engine.review import review_game
from pbem.render import MailContext, RenderedMail, render_turn
from tests.pbem.replay.browser import launch

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

WIDTHS = (390, 800)
REPLY_TO = "cribbage+k3x9q2@pbem.example"
DEAL_LINES = (
    "Deal commitment (pbem-deal/3): " + "3b" * 32,
    "Commitment log: 41 entries, head 1a2b3c4d5e6f7a8b.",
    "Cuts as recorded (SHA-256, first 16 hex digits): Nia 9c1f0e2d3b4a5968; Otto 77aa01bc23de45f6.",
    "The server seed behind it is revealed when the game is over.",
)


def context(names: tuple[str, str], **more: Any) -> MailContext:
    return MailContext(
        game_id=12,
        names=names,
        recipient_seat=0,
        reply_hint="Reply to this email with your move.",
        reply_to=REPLY_TO,
        subject=f"[Cribbage 12] {names[0]} v {names[1]}",
        **{"deal_lines": DEAL_LINES, **more},
    )


def discard_mail() -> RenderedMail:
    """Two people, no hints: the discard as the grid of its fifteen pairs."""
    game = Game(Settings(players=2, target=121), "shots-discard")
    return render_turn(player_view(game, 0, 0), context(("Nia", "Otto")))


def play_mail() -> RenderedMail:
    """Against the computer, with hints: Nia to play, the suggested card marked."""
    game = Game(Settings(players=2, target=121), "shots-play")
    while not (
        game.phase == PEGGING
        and game.to_act() == (0,)
        and len([a for a in game.legal_actions(0) if isinstance(a, Play)]) > 1
        and player_view(game, 0).plays
    ):
        seat = game.to_act()[0]
        game.apply(computer_move(computer_view(game, seat), "medium"))
    ctx = context(("Nia", "Computer"), levels=("", "hard"), suggest=True)
    return render_turn(player_view(game, 0, 0), ctx)


def over_mail() -> RenderedMail:
    """The game-over mail of a whole game against hard, with Nia's review."""
    game = Game(Settings(players=2, target=121), "shots-over")
    while not game.is_over:
        seat = game.to_act()[0]
        game.apply(computer_move(computer_view(game, seat), "medium" if seat == 0 else "hard"))
    ending = (
        'Reply "rematch" for another game against the computer, the same house rules, the '
        'loser dealing first (it starts at once); "rematch best of 3" makes it a match.',
        'Reply "archive" for the whole game as a file (JSON), with its replay page.',
    )
    ctx = context(
        ("Nia", "Computer"),
        levels=("", "hard"),
        deal_lines=(
            *DEAL_LINES[:3],
            "Server seed, revealed now the game is over: " + "c4" * 32 + " — with it the "
            "game's replay page (attached to the game-over mail, and to the archive) checks "
            "every deal in your web browser.",
            "The next game's deal commitment: " + "5e" * 32 + " — your answer to this mail "
            "(“rematch”) is your cut for it.",
        ),
        ending=ending,
        review=review_game(game, 0),
        since_event=max(0, len(game.events) - 3),
    )
    return render_turn(player_view(game, 0, max(0, len(game.events) - 3)), ctx)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


def look(browser: Any, html: Path, width: int, shot: Path) -> dict[str, Any]:
    """The mail at ``html`` in a window ``width`` px wide: how much wider than the
    window it is, and where its links and its grid of discards are; a full-page
    screenshot to ``shot``."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        page.route(
            "**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort()
        )
        page.goto(html.resolve().as_uri())
        seen = page.evaluate(
            """() => {
                const box = e => { const r = e.getBoundingClientRect();
                    const s = getComputedStyle(e);
                    return {left: r.left, right: r.right, width: r.width, height: r.height,
                            shown: s.visibility !== 'hidden' && s.display !== 'none'}; };
                return {
                    scroll: document.documentElement.scrollWidth,
                    inner: window.innerWidth,
                    links: [...document.querySelectorAll('a[href^="mailto:"]')].map(box),
                    grid: [...document.querySelectorAll('table.w')].map(box),
                    gridLinks: document.querySelectorAll('table.w a[href^="mailto:"]').length,
                    review: [...document.querySelectorAll('*')].filter(
                        e => e.children.length === 0 && /Your game, reviewed/.test(e.textContent)
                    ).map(box),
                };
            }"""
        )
        page.screenshot(path=str(shot), full_page=True)
        return dict(seen)
    finally:
        context.close()


def on_screen(box: dict[str, Any], width: int) -> bool:
    return (
        box["shown"]
        and box["width"] > 0
        and box["height"] > 0
        and box["left"] >= 0
        and box["right"] <= width
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_the_mails_fit_and_their_answers_are_on_screen(
    browser: Any, tmp_path: Path, width: int
) -> None:
    kept = os.environ.get("PBEM_SCREENSHOTS")
    for name, mail in (("discard", discard_mail()), ("play", play_mail()), ("over", over_mail())):
        html = tmp_path / f"{name}.html"
        html.write_text(mail.html, encoding="utf-8")
        shot = (Path(kept) if kept else tmp_path) / f"mail-{name}-{width}.png"
        seen = look(browser, html, width, shot)
        assert seen["scroll"] <= seen["inner"] == width, (name, seen["scroll"])
        assert seen["links"], name
        for box in seen["links"]:
            assert on_screen(box, width), (name, box)
        if name == "discard":
            assert seen["gridLinks"] == 15 and len(seen["grid"]) == 1
            assert on_screen(seen["grid"][0], width), seen["grid"]
        else:
            assert not seen["grid"]
        if name == "over":
            assert len(seen["review"]) == 1 and on_screen(seen["review"][0], width)
        assert shot.stat().st_size > 5000
