"""One click a move: the ``mailto:`` links (RFC 6068) of the HTML part.

The link builder's encoding — ``?``, ``&``, ``=``, ``%``, ``+``, spaces, line breaks, any
non-ASCII text and the suits — read back by an RFC 6068 parser (tests/e2e/mailto.py);
which answers a mail offers (every card that may be played, ``go``, every way to lay
away, ``accept``/``muggins``, the rematch, the invitation's answers, the cut), that they
go to the mail's reply address with "Re: " and its subject, and that no mail offers one
where there is no move (waiting, paused, aborted, an observer, no reply address).
"""

from __future__ import annotations

import dataclasses
import html
import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import (
    DISCARD,
    PEGGING,
    SHOW,
    Accept,
    Game,
    Go,
    Muggins,
    Play,
    new_game,
    observer_view,
    player_view,
)
from engine.computer import choose_action
from engine.players import discard_values
from pbem.demo.bots import command_for
from pbem.render import MatchInfo, RenderedMail, render_observer, render_reminder, render_turn
from pbem.render.context import MailContext
from pbem.render.cut import render_cut
from pbem.render.hint import render_hint
from pbem.render.invite import SUBJECT as INVITE_SUBJECT
from pbem.render.invite import render_invite
from pbem.render.links import DISCARD_LINKS, link, mailto, move_links, reply_subject
from pbem.render.status import render_aborted, render_status_change
from pbem.service.game.hints import advice
from tests.e2e.mailto import Mailto, hrefs_in, parse_mailto
from tests.pbem.test_render import assert_well_formed, ctx_for

ADDRESS = "cribbage+k5x2ablq7vrm4ysoyhd3@pbem.test"

# RFC 6068: mailtoURI = "mailto:" [ to ] [ hfields ]; with qchar = unreserved /
# pct-encoded / some-delims. What the builder writes is stricter still: in the fields
# nothing but unreserved characters and percent-encoded bytes.
_URI = re.compile(
    r"mailto:(?:[A-Za-z0-9._~+@-]|%[0-9A-F]{2})+"
    r"(\?[a-z]+=(?:[A-Za-z0-9._~-]|%[0-9A-F]{2})*(&[a-z]+=(?:[A-Za-z0-9._~-]|%[0-9A-F]{2})*)*)?"
)


def read(uri: str) -> Mailto:
    assert _URI.fullmatch(uri), uri
    return parse_mailto(uri)


# -- the builder ------------------------------------------------------------------------


def test_a_link_is_percent_encoded_utf8_with_an_ampersand_between_fields() -> None:
    uri = mailto(ADDRESS, subject="Re: [Cribbage 12] Hand 3 — your turn: play", body="play 7♠")
    assert uri == (
        "mailto:cribbage+k5x2ablq7vrm4ysoyhd3@pbem.test"
        "?subject=Re%3A%20%5BCribbage%2012%5D%20Hand%203%20%E2%80%94%20your%20turn%3A%20play"
        "&body=play%207%E2%99%A0"
    )
    link = read(uri)
    assert link.to == (ADDRESS,)
    assert link.subject == "Re: [Cribbage 12] Hand 3 — your turn: play"
    assert link.body == "play 7♠"


@pytest.mark.parametrize(
    ("text", "encoded"),
    [
        ("a?b", "a%3Fb"),
        ("a&body=x", "a%26body%3Dx"),
        ("100%", "100%25"),
        ("%41", "%2541"),
        ("two  spaces ", "two%20%20spaces%20"),
        ("a+b", "a%2Bb"),  # never "+" (a form parser's space)
        ("#frag", "%23frag"),
        ("é", "%C3%A9"),
        ("♣♦♥♠", "%E2%99%A3%E2%99%A6%E2%99%A5%E2%99%A0"),
        ("10♥ J♦", "10%E2%99%A5%20J%E2%99%A6"),
        ("日本", "%E6%97%A5%E6%9C%AC"),
        ("😀", "%F0%9F%98%80"),
        ("a-b.c_d~e", "a-b.c_d~e"),
    ],
)
def test_each_special_character_is_encoded(text: str, encoded: str) -> None:
    uri = mailto(ADDRESS, subject=text, body=text)
    assert uri == f"mailto:{ADDRESS}?subject={encoded}&body={encoded}"
    link = read(uri)
    assert (link.subject, link.body) == (text, text)


