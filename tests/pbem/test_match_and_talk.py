"""Rematch, match and table talk without the service: the command language
(``say`` kept whole, ``rematch``, ``best of``) and their place in the mails (the match
line, the table talk in the news, the relay mail that shows no card)."""

from __future__ import annotations

import pytest

from engine import InvalidSyntaxError, Resign, new_game, player_view
from pbem.commands import best_of, parse_lobby, parse_reply, rematch_words, split_lines
from pbem.render import MailContext, MatchInfo, Said, render_help, render_history, render_turn
from pbem.render.mail import render_talk


def test_a_say_line_is_kept_whole_and_never_read_as_moves() -> None:
    parsed = parse_reply("say play 5h; go then resign\nplay 7c; go")
    assert [c.verb for c in parsed.commands] == ["say", "play", "go"]
    assert parsed.commands[0].args == ("play 5h; go then resign",)
    assert split_lines("Say: Nice crib!") == ["Say: Nice crib!"]
    assert parse_reply("Say:   Well   PLAYED ").commands[0].args == ("Well PLAYED",)
    assert parse_reply("say").commands[0].args == ()
    assert parse_reply("sayonara").commands == ()  # not the word "say"
    assert parse_reply("", subject="say hi").commands[0].verb == "say"


def test_rematch_words() -> None:
    assert rematch_words(()) == (None, None)
    assert rematch_words(("12",)) == (12, None)
    assert rematch_words(("game", "#12", "match", "best", "of", "5")) == (12, 5)
    assert rematch_words(("best", "of", "3")) == (None, 3)
    for bad in (("12", "13"), ("soon",), ("best", "of", "4"), ("best", "of")):
        with pytest.raises(InvalidSyntaxError):
            rematch_words(bad)
    assert best_of(("match", "best", "of", "7")) == 7 and best_of(("to", "61")) is None


def test_match_is_an_option_of_the_lobby_commands() -> None:
    asked = parse_lobby("challenge bob@example.com to 61 match best of 5")
    assert not isinstance(asked, InvalidSyntaxError) and asked is not None
    assert asked.verb == "challenge" and asked.best_of == 5 and asked.target == 61
    asked = parse_lobby("play computer no skunk best of 3")
    assert asked is not None and not isinstance(asked, InvalidSyntaxError)
    assert asked.verb == "new" and asked.best_of == 3 and asked.skunk == "none"
    asked = parse_lobby("rematch 12 best of 7")
    assert asked is not None and not isinstance(asked, InvalidSyntaxError)
    assert (asked.verb, asked.game_id, asked.best_of) == ("rematch", 12, 7)
    assert isinstance(parse_lobby("new match best of 2"), InvalidSyntaxError)
    assert isinstance(parse_lobby("rematch 3 now"), InvalidSyntaxError)
    plain = parse_lobby("new")
    assert plain is not None and not isinstance(plain, InvalidSyntaxError)
    assert plain.best_of is None


def ctx(seat: int, **extra: object) -> MailContext:
    return MailContext(7, ("Alice", "Bob"), seat, "Reply.", **extra)  # type: ignore[arg-type]


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_match_line_in_the_header_and_at_the_end() -> None:
    game = new_game(2, seed="m", target=61, skunk="none")
    info = MatchInfo(best_of=3, game_no=2, before=(1, 0))
    mail = render_turn(player_view(game, 1, 0), ctx(1, match=info))
    assert "Match, best of 3 · game 2 · You 0, Alice 1" in flat(mail.text)
    assert "Match, best of 3 · game 2 · You 0, Alice 1" in mail.html
    game.apply(Resign(1))  # Alice wins the game: 2 of 3, the match is hers
    over = render_turn(player_view(game, 1, 0), ctx(1, match=info))
    assert "You 0, Alice 2 — Alice wins the match; the match is over." in flat(over.text)
    game = new_game(2, seed="m", target=61, skunk="none")
    game.apply(Resign(0))  # Bob wins: 1–1, the match goes on
    goes_on = render_turn(player_view(game, 0, 0), ctx(0, match=info))
    assert "You 1, Bob 1 — the match goes on" in flat(goes_on.text)
    single = render_turn(player_view(game, 0, 0), ctx(0))
    assert "Match" not in single.text


def test_a_skunk_counts_two_game_points_in_a_match() -> None:
    game = new_game(2, seed="m", target=61, skunk="skunk")
    game.apply(Resign(0))  # at 0 points: a double skunk, worth four
    info = MatchInfo(best_of=7, game_no=1, before=())
    over = render_turn(player_view(game, 1, 0), ctx(1, match=info))
    assert "You 4, Alice 0 — you win the match" in flat(over.text)


def test_table_talk_in_the_news_escaped_and_capped() -> None:
    game = new_game(2, seed="t", target=61)
    talk = (Said("Bob", "<script>alert(1)</script> & " + "y" * 900),)
    mail = render_turn(player_view(game, 0, 0), ctx(0, talk=talk))
    assert "Table talk" in mail.text and "Bob says: “<script>" in mail.text
    assert "<script>" not in mail.html and "&lt;script&gt;" in mail.html
    assert "y" * 499 not in mail.text and "y" * 400 in flat(mail.text)
    history = render_history(player_view(game, 0, 0), ctx(0, talk=talk), ())
    assert "Bob says" in history.text


def test_the_relay_mail_shows_the_talk_and_no_card() -> None:
    mail = render_talk(ctx(1, talk=(Said("Alice", "nice\x00 crib\r\nSubject: x"),)))
    # The subject names no one and quotes nothing: the talk is in the body only.
    assert mail.subject == "[Cribbage 7] Table talk"
    assert "Alice says: “nice crib Subject: x”" in " ".join(mail.text.split())
    # Made without a view: no hand, no board, not one card.
    assert not any(suit in mail.text + mail.html for suit in "♣♦♥♠")
    assert "Your cards" not in mail.text and "Scores" not in mail.text


def test_help_lists_say_rematch_and_match() -> None:
    mail = render_help(None, "Cribbage")
    for words in ("say Nice crib!", "rematch", "best of 3|5|7"):
        assert words in mail.text and words in mail.html
