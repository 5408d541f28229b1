"""Mails about a player's games as a whole: "Which game?" and help outside a game."""

from __future__ import annotations

from pbem.render.games import GameLine, render_help_games, render_which_game

GAMES = (
    GameLine(3, ("Bob",), "your turn (hand 2)", "cribbage+aaaa@pbem.test"),
    GameLine(7, ("<b>Eve</b>", "Carol"), "waiting for Carol (hand 1)", "cribbage+bbbb@pbem.test"),
)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_which_game_lists_each_game_with_its_reply_address() -> None:
    mail = render_which_game(GAMES)
    assert mail.subject == "[Cribbage] Which game?"
    text = flat(mail.text)
    assert "Game 3, you v Bob: your turn (hand 2) Reply to: cribbage+aaaa@pbem.test" in text
    assert "Game 7, you v <b>Eve</b> and Carol: waiting for Carol (hand 1)" in text
    assert 'Write "help" for the commands and your games.' in text
    assert all(len(line) <= 78 for line in mail.text.splitlines())
    # HTML: names are escaped, reply addresses are links.
    assert "<b>Eve</b>" not in mail.html and "&lt;b&gt;Eve&lt;/b&gt;" in mail.html
    assert 'href="mailto:cribbage+bbbb@pbem.test"' in mail.html


def test_which_game_with_no_game_in_progress() -> None:
    mail = render_which_game(())
    assert "You have no game in progress." in mail.text
    assert "Reply to the latest mail of the game you mean" not in mail.text
    assert "You have no game in progress." in mail.html


def test_help_outside_a_game_lists_the_games_then_the_commands() -> None:
    mail = render_help_games(GAMES)
    text = flat(mail.text)
    assert mail.subject == "[Cribbage] How to play by mail"
    assert text.index("You have 2 games in progress") < text.index("discard 5h jd")
    assert "Game 3, you v Bob: your turn (hand 2). Reply to: cribbage+aaaa@pbem.test" in text
    assert "&lt;b&gt;Eve&lt;/b&gt;" in mail.html
    assert "You have no game in progress." in render_help_games(()).text
