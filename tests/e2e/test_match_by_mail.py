"""Rematches, matches and table talk by mail: through the daemon and real Maildirs, on
both databases. A game is played out by mail (`Harness.play_until`); the others end by
resignation, with ``no skunk`` so that each game is worth one game point."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from engine import Game
from pbem.demo.bots import command_for, text_of
from pbem.render.invite import SUBJECT as INVITE_SUBJECT
from pbem.store import models as m
from tests.e2e.helpers import (
    ALICE,
    BOB,
    CAROL,
    SERVICE_ADDRESS,
    Harness,
    about,
    hidden_from,
    plain_mail,
    reply,
)

A, B, C = ALICE[0], BOB[0], CAROL[0]
COMPUTER = "computer@pbem.test"


def ask(h: Harness, sender: str, body: str) -> None:
    h.deliver(plain_mail(sender, SERVICE_ADDRESS, body))


def ask_confirmed(h: Harness, sender: str, body: str) -> m.Inbound:
    """``sender`` asks ``body`` by plain mail: a From alone proves nothing, so the
    request is held and one confirmation request goes out; ``sender`` clicks it, and the
    request is done. The answer's inbound row (the one the request's outcome is on)."""
    ask(h, sender, body)
    held = h.last_inbound()
    assert held.status == "applied" and "held until" in (held.reason or ""), held.reason
    return h.confirm(sender)


def flat(msg: EmailMessage) -> str:
    """A mail's text part, its lines joined (the text is wrapped at 78 columns)."""
    return " ".join(text_of(msg).split())


def html_of(msg: EmailMessage) -> str:
    part = msg.get_body(("html",))
    assert part is not None
    return str(part.get_content())


def game_mails(h: Harness, address: str, game_id: int) -> list[EmailMessage]:
    return [msg for msg in h.received(address) if f"[Cribbage {game_id}]" in about(msg)]


def answer_invite(h: Harness, address: str, body: str) -> None:
    invites = [msg for msg in h.received(address) if about(msg) == INVITE_SUBJECT]
    h.deliver(reply(invites[-1], address, address.split("@")[0].title(), body))


def reply_in(h: Harness, address: str, game_id: int, body: str) -> None:
    """``address`` replies ``body`` to its latest mail of game ``game_id``."""
    latest = game_mails(h, address, game_id)[-1]
    h.deliver(reply(latest, address, address.split("@")[0].title(), body))


def matches(h: Harness) -> list[m.Match]:
    with Session(h.db) as session:
        rows = list(session.exec(select(m.Match).order_by(col(m.Match.id))).all())
        for row in rows:
            session.expunge(row)
        return rows


def last_game(h: Harness) -> int:
    with Session(h.db) as session:
        game_id = session.exec(select(m.Game.id).order_by(col(m.Game.id).desc())).first()
        assert game_id is not None
        return game_id


def refusal(h: Harness, address: str) -> str:
    row = h.last_inbound()
    assert row.status == "rejected", row.reason
    return flat(h.latest(address))


# -- a whole match by mail -----------------------------------------------------------------


