"""The game-over mail attaches the game's replay page to each player who wants it (``mail
replay on|off``, default from the ``mail_replay`` setting), opening in that player's view;
the other mails carry none, and the mail stays a sane size."""

from __future__ import annotations

import base64
import json
import re
from email.message import EmailMessage
from typing import Any

import pytest

from pbem.commands import Command, mail_replay
from pbem.demo.bots import text_of
from pbem.render.replay import replay_page
from tests.e2e.helpers import ALICE, BOB, CAROL, Harness
from tests.pbem.replay.proofs import proof_archive


def _said(msg: EmailMessage) -> str:
    """A mail's text with its lines joined (the text is wrapped at 78 columns)."""
    return " ".join(text_of(msg).split())


def _replay_of(msg: EmailMessage) -> tuple[str, dict[str, Any]] | None:
    for part in msg.iter_attachments():
        if part.get_content_type() == "text/html":
            html = part.get_payload(decode=True).decode("utf-8")  # type: ignore[union-attr]
            match = re.search(r'id="replay-data">(.*?)</script>', html, re.S)
            assert match
            data = json.loads(match.group(1))
            if data.get("archive_json"):  # the deal proof travels inside the archive's text
                data["deal_proof"] = json.loads(data["archive_json"])["deal_proof"]
            return str(part.get_filename()), data
    return None


def test_mail_replay_words() -> None:
    assert mail_replay(Command("mail", ("replay",), "mail replay")) is True
    assert mail_replay(Command("mail", ("replay", "on"), "")) is True
    assert mail_replay(Command("mail", ("replay", "off"), "")) is False
    assert mail_replay(Command("mail", ("all",), "")) is None
    try:
        mail_replay(Command("mail", ("replay", "on", "off"), ""))
    except ValueError as exc:
        assert "on or off" in str(exc)
    else:
        raise AssertionError("both on and off were accepted")


def test_the_game_over_mail_attaches_the_replay_to_who_wants_it(harness: Harness) -> None:
    alice, bob, carol = ALICE[0], BOB[0], CAROL[0]
    game_id = harness.new_game((ALICE, BOB, CAROL), target=61)
    harness.answer(alice, "mail replay off")
    assert "will carry no replay page" in _said(harness.latest(alice))
    assert harness.player(alice).mail_replay is False  # type: ignore[union-attr]
    harness.answer(carol, "mail replay on off")
    assert "mail replay on or off?" in _said(harness.latest(carol))
    harness.answer(carol, "mail replay")
    assert harness.player(carol).mail_replay is True  # type: ignore[union-attr]
    assert harness.player(bob).mail_replay is None  # type: ignore[union-attr]
    # No mail before the end carries a page.
    for address in (alice, bob, carol):
        assert all(_replay_of(msg) is None for msg in harness.received(address))
    harness.answer(bob, "resign confirm")
    assert harness.game_row(game_id).status == "finished"

    assert _replay_of(harness.latest(alice)) is None
    assert "attached" not in _said(harness.latest(alice))
    for seat, address in ((1, bob), (2, carol)):
        last = harness.latest(address)
        assert "gameover" in str(last["Message-ID"])
        found = _replay_of(last)
        assert found is not None
        name, data = found
        assert name == f"cribbage-{game_id}.html"
        assert data["seat"] == seat and data["over"] and data["result"]
        assert data["names"] == ["Alice", "Bob", "Carol"]
        assert f"The attached cribbage-{game_id}.html replays the whole game" in _said(last)
        assert len(last.as_bytes()) < 60_000  # a short game: a small page


def test_the_setting_default_can_be_off(tmp_path: Any, db_url: str, db_engine: Any) -> None:
    h = Harness.build(tmp_path, db_url, db_engine, mail_replay=False)
    try:
        h.new_game((ALICE, BOB), target=61)
        h.answer(BOB[0], "mail replay on")
        h.answer(ALICE[0], "resign confirm")
        assert _replay_of(h.latest(ALICE[0])) is None
        assert _replay_of(h.latest(BOB[0])) is not None
    finally:
        h.close()


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_long_games_page_keeps_the_mail_sane(players: int) -> None:
    """Games to 121 (three players make the most steps): the page and its base64. The
    page carries its protocol's JSON Schema (about 5 KB) to check the archive's format,
    and the script that checks the archive against the player's saved mail and the
    previous game's archive (about 14 KB): a three-player game's page is about 126 KB."""
    html = replay_page(proof_archive(players, target=121)).html.encode("utf-8")
    assert len(html) < 130_000
    assert len(base64.encodebytes(html)) < 180_000
