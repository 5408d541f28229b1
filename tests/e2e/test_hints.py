"""Hints by mail through the Maildirs and the database (both backends): ``hint`` against
the computer, the refusal in a game between people, the agreement (``hints on`` from
every player), ``hints off``, the computer's level by mail, and that a hint never shows
a card its player may not know."""

from __future__ import annotations

import random
from email.message import EmailMessage

import pytest

from engine import DISCARD, PEGGING, Card, Discard, Play, PlayerView, computer
from pbem.commands import computer_levels
from pbem.demo.bots import text_of
from pbem.render.prompt import suggested_action
from tests.e2e.helpers import (
    ALICE,
    BOB,
    CAROL,
    DAVE,
    DOMAIN,
    Harness,
    about,
    hidden_from,
    plain_mail,
)

A, B, C = ALICE[0], BOB[0], CAROL[0]
SERVICE = f"cribbage@{DOMAIN}"
COMPUTER = (f"computer@{DOMAIN}", "Computer")


def flat(text: str) -> str:
    return " ".join(text.split())


def html_of(msg: EmailMessage) -> str:
    part = msg.get_body(("html",))
    assert part is not None
    return str(part.get_content())


def both_parts(msg: EmailMessage) -> str:
    return text_of(msg) + "\n" + html_of(msg)


def cards_named(text: str, cards: set[Card]) -> set[Card]:
    return {c for c in cards if str(c) in text}


def vs_computer(h: Harness, level: str | None = None) -> int:
    game_id = h.service.new_game(
        [ALICE, COMPUTER], target=61, seed="hints-e2e", computer=[1], level=level
    )
    h.step()
    return game_id


def test_hint_at_the_discard_against_the_computer(harness: Harness) -> None:
    h = harness
    game_id = vs_computer(h)
    assert h.game_row(game_id).hints
    game = h.game(game_id)
    assert game.phase == DISCARD
    before = h.count(A)
    h.answer(A, "hint")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    mails = h.new_mail(A, before)
    assert len(mails) == 1, [m["Subject"] for m in mails]
    hint = mails[0]
    assert "Hint: your discard" in about(hint)
    text = flat(text_of(hint))
    assert "ways to lay away 2 cards" in text
    assert "Total" in text and "Best: lay away" in text
    # Threaded after the player's last mail, to the player only.
    assert hint["In-Reply-To"]
    assert all(row.recipient == A for row in h.outbox())
    assert not cards_named(both_parts(hint), hidden_from(h.game(game_id), 0))
    # The reply line under the hint offers the medium choice, as in every mail.
    suggested = suggested_action(h.view(A))
    assert isinstance(suggested, Discard)
    assert f"discard {' '.join(str(c) for c in suggested.cards)}" in text


def test_hint_in_the_play_and_the_review_of_the_discard(harness: Harness) -> None:
    h = harness
    game_id = vs_computer(h)
    game = h.game(game_id)
    h.move(game_id, computer.choose_action(game, 0, random.Random(1), "random"))
    before = h.count(A)
    h.answer(A, "hint")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    hint = h.new_mail(A, before)[-1]
    text = flat(text_of(hint))
    game = h.game(game_id)
    if game.phase == PEGGING and 0 in game.to_act() and game.legal_actions(0):
        assert "Hint: your play" in about(hint)
        assert "Suggested: play" in text and "leaves the count at" in text
    assert "Hint: your last discard" in text
    assert "In this hand you held" in text
    assert not cards_named(both_parts(hint), hidden_from(game, 0))


def test_hints_off_against_the_computer_and_on_again(harness: Harness) -> None:
    h = harness
    game_id = vs_computer(h)
    h.answer(A, "hints off")
    assert h.last_inbound().status == "applied"
    assert not h.game_row(game_id).hints
    assert "Hints are off in this game" in flat(text_of(h.latest(A)))
    h.answer(A, "hint")
    assert h.last_inbound().status == "rejected"
    text = flat(text_of(h.latest(A)))
    assert "Hints are off in this game: you turned them off." in text
    h.answer(A, "hints on")
    assert h.game_row(game_id).hints
    h.answer(A, "hint")
    assert h.last_inbound().status == "applied"
    assert "Hint:" in about(h.latest(A))


