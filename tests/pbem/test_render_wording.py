"""The words of real mails: a count written as a count (never "for N", which is points),
a computer short in lines and tables with its level in the header alone, verbs that
agree with one name and with several, table talk under its own heading, a note that
is not "About your reply", a long hex that may wrap in the HTML, and the footer of a
mail outside any game offering only what works there."""

from __future__ import annotations

import random
import re

from engine import (
    OBSERVER,
    PEGGING,
    Game,
    computer,
    new_game,
    observer_view,
    player_view,
)
from pbem.render import (
    MailContext,
    Notice,
    Said,
    render_error,
    render_history,
    render_observer,
    render_talk,
    render_turn,
)
from pbem.render.cut import render_cut
from pbem.render.words import People, they_do
from tests.engine.helpers import play_out

WIDTH = 78
COMMITMENT = "9f" * 32  # 64 hex digits, as a fair game's commitment is


def context(game: Game, seat: int, since: int = 0, **kw: object) -> MailContext:
    names = ("Alice", "Computer", "Computer2", "Dave")[: game.players]
    levels = ("", "hard", "hard", "")[: game.players]
    return MailContext(
        game_id=7,
        names=names,
        recipient_seat=seat,
        reply_hint="Reply to this email with your move.",
        since_event=since,
        levels=levels,
        **kw,  # type: ignore[arg-type]
    )


def flat(text: str) -> str:
    return " ".join(text.split())


def section(text: str, title: str) -> str:
    """The plain-text section under the underlined heading ``title`` (to the next one)."""
    lines = text.splitlines()
    start = lines.index(title) + 2
    out = []
    for i in range(start, len(lines)):
        if i + 1 < len(lines) and set(lines[i + 1]) == {"-"} and lines[i]:
            break
        out.append(lines[i])
    return "\n".join(out)


def played(players: int, seed: str) -> Game:
    return play_out(new_game(players, seed=seed, target=61))


def test_a_count_is_a_count_and_for_two_is_points() -> None:
    """Every pegging line of whole games: "7♠, the count is 7", never "7♠ for 7"; the
    points keep "for two"."""
    for players, seed in ((2, "words-2"), (3, "words-3"), (4, "words-4")):
        game = played(players, seed)
        events = player_view(game, 0, 0).events
        mail = render_history(player_view(game, 0, len(game.events)), context(game, 0), events)
        for part in (mail.text, mail.html):
            said = flat(re.sub(r"<[^>]+>", "", part))
            assert not re.search(r"played \S+ for \d", said), said
            assert re.search(r"played \S+, the count is \d+", said)
        assert re.search(r"(for two|fifteen two)", flat(mail.text))


def test_the_computer_is_short_in_lines_and_tables_and_its_level_is_in_the_header() -> None:
    game = new_game(2, seed="short-name", target=61, first_dealer=1)
    rng = random.Random(5)
    while not (game.phase == PEGGING and game.count_cards):
        seat = game.to_act()[0]
        game.apply(game.forced_action() or computer.choose_action(game, seat, rng, "random"))
    mail = render_turn(player_view(game, 0, 0), context(game, 0))
    text = mail.text
    assert text.splitlines()[1] == "You vs Computer (hard)"
    for part in (text, mail.html):
        assert part.count("Computer (hard)") == 1  # the header alone
        assert "Computer (hard)'s" not in part and "Computer (hard)&#39;s" not in part
    assert "Computer's crib" in text
    assert re.search(r"^Score: You \d+, Computer \d+$", text, re.M)
    assert all(len(line) <= WIDTH for line in text.splitlines()), text
    # The table's values start in one column: no name breaks it.
    table = section(text, "The table")
    starts = {len(line) - len(line[2:].split("  ", 1)[1].lstrip()) for line in table.splitlines()}
    assert len(starts) == 1, table
    assert '<div class="u">You vs Computer (hard)</div>' in mail.html


def test_three_players_header_names_both_levels_once() -> None:
    game = new_game(3, seed="short-three", target=61)
    mail = render_turn(player_view(game, 0, 0), context(game, 0))
    assert "You vs Computer (hard) vs Computer2 (hard)" in mail.text
    assert mail.text.count("(hard)") == 2