def test_challenge_accept_game_rematch_match_to_the_end(harness: Harness) -> None:
    """Alice challenges Bob, Bob accepts, the game is played out by mail; the loser asks a
    rematch as a match (best of 3) in the game's thread, the other accepts, and games
    follow one another (the loser dealing first) until one side has two game points."""
    h = harness
    h.new_game()  # Alice and Bob are players already (the lobby is invite-only)
    ask_confirmed(h, A, "challenge bob@example.org to 61 no skunk")
    answer_invite(h, B, "accept")
    first = h.last_inbound().game_id
    assert first is not None
    game = h.play_until(first, lambda g: g.is_over)
    assert game.outcome is not None
    loser = 1 - game.outcome.winner
    loser_address = (A, B)[loser]
    winner_address = (A, B)[game.outcome.winner]
    assert "Game over" in about(game_mails(h, loser_address, first)[-1])
    # The loser asks for a rematch in the finished game's thread: an invitation.
    reply_in(h, loser_address, first, "rematch match best of 3")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert "Rematch asked" in about(h.latest(loser_address))
    answer_invite(h, winner_address, "accept")
    second = h.last_inbound().game_id
    assert second is not None and second != first
    row = h.game_row(second)
    assert row.rematch_of == first and row.match_id is not None
    assert row.match_info == {"best_of": 3, "game": 1, "before": []}
    assert [h.address_of(second, s) for s in (0, 1)] == [A, B]  # the same seats
    assert h.game(second).settings.first_dealer == loser  # the loser deals first
    assert h.game(second).settings.target == 61 and h.game(second).settings.skunk == "none"
    # Every mail of a game of the match names the match (text and HTML).
    opening = game_mails(h, A, second)[-1]
    assert "Match, best of 3 · game 1 · You 0, Bob 0" in flat(opening)
    assert "Match, best of 3 · game 1" in html_of(opening)
    # Bob resigns game 1 of the match: Alice 1–0, and game 2 starts at once.
    reply_in(h, B, second, "resign confirm")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    over = game_mails(h, A, second)[-1]
    assert "Match, best of 3 · game 1 · You 1, Bob 0" in flat(over)
    assert "the match goes on" in flat(over)
    third = last_game(h)
    assert third != second and h.game_row(third).rematch_of == second
    assert h.game_row(third).match_info == {"best_of": 3, "game": 2, "before": [1, 0]}
    assert h.game(third).settings.first_dealer == 1  # Bob lost: Bob deals first
    assert "Match, best of 3 · game 2 · You 1, Bob 0" in flat(game_mails(h, A, third)[-1])
    (match,) = matches(h)
    assert match.status == "active" and match.score == [1, 0]
    # The finished game's archive names its match.
    reply_in(h, A, second, "archive")
    (attached,) = [
        p for p in h.latest(A).iter_attachments() if str(p.get_filename()).endswith(".json")
    ]
    archive = json.loads(attached.get_content())
    assert archive["match"] == {"best_of": 3, "game": 1, "before": []}
    assert archive["rematch_of"] == first
    # Alice resigns game 2 (1–1), Bob resigns game 3: Alice wins the match 2–1.
    reply_in(h, A, third, "resign confirm")
    fourth = last_game(h)
    assert h.game_row(fourth).match_info == {"best_of": 3, "game": 3, "before": [1, 1]}
    reply_in(h, B, fourth, "resign confirm")
    final = flat(game_mails(h, B, fourth)[-1])
    assert "You 1, Alice 2 — Alice wins the match; the match is over." in final
    assert last_game(h) == fourth  # no game after the match
    (match,) = matches(h)
    assert match.status == "finished" and match.score == [2, 1] and match.winner_side == 0
    # "games" lists the match's games.
    ask(h, A, "games")
    listing = flat(h.latest(A))
    assert f"Game {fourth} v Bob: you won" in listing and "match best of 3, game 3" in listing


def test_play_computer_match_starts_the_next_game_when_one_ends(harness: Harness) -> None:
    h = harness
    h.new_game()
    ask(h, A, "play computer to 61 no skunk match best of 3")
    first = h.last_inbound().game_id
    assert first is not None
    assert h.game_row(first).match_info == {"best_of": 3, "game": 1, "before": []}
    # The level is in the header alone; the lines name a short "Computer".
    assert "You vs Computer (medium)" in flat(h.latest(A))
    assert "Match, best of 3 · game 1 · You 0, Computer 0" in flat(h.latest(A))
    reply_in(h, A, first, "resign confirm")
    second = last_game(h)
    assert second != first and h.game_row(second).settings["computer"] == [1]
    assert h.game(second).settings.first_dealer == 0  # Alice lost: she deals
    reply_in(h, A, second, "resign confirm")
    text = flat(game_mails(h, A, second)[-1])
    assert "You 0, Computer 2 — Computer wins the match; the match is over." in text
    assert "Computer (medium)'s" not in text
    assert last_game(h) == second
    assert h.count(COMPUTER) == 0


def test_the_next_game_and_a_rematch_keep_the_computer_s_level(harness: Harness) -> None:
    h = harness
    h.new_game()
    ask(h, A, "play computer to 61 no skunk level hard match best of 3")
    first = h.last_inbound().game_id
    assert first is not None and h.game_row(first).settings["levels"] == {"1": "hard"}
    reply_in(h, A, first, "resign confirm")
    second = last_game(h)
    assert second != first and h.game_row(second).settings["levels"] == {"1": "hard"}
    assert "Computer (hard)" in flat(game_mails(h, A, second)[-1])
    reply_in(h, A, second, "resign confirm")  # the match is over
    reply_in(h, A, second, "rematch")
    third = last_game(h)
    assert third != second and h.game_row(third).settings["levels"] == {"1": "hard"}