def test_hints_between_people_need_every_player(harness: Harness) -> None:
    h = harness
    game_id = h.new_game((ALICE, BOB, CAROL))
    assert not h.game_row(game_id).hints
    # Off: a clear refusal, saying how to turn them on.
    h.answer(A, "hint")
    assert h.last_inbound().status == "rejected"
    text = flat(text_of(h.latest(A)))
    assert "Hints are off in this game: it is played between people" in text
    assert "hints on" in text
    # Alice asks: Bob and Carol are told.
    b, c = h.count(B), h.count(C)
    h.answer(A, "hints on")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert "waiting for Bob, Carol" in flat(text_of(h.latest(A)))
    for who, before in ((B, b), (C, c)):
        told = h.new_mail(who, before)
        assert told and "Alice would like hints" in flat(text_of(told[-1]))
    assert not h.game_row(game_id).hints
    h.answer(A, "hint")
    assert "you agreed to them, but not every player has yet" in flat(text_of(h.latest(A)))
    h.answer(B, "hints on")
    assert not h.game_row(game_id).hints
    a, c = h.count(A), h.count(C)
    h.answer(C, "hints on")
    assert h.game_row(game_id).hints
    assert "Every player agreed: hints are on" in flat(text_of(h.latest(C)))
    for who, before in ((A, a),):
        told = h.new_mail(who, before)
        assert told and "hints are on in this game" in flat(text_of(told[-1]))
    # Now a hint, for Bob alone; it shows none of the cards Bob may not know.
    others = {A: h.count(A), C: h.count(C)}
    before = h.count(B)
    h.answer(B, "hint")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    hint = h.new_mail(B, before)[-1]
    assert "Hint:" in about(hint)
    assert not cards_named(both_parts(hint), hidden_from(h.game(game_id), 1))
    assert {who: h.count(who) for who in others} == others
    # Carol turns them off: everyone is told, and hints stop.
    h.answer(C, "hints off")
    assert not h.game_row(game_id).hints
    assert "Carol turned hints off" in flat(text_of(h.latest(A)))
    h.answer(B, "hint")
    assert h.last_inbound().status == "rejected"


def lines_of(msg: EmailMessage) -> str:
    """The plain text of ``msg`` with its lines ending in "\\n"."""
    return text_of(msg).replace("\r\n", "\n")


def _best_line(view: PlayerView) -> str:
    """The reply line of the computer's choice for ``view``, as a mail shows it."""
    best = suggested_action(view)
    if isinstance(best, Discard):
        return "discard " + " ".join(str(c) for c in best.cards)
    assert isinstance(best, Play)
    return f"play {best.card}"


def test_the_reply_line_suggests_a_move_only_where_hints_are_on(harness: Harness) -> None:
    """Between people without hints, no mail's reply line is the computer's choice (a
    free hint to both sides): it lists the legal choices. Once everyone agreed to
    hints, it suggests the computer's move, as against the computer."""
    h = harness
    game_id = h.new_game((ALICE, BOB), seed="fair-help")
    assert not h.game_row(game_id).hints
    for address in (A, B):
        view = h.view(address)
        text = lines_of(h.latest(address))
        holding = " ".join(str(c) for c in view.holding)
        assert f"        discard two of: {holding}\n" in text
        assert _best_line(view) + "\n" not in text
        markup = html_of(h.latest(address))  # the HTML part: the grid of all 15 pairs
        assert '<table class="w">' in markup and "★" not in markup
    # Into the play: whoever holds two cards that may be played sees them listed.
    game = h.play_until(
        game_id,
        lambda g: g.phase == PEGGING and len(g.legal_actions(g.to_act()[0])) > 1,
    )
    seat = game.to_act()[0]
    address = h.address_of(game_id, seat)
    view = h.view(address)
    assert view.my_turn and len(view.playable) > 1
    text = lines_of(h.latest(address))
    playable = " ".join(str(c) for c in view.playable)
    assert f"        play one of: {playable}\n" in text
    assert "        " + _best_line(view) + "\n" not in text
    # Both agree to hints: the reply line is the computer's choice.
    h.answer(A, "hints on")
    h.answer(B, "hints on")
    assert h.game_row(game_id).hints
    h.answer(address, "hand")
    view = h.view(address)
    text = lines_of(h.latest(address))
    assert "        " + _best_line(view) + "\n" in text
    assert "play one of:" not in text


