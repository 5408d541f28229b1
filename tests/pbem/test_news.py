"""Whether a player needs a mail: the same question is not asked twice, news is told."""

from __future__ import annotations

from engine import DISCARD, PEGGING, Resign, new_game, player_view
from pbem.render.news import is_news, mail_state, worth_mailing


def test_the_other_players_discard_asks_nothing_new() -> None:
    game = new_game(2, seed="news", first_dealer=0)
    asked = mail_state(player_view(game, 0))
    before = len(game.events)
    game.apply(player_view(game, 1).legal[0])  # the pone lays away first
    view = player_view(game, 0, before)
    assert view.phase == DISCARD and view.my_turn
    assert mail_state(view) == asked  # the same two cards to lay away, from the same six
    assert not is_news(view)  # a discard is private: nothing to tell
    assert not worth_mailing(view, asked)
    # The pone, who laid away, now waits: no mail for their own move.
    mover = player_view(game, 1, before)
    assert mail_state(mover) == "wait" and not worth_mailing(mover, mail_state(mover))
    assert worth_mailing(mover, None)  # with no mail on record, always


def test_the_starter_is_news_and_a_new_question_is_always_mailed() -> None:
    game = new_game(2, seed="news", first_dealer=0)
    asked = {seat: mail_state(player_view(game, seat)) for seat in (0, 1)}
    before = len(game.events)
    game.apply(player_view(game, 1).legal[0])
    game.apply(player_view(game, 0).legal[0])
    assert game.phase == PEGGING
    for seat in (0, 1):
        view = player_view(game, seat, before)
        assert is_news(view)  # the starter was turned
        assert worth_mailing(view, asked[seat])
    pone = player_view(game, 1, len(game.events))
    assert pone.my_turn and not is_news(pone)
    assert worth_mailing(pone, "wait")  # their turn now: a new question


def test_the_end_of_the_game_is_always_mailed() -> None:
    game = new_game(2, seed="news-end")
    game.apply(Resign(0))
    view = player_view(game, 1, len(game.events))
    assert mail_state(view) == "over"
    assert worth_mailing(view, "over")