def test_line_breaks_in_the_body_are_crlf() -> None:
    uri = mailto(ADDRESS, body="play 7s\nsay nice\r\nhand\rx")
    assert uri.endswith("?body=play%207s%0D%0Asay%20nice%0D%0Ahand%0D%0Ax")
    assert read(uri).body == "play 7s\r\nsay nice\r\nhand\r\nx"


def test_empty_fields_are_left_out_and_a_bad_address_refused() -> None:
    assert mailto(ADDRESS) == f"mailto:{ADDRESS}"
    assert mailto(ADDRESS, body="go") == f"mailto:{ADDRESS}?body=go"
    assert mailto("a b?c@x.test", subject="s") == "mailto:a%20b%3Fc@x.test?subject=s"
    assert read(mailto("a b?c@x.test", subject="s")).to == ("a b?c@x.test",)
    for bad in ("", "a@x.test\r\nBcc: eve@evil.test", "a@x\n"):
        with pytest.raises(ValueError):
            mailto(bad, subject="s")


@given(st.text(), st.text())
def test_any_subject_and_body_read_back(subject: str, body: str) -> None:
    link = read(mailto(ADDRESS, subject=subject, body=body))
    want_body = body.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\r\n")
    assert (link.subject, link.body) == (subject, want_body)
    assert link.to == (ADDRESS,)


def test_the_parser_refuses_what_is_not_rfc_6068() -> None:
    for bad in (
        "http://example.com/",
        "mailto:a@b.test#frag",
        "mailto:a@b.test?subject",
        "mailto:a@b.test?subject=a&subject=b",
        "mailto:a@b.test?body=%FF",
        "mailto:?subject=x",
    ):
        with pytest.raises(ValueError):
            parse_mailto(bad)
    assert parse_mailto("mailto:?to=a@b.test&body=x").to == ("a@b.test",)


@given(st.text(), st.text(min_size=1).filter(lambda t: "\r" not in t and "\n" not in t))
def test_a_links_href_is_the_mailto_of_its_answer(subject: str, command: str) -> None:
    made = link(ADDRESS, subject, command)
    assert made.href == mailto(ADDRESS, subject=reply_subject(subject), body=command)
    assert made.command == command and made.label == (command,)


def test_reply_subject_adds_re_once() -> None:
    assert reply_subject("[Cribbage 3] Hint: your play") == "Re: [Cribbage 3] Hint: your play"
    assert reply_subject("Re: [Cribbage 3] x") == "Re: [Cribbage 3] x"
    assert reply_subject("RE: x") == "RE: x"


# -- which answers a mail offers --------------------------------------------------------


def links_of(mail: RenderedMail) -> list[Mailto]:
    """The mail's links, each checked well formed; and none in the text part."""
    assert_well_formed(mail.html)
    assert "mailto:" not in mail.text
    hrefs = hrefs_in(mail.html)
    assert all(h.startswith("mailto:") for h in hrefs)
    links = [read(h) for h in hrefs]
    for found in links:
        assert found.to == (ADDRESS,)
        if found.subject != f"Re: {mail.subject}":
            # The grid of pairs: the command alone, to keep the mail under its bound.
            assert found.subject == "" and len(found.body.split()) == 3, found
    return links


def bodies(mail: RenderedMail) -> list[str]:
    return [link.body for link in links_of(mail)]


def legal_commands(game: Game, seat: int) -> set[str]:
    return {command_for(a).lower() for a in game.legal_actions(seat)}


def turn_mail(
    game: Game, seat: int, reply_to: str = ADDRESS, **kw: bool | MatchInfo
) -> RenderedMail:
    kw.setdefault("suggest", True)  # a game with hints (see the test without them)
    ctx = dataclasses.replace(ctx_for(game, seat), reply_to=reply_to, **kw)  # type: ignore[arg-type]
    return render_turn(player_view(game, seat), ctx)