def test_an_aborted_game_ends_its_match(harness: Harness) -> None:
    h = harness
    h.new_game()
    ask(h, A, "play computer to 61 match best of 3")
    first = h.last_inbound().game_id
    assert first is not None
    h.service.set_status(first, "aborted", "testing")  # as `pbem game abort` does
    (match,) = matches(h)
    assert match.status == "finished" and match.winner_side is None
    assert last_game(h) == first  # no next game


# -- rematch: at once against the computer, and every refusal ------------------------------


def computer_game_over(h: Harness) -> int:
    h.new_game()
    ask(h, A, "play computer to 61 no skunk")
    game_id = h.last_inbound().game_id
    assert game_id is not None
    reply_in(h, A, game_id, "resign confirm")
    assert h.game_row(game_id).status == "finished"
    return game_id


def test_rematch_against_the_computer_starts_at_once(harness: Harness) -> None:
    h = harness
    first = computer_game_over(h)
    row = ask_confirmed(h, A, f"rematch {first}")
    assert row.status == "applied", row.reason
    second = row.game_id
    assert second is not None and second != first
    assert h.game_row(second).rematch_of == first
    assert h.game_row(second).match_id is None  # a single game
    assert h.game(second).settings.first_dealer == 0 and h.game(second).settings.target == 61
    assert "Match" not in flat(h.latest(A))
    # A second rematch of the same game: already rematched.
    ask_confirmed(h, A, f"rematch game {first}")
    assert f"already rematched: game {second}" in refusal(h, A)
    reply_in(h, A, first, "rematch")
    assert f"already rematched: game {second}" in refusal(h, A)


def test_rematch_refusals(tmp_path: Path, db_url: str, db_engine: Engine) -> None:
    # Alice asks more From-only requests today than the daily cap of answers to them
    # allows; the cap is not this test's subject.
    h = Harness.build(tmp_path, db_url, db_engine, max_unproven_answers_per_day=10)
    try:
        check_rematch_refusals(h)
    finally:
        h.close()


def check_rematch_refusals(h: Harness) -> None:
    active = h.new_game()  # Alice and Bob, in progress
    h.deliver(plain_mail(C, SERVICE_ADDRESS, "x"))  # Carol is nobody yet
    reply_in(h, A, active, "rematch")
    assert "is not over" in refusal(h, A)
    # Beside a move in a game not over: the move is made, the rematch refused.
    cards = sorted(h.game(active).holding(0))[:2]
    reply_in(h, A, active, "discard " + " ".join(c.ascii for c in cards) + "\nrematch")
    assert h.last_inbound().status == "applied"
    assert [seat for _, seat, _, _ in h.log(active)][-1:] == [0]
    assert "a rematch follows a finished game" in flat(game_mails(h, A, active)[-1])
    ask_confirmed(h, A, "rematch")
    assert "Rematch which game?" in refusal(h, A)
    ask_confirmed(h, A, "rematch 9999")
    assert "Game 9999 is not one of your games." in refusal(h, A)
    finished = computer_game_over(h)
    ask_confirmed(h, B, f"rematch {finished}")  # Bob did not play it
    assert f"Game {finished} is not one of your games." in refusal(h, B)
    # A request that does not parse is refused at once: nothing to confirm.
    ask(h, A, f"rematch {finished} best of 4")
    assert "best of 3, 5 or 7" in refusal(h, A)
    reply_in(h, A, finished, "rematch best of 9")
    assert "best of 3, 5 or 7" in refusal(h, A)
    ask(h, A, f"rematch {finished} soon")
    assert "is not an option of 'rematch'" in refusal(h, A)


def test_rematch_over_the_daily_limit(tmp_path: Path, db_url: str, db_engine: Engine) -> None:
    h = Harness.build(tmp_path, db_url, db_engine, max_new_games_per_day=1)
    try:
        finished = computer_game_over(h)  # the one game of the day
        ask_confirmed(h, A, f"rematch {finished}")
        assert "games in the last day" in refusal(h, A)
    finally:
        h.close()


def test_rematch_in_a_closed_lobby(tmp_path: Path, db_url: str, db_engine: Engine) -> None:
    h = Harness.build(tmp_path, db_url, db_engine, lobby="closed")
    try:
        game_id = h.new_game()
        reply_in(h, B, game_id, "resign confirm")
        reply_in(h, A, game_id, "rematch")
        assert "the admin starts games" in refusal(h, A)
    finally:
        h.close()


