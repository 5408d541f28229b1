"""A fair game (pbem-deal/1) played by mail through the service: the replay page attached
to its game-over mail, and the one `pbem site` writes, verify every deal in the browser,
as `engine.fairness.verify_archive` does in Python."""

from __future__ import annotations

import json
from contextlib import contextmanager
from email.message import Message
from pathlib import Path
from typing import Any

import pytest

from engine.dealcheck import verify_archive
from tests.e2e.helpers import ALICE, BOB, Harness, cli_env, run_cli
from tests.pbem.replay.browser import launch, open_page
from tests.pbem.replay.test_replay_mail import _replay_of

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _payload(part: Message) -> bytes:
    """A (non-multipart) part's payload, its transfer encoding undone."""
    data = part.get_payload(decode=True)
    assert isinstance(data, bytes)
    return data


def test_the_game_over_mail_of_a_fair_game_verifies_in_the_browser(
    tmp_path: Path, db_url: str, db_engine: Any
) -> None:
    """End to end: a fair game (pbem-deal/1) played by mail; the replay page attached to
    its game-over mail says every deal verified, as `engine.fairness` does; and the
    same page written by `pbem site` too."""
    h = Harness.build(tmp_path / "service", db_url, db_engine, fair_deals=True)
    try:
        game_id = h.service.new_game([ALICE, BOB], target=61)
        h.step()
        h.answer(ALICE[0], "cut 3 blind mice")
        h.answer(BOB[0], "cut")
        game = h.play_until(game_id, lambda g: g.is_over)
        h.step()
        found = _replay_of(h.latest(BOB[0]))
        assert found is not None
        data = found[1]
        assert data["deal_proof"]["server_seed"] and data["seed"] == game.seed
        deals = sum(1 for e in game.events if e.kind == "deal")
        html = next(
            _payload(p).decode("utf-8")
            for p in h.latest(BOB[0]).iter_attachments()
            if p.get_content_type() == "text/html"
        )

        env = cli_env(h.tmp_path, db_url)
        assert (
            run_cli(env, "game", "export", str(game_id), "-o", str(tmp_path / "g.json")).exit_code
            == 0
        )
        archive = json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))
        assert verify_archive(archive).ok
        assert run_cli(env, "site", str(tmp_path / "site")).exit_code == 0
        page = (tmp_path / "site" / "games" / f"{game_id}.html").read_text(encoding="utf-8")
    finally:
        h.close()
    # The browser only now: Playwright's sync API keeps an event loop running on this
    # thread, where the service's own asyncio.run could not run.
    with contextmanager(launch)() as browser:
        for name, text_of_page in (("mail.html", html), ("site.html", page)):
            path = tmp_path / name
            path.write_text(text_of_page, encoding="utf-8")
            context, shown = open_page(browser, path)
            try:
                state = shown.get_attribute("#verify", "data-state")
                text = shown.inner_text("#verify")
                assert state == "verified", text
                assert text.startswith(f"All {deals} deals verified"), text
            finally:
                context.close()