def advance(game: Game, rng: random.Random, done: object, limit: int = 3000) -> None:
    for _ in range(limit):
        if done(game):  # type: ignore[operator]
            return
        assert not game.is_over, "the game ended first"
        game.apply(choose_action(game, game.to_act()[0], rng, "random"))
    raise AssertionError("never reached")


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_legal_move_has_a_link_and_every_link_is_legal(players: int) -> None:
    """Through whole games: at each move the mover's mail links legal moves only, and all
    of them — every card that may be played, go, every card to lay away with three or
    four players, all fifteen pairs with two; the reply line's move (a game with hints)
    first — and the others' mails link none."""
    game = new_game(players, seed=f"links-{players}", target=61)
    rng = random.Random(players)
    seen: set[str] = set()
    while not game.is_over:
        mover = game.to_act()[0]
        for seat in range(players):
            mail = turn_mail(game, seat)
            offered = bodies(mail)
            legal = legal_commands(game, seat)
            if seat in game.to_act() and game.phase in (DISCARD, PEGGING):
                assert set(offered) == legal
                if game.phase == DISCARD and players == 2:
                    assert len(set(offered)) == DISCARD_LINKS == 15
                if len(legal) > 1 and game.phase == PEGGING:
                    assert offered[0] == reply_line(mail)  # the reply line's card
                seen.add(offered[0].split()[0])
            else:
                assert offered == [], (game.phase, seat)
        game.apply(choose_action(game, mover, rng, "random"))
    assert {"discard", "play"} <= seen  # go: see test_the_go_link_is_the_only_one…


def reply_line(mail: RenderedMail) -> str:
    """The text part's copy line (in ASCII, as its "Plain letters" note writes it)."""
    found = re.search(r'Plain letters work too: "([^"]+)"', " ".join(mail.text.split()))
    assert found, mail.text
    return found.group(1)


def test_the_discard_grid_lists_the_fifteen_pairs_in_card_order() -> None:
    """Never ranked (a free hint): the pairs in the hand's card order, a row per card;
    the reply line's pair (a game with hints) is a link of its own and starred."""
    game = new_game(2, seed="pairs")
    view = player_view(game, 0)
    mail = turn_mail(game, 0)
    offered = bodies(mail)
    pairs = [
        f"discard {a.ascii.lower()} {b.ascii.lower()}"
        for i, a in enumerate(view.holding)
        for b in view.holding[i + 1 :]
    ]
    assert offered == pairs
    starred = reply_line(mail).removeprefix("discard ").split()
    (marked,) = re.findall(r'<a href="([^"]+)">[^<]*★</a>', mail.html)
    assert read(html.unescape(marked)).body == "discard " + " ".join(starred)
    assert len(discard_values(view)) == 15
    flat = " ".join(html.unescape(mail.html).split())
    assert flat.count("★") == 2  # the starred pair, and the note that says what it is
    assert "A click lays away the row's card and the one clicked" in flat
    grid = mail.html.split('<table class="w">', 1)[1].split("</table>", 1)[0]
    assert grid.count("<tr>") == 5
    # Three players lay away one card: all five are offered, and no note.
    three = new_game(3, seed="pairs")
    mail = turn_mail(three, 1)
    assert sorted(set(bodies(mail))) == sorted(
        f"discard {c.ascii.lower()}" for c in three.holding(1)
    )
    assert "ways by the reply line" not in mail.html


def test_muggins_answers_are_links_and_a_count_is_not() -> None:
    game = new_game(2, seed="muggins-links", muggins=True)
    rng = random.Random(1)
    advance(game, rng, lambda g: g.phase == SHOW and not g.awaiting_muggins)
    counter = game.to_act()[0]
    assert bodies(turn_mail(game, counter)) == []  # "count N": the number is theirs to find
    advance(game, rng, lambda g: g.awaiting_muggins)
    answerer = game.to_act()[0]
    assert set(bodies(turn_mail(game, answerer))) == {"accept", "muggins"}
    assert {type(a) for a in game.legal_actions(answerer)} == {Accept, Muggins}