@pytest.fixture
def finished_pair(harness: Harness) -> Iterator[tuple[Harness, int]]:
    """Alice and Bob's game (admin-made), Bob resigned."""
    h = harness
    game_id = h.new_game()
    reply_in(h, B, game_id, "resign confirm")
    assert h.game_row(game_id).status == "finished"
    yield h, game_id


def test_a_rematch_waits_for_the_answer_and_is_asked_once(
    finished_pair: tuple[Harness, int],
) -> None:
    h, game_id = finished_pair
    reply_in(h, B, game_id, "rematch\nsay good game, again?")
    assert h.last_inbound().status == "applied"
    assert any("Bob says: “good game, again?”" in flat(msg) for msg in h.received(A)[-2:])
    invites = [msg for msg in h.received(A) if about(msg) == INVITE_SUBJECT]
    assert len(invites) == 1 and f"a rematch of game {game_id}" in flat(invites[0])
    reply_in(h, A, game_id, "rematch")  # the other player asks too: one is waiting
    assert "already waiting" in refusal(h, A)
    answer_invite(h, A, "decline")
    assert h.last_inbound().status == "applied"
    assert h.game_row(game_id).status == "finished" and last_game(h) == game_id
    # Declined: it may be asked again, and accepted.
    reply_in(h, A, game_id, "rematch")
    answer_invite(h, B, "yes")
    second = h.last_inbound().game_id
    assert second is not None and h.game_row(second).rematch_of == game_id
    assert h.game(second).settings.first_dealer == 1  # Bob lost
    reply_in(h, B, game_id, "rematch")
    assert f"already rematched: game {second}" in refusal(h, B)


def test_no_rematch_invitation_to_a_player_who_said_stop(
    finished_pair: tuple[Harness, int],
) -> None:
    h, game_id = finished_pair
    ask_confirmed(h, B, "stop")
    reply_in(h, A, game_id, "rematch")
    assert f"{B} cannot be invited now" in refusal(h, A)
    assert not [msg for msg in h.received(B) if about(msg) == INVITE_SUBJECT]


