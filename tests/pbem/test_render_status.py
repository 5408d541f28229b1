"""The mails of a paused, resumed or aborted game."""

from __future__ import annotations

from engine import new_game, player_view
from pbem.render import MailContext
from pbem.render.status import render_aborted, render_status_change

HOSTILE = "<script>alert(1)</script> & a very long reason " + "word " * 40


def context(seat: int) -> MailContext:
    return MailContext(game_id=4, names=("Ann", "Ben"), recipient_seat=seat, reply_hint="")


def test_each_status_mail_says_why_and_escapes_the_reason() -> None:
    game = new_game(2, seed="render-status", target=61)
    view = player_view(game, 1, len(game.events))
    for status, subject in (
        ("paused", "[Cribbage 4] Game paused"),
        ("active", "[Cribbage 4] Game resumed — Hand 1 — your turn: discard"),
        ("aborted", "[Cribbage 4] Game aborted"),
    ):
        mail = render_status_change(view, context(1), status, HOSTILE)
        assert mail.subject == subject
        assert "<script>" not in mail.html and "&lt;script&gt;" in mail.html
        assert "Reason: <script>alert(1)</script> &" in " ".join(mail.text.split())
        assert all(len(line) <= 78 for line in mail.text.splitlines()), status
        offers = ">>>" in mail.text
        assert offers == (status == "active"), status


def test_an_aborted_game_without_a_stored_reason() -> None:
    game = new_game(2, seed="render-status", target=61)
    mail = render_aborted(player_view(game, 0, len(game.events)), context(0), None)
    text = " ".join(mail.text.split())
    assert "The admin aborted this game. No more moves will be made." in text
    assert "Reason" not in text and "your turn" not in text.lower()