def test_the_go_link_is_the_only_one_when_go_is_the_only_move() -> None:
    game = new_game(2, seed="go-link")
    rng = random.Random(3)
    advance(
        game,
        rng,
        lambda g: g.phase == PEGGING and any(isinstance(a, Go) for a in g.legal_actions()),
    )
    seat = game.to_act()[0]
    mail = turn_mail(game, seat)
    assert bodies(mail) == ["go"]
    assert mail.subject.endswith("your turn: go")


def test_play_links_write_ascii_cards_and_show_the_suits() -> None:
    game = new_game(2, seed="play-links")
    rng = random.Random(4)
    advance(game, rng, lambda g: g.phase == PEGGING and len(g.legal_actions()) > 1)
    seat = game.to_act()[0]
    mail = turn_mail(game, seat)
    playable = [a.card for a in game.legal_actions(seat) if isinstance(a, Play)]
    offered = bodies(mail)
    assert offered[1:] == [f"play {c.ascii.lower()}" for c in sorted(playable)]
    assert offered[0] == reply_line(mail)  # the reply line's card, one click too
    box = mail.html.split('<div class="k">', 1)[1].split("</div>", 1)[0]
    for card in playable:
        assert str(card) in box  # the button shows the card with its suit
    assert box.count("★") == 1  # … and the reply line's card is marked among them


def test_no_links_without_a_reply_address_or_a_move() -> None:
    game = new_game(2, seed="no-links")
    assert move_links(player_view(game, 0), "", "s") == ()
    plain = turn_mail(game, 0, reply_to="")
    assert hrefs_in(plain.html) == []
    # Paused: moves wait, so none is offered (the reply to "hand" while paused).
    assert bodies(turn_mail(game, 0, paused=True)) == []
    view = player_view(game, 0)
    ctx = ctx_for(game, 0, reply_to=ADDRESS, suggest=True)
    assert bodies(render_status_change(view, ctx, "paused", "a break")) == []
    assert bodies(render_aborted(view, ctx, "gone")) == []
    resumed = render_status_change(view, ctx, "active", "back")
    assert len(set(bodies(resumed))) == DISCARD_LINKS
    # An observer is mailed the public board: nothing to click.
    watching = render_observer(observer_view(game), ctx_for(game, -1, reply_to=ADDRESS))
    assert hrefs_in(watching.html) == []


def test_the_reminder_offers_the_moves_too() -> None:
    game = new_game(3, seed="reminder-links")
    mail = render_reminder(player_view(game, 1), ctx_for(game, 1, reply_to=ADDRESS), "2 days")
    assert sorted(bodies(mail)) == sorted(legal_commands(game, 1))
    assert len(bodies(mail)) == 5


def _finished(seed: str) -> Game:
    game = new_game(2, seed=seed, target=61)
    advance(game, random.Random(5), lambda g: g.is_over)
    return game


def test_the_game_over_mail_offers_a_rematch() -> None:
    """Every answer the lines under the result offer is a link: the rematch, the
    archive, a rematch as a match."""
    game = _finished("over-links")
    for seat in (0, 1):
        mail = turn_mail(game, seat)
        assert mail.subject.startswith("[Cribbage 12] Game over")
        assert bodies(mail) == ["rematch", "archive"]
        ending = ('Reply "rematch" for a game; "rematch best of 3" makes it a match.',)
        mail = turn_mail(game, seat, ending=ending)  # type: ignore[arg-type]
        assert bodies(mail) == ["rematch", "rematch best of 3"]
        result = mail.html.split('<div class="b g">', 1)[1]
        assert result.index("mailto:") < result.index("</div>\n</div>")  # in the result box