def test_rematch_over_the_open_invitations_limit(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    h = Harness.build(tmp_path, db_url, db_engine, max_open_invitations=0)
    try:
        game_id = h.new_game()
        reply_in(h, B, game_id, "resign confirm")
        reply_in(h, A, game_id, "rematch")
        assert "at most 0 open invitations" in refusal(h, A)
    finally:
        h.close()


def test_a_rematch_invitation_expires_like_any(finished_pair: tuple[Harness, int]) -> None:
    h, game_id = finished_pair
    reply_in(h, A, game_id, "rematch")
    h.clock.advance(timedelta(days=h.settings.invitation_days + 1))
    h.step()
    with Session(h.db) as session:
        (invitation,) = session.exec(select(m.Invitation)).all()
        assert invitation.status == "expired"
    # No longer waiting; but Bob let an invitation lapse, so for the quiet period he is
    # not invited again (as with any challenge).
    reply_in(h, A, game_id, "rematch")
    assert f"{B} cannot be invited now" in refusal(h, A)


# -- table talk ---------------------------------------------------------------------------


def playing_pair(h: Harness) -> tuple[int, Game]:
    """Alice and Bob's game, in the pegging with Alice's hand in her hands."""
    game_id = h.new_game()
    game = h.game(game_id)
    for seat, address in ((0, A), (1, B)):
        cards = sorted(game.holding(seat))[:2]
        reply_in(h, address, game_id, "discard " + " ".join(c.ascii for c in cards))
    return game_id, h.game(game_id)


def test_say_is_relayed_and_never_read_as_a_move(harness: Harness) -> None:
    h = harness
    game_id, game = playing_pair(h)
    seat = game.to_act()[0]
    speaker, listener = (A, B) if seat == 0 else (B, A)
    card = sorted(game.holding(seat))[0]
    logged = len(h.log(game_id))
    before = h.count(speaker)
    reply_in(h, speaker, game_id, f"say play {card.ascii}; go then resign\nsay <b>gg</b> & more")
    row = h.last_inbound()
    assert row.status == "applied", row.reason
    assert len(h.log(game_id)) == logged  # nothing was played
    assert h.count(speaker) == before  # a say that went through is not answered
    relay = h.latest(listener)
    name = "Alice" if speaker == A else "Bob"
    assert about(relay) == f"[Cribbage {game_id}] Table talk"  # no name, no talk
    text = flat(relay)
    assert f"{name} says" in text
    assert f"“play {card.ascii}; go then resign”" in text and "“<b>gg</b> & more”" in text
    assert "&lt;b&gt;gg&lt;/b&gt; &amp; more" in html_of(relay)
    assert "<b>gg</b>" not in html_of(relay)
    assert not [p for p in relay.iter_attachments()]  # no view: no cards
    hidden = hidden_from(h.game(game_id), (0, 1)[listener == B])
    assert not any(str(c) in text for c in hidden)
    # The listener's next game mail shows it in the news; the history keeps it.
    h.move(game_id, h.game(game_id).legal_actions(seat)[0])
    turn = flat(game_mails(h, listener, game_id)[-1])
    assert "Table talk" in turn and f"{name} says: “play {card.ascii}" in turn
    reply_in(h, listener, game_id, "history")
    assert f"{name} says: “<b>gg</b> & more”" in flat(h.latest(listener))
    # Seen once: the mail after that does not repeat it.
    reply_in(h, listener, game_id, "hand")
    assert "Table talk" not in flat(h.latest(listener))


def test_say_rate_limit_and_empty_say(tmp_path: Path, db_url: str, db_engine: Engine) -> None:
    h = Harness.build(tmp_path, db_url, db_engine, max_says_per_game_per_hour=2)
    try:
        game_id = h.new_game()
        reply_in(h, A, game_id, "say one\nsay two")
        assert h.last_inbound().status == "applied"
        told = h.count(B)
        reply_in(h, A, game_id, "say three")
        assert "as many as one may" in refusal(h, A)
        assert h.count(B) == told  # not passed on
        reply_in(h, A, game_id, "say")
        assert "Say what?" in refusal(h, A)
        h.clock.advance(timedelta(hours=1, minutes=1))
        reply_in(h, A, game_id, "say four")
        assert h.last_inbound().status == "applied"
        assert "“four”" in flat(h.latest(B))
        long = "x" * 3000
        reply_in(h, A, game_id, f"say {long}")
        relayed = flat(h.latest(B))
        assert "x" * 400 in relayed and "x" * 500 not in relayed  # capped
    finally:
        h.close()


def test_say_is_not_mailed_to_a_player_who_said_stop(harness: Harness) -> None:
    h = harness
    game_id = h.new_game()
    ask_confirmed(h, B, "stop")
    told = h.count(B)
    reply_in(h, A, game_id, "say hello Bob")
    assert h.last_inbound().status == "applied"
    assert h.count(B) == told
    # Bob reads it in his next game mail (the answer to his own mail).
    reply_in(h, B, game_id, "hand")
    assert "Alice says: “hello Bob”" in flat(h.latest(B))


def test_say_after_the_game_and_with_three_players(harness: Harness) -> None:
    h = harness
    game_id = h.new_game((ALICE, BOB, CAROL))
    reply_in(h, C, game_id, "resign confirm")
    reply_in(h, C, game_id, "say well played both")
    assert h.last_inbound().status == "applied"
    for address in (A, B):
        assert "Carol says: “well played both”" in flat(h.latest(address))
    assert "says" not in about(h.latest(C))


def test_a_say_with_a_move_goes_in_the_turn_mail_not_a_relay_too(harness: Harness) -> None:
    h = harness
    game_id, game = playing_pair(h)
    seat = game.to_act()[0]
    speaker, listener = (A, B) if seat == 0 else (B, A)
    action = game.legal_actions(seat)[0]
    before = h.count(listener)
    reply_in(h, speaker, game_id, f"say your turn\n{command_for(action)}")
    assert h.last_inbound().status == "applied"
    new = h.received(listener)[before:]
    assert len(new) == 1 and "says" not in about(new[0])
    assert "“your turn”" in flat(new[0])


def test_says_of_both_players_in_one_batch(harness: Harness) -> None:
    h = harness
    game_id = h.new_game()
    for address, words in ((A, "say hello Bob"), (B, "say hello Alice")):
        latest = game_mails(h, address, game_id)[-1]
        h.send(reply(latest, address, address.split("@")[0].title(), words))
    h.step()
    assert [r.status for r in h.inbound()[-2:]] == ["applied", "applied"]
    assert "Alice says: “hello Bob”" in flat(h.latest(B))
    assert "Bob says: “hello Alice”" in flat(h.latest(A))
