"""The review on a game-over mail's replay page in a real browser (Debian's chromium,
driven by Playwright) at a phone's 390 px and at 800 px: shown under the result, every
line of it as `pbem.render.review` words it, nothing wider than the screen, and the page
still steps through the game."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import Game, Settings
from engine.archive import to_archive
from engine.audit import computer_entries
from engine.computer import computer_move, computer_view
from engine.review import review_game
from pbem import engine_version
from pbem.render.replay import render_page, replay_data
from pbem.render.review import review_text
from pbem.render.words import plain
from tests.pbem.replay.browser import launch, open_page

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


def _game() -> Game:
    """A whole game to 121: Nia (seat 0) plays as ``easy`` would, the computer ``hard``."""
    game = Game(Settings(players=2, target=121), "review-page")
    while not game.is_over:
        seat = game.to_act()[0]
        game.apply(computer_move(computer_view(game, seat), "easy" if seat == 0 else "hard"))
    return game


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("width", [390, 800])
def test_the_review_on_the_replay_page(browser: Any, tmp_path: Path, width: int) -> None:
    game = _game()
    archive = to_archive(
        game,
        game_id=7,
        players=[{"email": "nia@example.org", "name": "Nia"}, {"name": "Computer"}],
        status="finished",
        computer=computer_entries({1: "hard"}, engine_version()),
    )
    review = review_game(game, 0)
    words = review_text(review, ["Nia", "Computer"])
    assert words is not None and len(words.costliest) == 3
    data = replay_data(archive)
    path = tmp_path / "game.html"
    path.write_text(render_page({**data, "seat": 0}, review=review), encoding="utf-8")
    context, page = open_page(browser, path, width=width, height=844)
    try:
        assert page.errors == []
        section = page.locator("#review")
        assert section.is_visible()
        said = _flat(section.inner_text())
        assert _flat(plain(words.summary)) in said
        shown = [_flat(t) for t in page.locator("#review-costliest li").all_inner_texts()]
        assert shown == [_flat(plain(line)) for line in words.costliest]
        hands = [_flat(t) for t in page.locator("#review-hands li").all_inner_texts()]
        assert hands == [_flat(plain(line)) for line in words.hands]
        # Under the result, above the controls.
        result = page.locator("#result").bounding_box()
        box = section.bounding_box()
        controls = page.locator("#controls").bounding_box()
        assert result and box and controls
        assert result["y"] < box["y"] < controls["y"]
        # Nothing wider than the screen.
        assert box["x"] >= 0 and box["x"] + box["width"] <= width
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
        shot = section.screenshot(path=str(tmp_path / f"review-{width}.png"))
        assert len(shot) > 1000
        # The page still replays the game.
        page.click("#first")
        page.click("#next")
        assert page.evaluate("() => Number(document.body.dataset.step)") == 1
    finally:
        context.close()