def test_the_level_by_mail_and_on_the_board(harness: Harness) -> None:
    h = harness
    vs_computer(h)  # Alice plays here already: the lobby (invite-only) answers her
    level = computer_levels()[0]
    h.deliver(plain_mail(A, SERVICE, f"new level {level} to 61"))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    game_id = h.last_inbound().game_id
    assert game_id is not None
    assert h.game_row(game_id).settings["levels"] == {"1": level}
    assert f"Computer ({level})" in flat(text_of(h.latest(A)))
    # The policy starts one game by a From alone at a time: Alice answers its first mail.
    h.answer(A, "hand")
    # The hard computer plays its seat; 3 players: each computer seat at the level.
    h.deliver(plain_mail(A, SERVICE, "play computer 3 players level hard"))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    game_id = h.last_inbound().game_id
    assert game_id is not None
    assert h.game_row(game_id).settings["levels"] == {"1": "hard", "2": "hard"}
    text = flat(text_of(h.latest(A)))
    # The header says the levels; the lines and tables name the short names.
    assert "You vs Computer (hard) vs Computer2 (hard)" in text
    assert "Computer (hard)'s" not in text and "Computer2 (hard)'s" not in text
    h.answer(A, "hand")
    # An old name is the level it now is.
    h.deliver(plain_mail(A, SERVICE, "new level good"))
    game_id = h.last_inbound().game_id
    assert game_id is not None
    assert h.game_row(game_id).settings["levels"] == {"1": "medium"}
    h.deliver(plain_mail(A, SERVICE, "new level grandmaster"))
    assert h.last_inbound().status == "rejected"
    text = flat(text_of(h.latest(A)))
    assert "'grandmaster' is not a level of the computer" in text
    assert ", ".join(computer_levels()) in text


def test_a_hint_after_the_game_looks_back_at_the_last_discard(harness: Harness) -> None:
    h = harness
    game_id = vs_computer(h, level="hard")
    assert h.game_row(game_id).settings["levels"] == {"1": "hard"}
    game = h.game(game_id)
    h.move(game_id, computer.choose_action(game, 0, random.Random(2), "random"))
    h.answer(A, "resign confirm")
    assert h.game(game_id).is_over
    before = h.count(A)
    h.answer(A, "hint")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    (hint,) = h.new_mail(A, before)
    assert "Hint: your last discard" in about(hint)
    text = flat(text_of(hint))
    assert "In this hand you held" in text or "In hand 1 you held" in text
    assert "Computer (hard)" in text


@pytest.mark.parametrize("players", [2, 3, 4])
def test_hints_by_mail_name_no_hidden_card(harness: Harness, players: int) -> None:
    """Every player agrees; then each asks for a hint at the deal and in the play: each
    hint goes to its player alone and names no card that player may not know."""
    h = harness
    people = (ALICE, BOB, CAROL, DAVE)[:players]
    game_id = h.new_game(people)
    for address, _ in people:
        h.answer(address, "hints on")
    assert h.game_row(game_id).hints
    rng = random.Random(players)
    for moment in ("deal", "play"):
        if moment == "play":
            game = h.game(game_id)
            while game.phase == DISCARD:
                seat = game.to_act()[0]
                h.move(game_id, computer.choose_action(game, seat, rng, "random"))
                game = h.game(game_id)
        for seat, (address, _) in enumerate(people):
            counts = {a: h.count(a) for a, _ in people}
            h.answer(address, "hint")
            assert h.last_inbound().status == "applied", h.last_inbound().reason
            (hint,) = h.new_mail(address, counts[address])
            assert all(h.count(a) == n for a, n in counts.items() if a != address)
            game = h.game(game_id)
            hidden = hidden_from(game, seat)
            assert not cards_named(both_parts(hint), hidden), (moment, seat)
            text = flat(text_of(hint))
            if moment == "deal":
                assert "Hint: your discard" in about(hint)
            else:
                assert "In this hand you held" in text