def test_no_rematch_while_the_match_goes_on() -> None:
    game = _finished("match-links")
    outcome = game.outcome
    assert outcome is not None
    winner = outcome.winner
    going_on = MatchInfo(best_of=5, game_no=1, before=(0, 0))
    assert bodies(turn_mail(game, 0, match=going_on)) == ["archive"]
    before = tuple(2 if side == winner else 0 for side in range(2))
    decided = MatchInfo(best_of=5, game_no=3, before=before)
    assert bodies(turn_mail(game, 0, match=decided)) == ["rematch", "archive"]


def test_the_hint_table_lays_each_row_away_in_one_click() -> None:
    game = new_game(2, seed="hint-links")
    view = player_view(game, 0)
    given = advice(game, 0)
    assert given.discard is not None
    mail = render_hint(view, ctx_for(game, 0, reply_to=ADDRESS), given)
    assert mail.subject == "[Cribbage 12] Hint: your discard"
    offered = bodies(mail)
    table = [
        "discard " + " ".join(c.ascii.lower() for c in o.laid_away)
        for o in given.discard.options[:6]
    ]
    # The table's rows, best first; the prompt does not offer them again.
    assert offered == table
    assert "A click on the cards laid away" in mail.html
    # In the play: the prompt's cards, no table of discards.
    rng = random.Random(6)
    advance(game, rng, lambda g: g.phase == PEGGING and len(g.legal_actions()) > 1)
    seat = game.to_act()[0]
    mail = render_hint(
        player_view(game, seat), ctx_for(game, seat, reply_to=ADDRESS), advice(game, seat)
    )
    assert sorted(bodies(mail)) == sorted(legal_commands(game, seat))


def test_the_invitation_offers_its_three_answers() -> None:
    mail = render_invite("Alice", "alice@example.com", "2 players", "2026-05-08", reply_to=ADDRESS)
    assert mail.subject == INVITE_SUBJECT
    assert bodies(mail) == ["accept", "decline", "never"]
    assert hrefs_in(render_invite("Alice", "a@example.com", "x", "2026-05-08").html) == []


def test_the_cut_request_offers_cut() -> None:
    ctx = MailContext(
        game_id=7, names=("Alice", "Bob"), recipient_seat=0, reply_hint="", reply_to=ADDRESS
    )
    mail = render_cut(ctx, ["Bob"], have_cut=False)
    assert bodies(mail) == ["cut"]
    assert "cut 17 purple elephants" in mail.text  # the text part keeps its example
    assert bodies(render_cut(ctx, ["Bob"], have_cut=True)) == []
    assert bodies(render_cut(ctx, [], have_cut=False, closing=True)) == []
    none = dataclasses.replace(ctx, reply_to="")
    assert hrefs_in(render_cut(none, ["Bob"], have_cut=False).html) == []


def test_discard_then_play_links_are_the_views_own_cards() -> None:
    """A link names only the recipient's own cards: every card in a link is in the hand."""
    game = new_game(4, seed="own-cards")
    rng = random.Random(8)
    for _ in range(60):
        if game.is_over:
            break
        for seat in game.to_act():
            for body in bodies(turn_mail(game, seat)):
                _, *named = body.split()
                held = {c.ascii.lower() for c in game.holding(seat)}
                assert set(named) <= held, (body, held)
        game.apply(choose_action(game, game.to_act()[0], rng, "random"))


def test_without_hints_every_pair_is_a_link_and_none_is_marked() -> None:
    """A game between people without hints: all fifteen pairs are links, in card order,
    none starred and no reply line's pair (that would be a free hint); plays are linked."""
    game = new_game(2, seed="links-fair", target=61)
    seat = game.to_act()[0]
    assert game.phase == DISCARD
    plain = turn_mail(game, seat, suggest=False)
    assert len(bodies(plain)) == len(set(bodies(plain))) == DISCARD_LINKS
    assert set(bodies(plain)) == legal_commands(game, seat)
    assert "★" not in plain.html
    assert len(set(bodies(turn_mail(game, seat, suggest=True)))) == DISCARD_LINKS
    rng = random.Random(3)
    advance(game, rng, lambda g: g.phase == PEGGING)
    mover = game.to_act()[0]
    assert set(bodies(turn_mail(game, mover, suggest=False))) == legal_commands(game, mover)