def test_an_observer_sees_the_level_in_the_header_only() -> None:
    game = new_game(2, seed="observed", target=61)
    view = observer_view(game, 0)
    ctx = MailContext(
        game_id=7,
        names=("Alice", "Computer"),
        recipient_seat=OBSERVER,
        reply_hint="",
        levels=("", "medium"),
    )
    mail = render_observer(view, ctx)
    assert "Alice vs Computer (medium)" in mail.text
    assert mail.text.count("(medium)") == 1


def test_verbs_agree_with_one_name_and_with_several() -> None:
    assert they_do(["Dave"], "agrees", "agree") == "Dave agrees"
    assert they_do(["Bob", "Dave"], "agrees", "agree") == "Bob and Dave agree"
    game = new_game(4, seed="agree", target=61)
    people = People(player_view(game, 0), context(game, 0))
    assert people.side_wins(0) == "you and Computer2 win"
    assert people.side_wins(1) == "Computer and Dave win"
    game2 = new_game(2, seed="agree-2", target=61)
    two = People(player_view(game2, 0), context(game2, 0))
    assert two.side_wins(1) == "Computer wins" and two.side_wins(0) == "you win"
    assert two.plural([0]) and not two.plural([1]) and two.plural([1, 2])
    # The cut: "as soon as Bob cuts", "as soon as Bob and Dave cut".
    names = ("Alice", "Bob", "Carol", "Dave")
    ctx = MailContext(game_id=7, names=names, recipient_seat=0, reply_hint="")
    one = render_cut(ctx, ["Bob"], have_cut=True)
    several = render_cut(ctx, ["Bob", "Dave"], have_cut=True)
    assert "as soon as Bob cuts." in flat(one.text)
    assert "as soon as Bob and Dave cut." in flat(several.text)


def test_table_talk_has_its_own_heading() -> None:
    game = new_game(2, seed="talk-heading", target=61)
    said = (Said("Computer", "well played"), Said("Computer", "<b>again</b>"))
    mail = render_turn(player_view(game, 0, 0), context(game, 0, talk=said))
    text = mail.text
    assert "Table talk\n----------" in text
    talk = section(text, "Table talk")
    assert "Computer says: \u201cwell played\u201d" in talk
    assert "says:" not in section(text, "The game so far")
    assert "<h2>Table talk</h2>" in mail.html and "&lt;b&gt;again" in mail.html
    relay = render_talk(context(game, 0, talk=said))
    assert "Table talk\n----------" in relay.text
    assert "About your reply" not in relay.text and "About your reply" not in relay.html
    watched = render_talk(context(game, OBSERVER, talk=said), observer=True)
    assert "Table talk\n----------" in watched.text
    assert 'Reply "unwatch 7"' in watched.text and "say …" not in watched.text


def test_a_note_of_the_service_is_not_about_a_reply() -> None:
    game = new_game(2, seed="note", target=61)
    note = (Notice("info", "", "Dave closed game 7 to observers."),)
    mail = render_turn(player_view(game, 0, 0), context(game, 0, notices=note))
    assert "Note\n----" in mail.text and "About your reply" not in mail.text
    assert "<h2>Note</h2>" in mail.html
    answered = (Notice("applied", "observers on", "Game 7 is open to observers."), *note)
    mail = render_turn(player_view(game, 0, 0), context(game, 0, notices=answered))
    assert "About your reply" in mail.text


def test_a_long_hex_wraps_in_the_html_and_stays_whole_in_the_text() -> None:
    game = new_game(2, seed="hex", target=61)
    lines = (f"Deal commitment (pbem-deal/1): {COMMITMENT}",)
    mail = render_turn(player_view(game, 0, 0), context(game, 0, deal_lines=lines))
    assert "overflow-wrap:anywhere" in mail.html
    assert COMMITMENT in mail.text  # on a line of its own, within the width
    assert all(len(line) <= WIDTH for line in mail.text.splitlines())


def test_a_mail_outside_any_game_offers_only_what_works_there() -> None:
    ctx = MailContext(
        game_id=0,
        names=("Alice",),
        recipient_seat=0,
        reply_hint="",
        notices=(Notice("refused", "frobnicate", "not a command"),),
    )
    mail = render_error(ctx, None, "Not understood")
    footer = mail.text.split("\n-- \n", 1)[1]
    assert '"games"' in footer and '"help"' in footer and '"new"' in footer
    for word in ('"history"', '"hand"'):
        assert word not in footer and word not in mail.html
