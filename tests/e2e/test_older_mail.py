"""An answer to an older mail, end to end on both databases: a reply to a turn mail the
game has moved past (its In-Reply-To names an earlier action count) whose move no longer
fits is answered "That mail is older: since it, your discard is done — here is where the
game is", with the board and what to do now — not "you do not hold J♥" or "You could:
wait". A move that does not fit, sent in answer to the latest mail, is refused as before."""

from __future__ import annotations

from email.message import EmailMessage

from engine import Card
from tests.e2e.helpers import ALICE, BOB, Harness, reply

A, B = ALICE[0], BOB[0]


def _text(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",))
    assert part is not None
    return " ".join(str(part.get_content()).split())


def _discard(cards: list[Card]) -> str:
    return "discard " + " ".join(c.ascii for c in cards)


def test_a_reply_to_an_older_mail_says_so(harness: Harness) -> None:
    h = harness
    game_id = h.new_game((ALICE, BOB), seed="older-mail")
    first = h.latest(A)
    held = sorted(h.game(game_id).holding(0))
    h.deliver(reply(first, A, "Alice", _discard(held[:2])))
    assert h.last_inbound().status == "applied"
    # The same first mail answered again, with other cards: the discard is done.
    h.deliver(reply(first, A, "Alice", _discard(held[2:4])))
    row = h.last_inbound()
    assert row.status == "rejected" and (row.reason or "").startswith("already done"), row.reason
    text = _text(h.latest(A))
    assert "That mail is older: since it, your discard is done — here is where the game is" in text
    assert "do not hold" not in text and "You could: wait" not in text
    assert "Your cards" in text  # where the game is: the hand and the board
    assert len(h.log(game_id)) == 1
    # Bob lays away: the play begins; Alice answers her first mail once more.
    bob = sorted(h.game(game_id).holding(1))
    h.answer(B, _discard(bob[:2]))
    assert h.last_inbound().status == "applied"
    h.deliver(reply(first, A, "Alice", "play " + held[0].ascii))
    text = _text(h.latest(A))
    assert "That mail is older: since it, the discard is done and the play of hand 1" in text


def test_a_bad_move_to_the_latest_mail_is_refused_as_before(harness: Harness) -> None:
    h = harness
    game_id = h.new_game((ALICE, BOB), seed="older-latest")
    other = sorted(h.game(game_id).holding(1))[:2]  # Bob's cards, not Alice's
    h.answer(A, _discard(other))
    row = h.last_inbound()
    assert row.status == "rejected"
    text = _text(h.latest(A))
    assert "That mail is older" not in text and "hold" in text
