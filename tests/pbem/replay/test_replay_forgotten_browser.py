"""The replay page's deal check in a real browser when a player was forgotten: their
cut is kept only as its SHA-256, the deals are still checked against the seed, and the
page says the seed could not be derived again; a wrong server seed still fails."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.forgetting import forget_entry
from pbem.render.replay import replay_page
from tests.pbem.replay.browser import launch, open_page
from tests.pbem.replay.proofs import proof_archive

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


def verdict(browser: Any, path: Path, archive: dict[str, Any]) -> tuple[str, str]:
    path.write_text(replay_page(archive).html, encoding="utf-8")
    context, page = open_page(browser, path)
    try:
        assert page.errors == []
        return page.get_attribute("#verify", "data-state"), page.inner_text("#verify")
    finally:
        context.close()


def test_a_forgotten_cut_under_protocol_1_is_not_verifiable_and_says_why(
    browser: Any, tmp_path: Path
) -> None:
    """pbem-deal/1 cannot derive the key again without the forgotten text: every other
    check runs against the archive's seed, and the verdict is "not verifiable"."""
    archive = proof_archive(2, target=61)
    archive["deal_proof"]["entropy"][0] = forget_entry(archive["deal_proof"]["entropy"][0])
    state, text = verdict(browser, tmp_path / "forgotten.html", archive)
    assert state == "none", text
    assert "a forgotten player's cut is kept only as its SHA-256" in text
    wrong = copy.deepcopy(archive)
    wrong["deal_proof"]["server_seed"] = "0" * 64
    state, text = verdict(browser, tmp_path / "wrong.html", wrong)
    assert state == "mismatch" and "commitment" in text
