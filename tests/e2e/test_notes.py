"""Notes go as short mails of their own, end to end on both databases: the answers to
``away``, ``hints on`` and ``stop``, and what the other player is told of them, are a
few lines with the offer each makes as one click (``back``, ``hints on``, ``start``) —
not the board again; ``hand`` still sends the board."""

from __future__ import annotations

from email.message import EmailMessage

from tests.e2e.helpers import ALICE, BOB, Harness
from tests.e2e.mailto import links_in

A, B = ALICE[0], BOB[0]
NOTE_BYTES = 6_000  # a turn mail is 9–14 KB


def _text(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content()).replace("\r\n", "\n")


def assert_note(msg: EmailMessage, offer: str | None) -> str:
    """``msg`` is a short note without the board, offering ``offer`` as a link."""
    text = _text(msg)
    for heading in ("Your cards", "Scores — ", "Since your last mail"):
        assert heading not in text, text
    assert len(msg.as_bytes()) < NOTE_BYTES, len(msg.as_bytes())
    if offer is not None:
        assert offer in [link.body for link in links_in(msg)], text
    return " ".join(text.split())


def test_notes_are_short_mails_with_their_offers_as_links(harness: Harness) -> None:
    h = harness
    game_id = h.new_game((ALICE, BOB), seed="notes")
    assert "Your cards" in _text(h.latest(A))
    before_b = h.count(B)
    h.answer(A, "away 2")
    assert h.last_inbound().status == "applied"
    said = assert_note(h.latest(A), "back")
    assert "You are away until" in said
    assert h.count(B) == before_b + 1
    told = assert_note(h.latest(B), None)
    assert "Alice is away until" in told
    h.answer(A, "back")
    assert "Alice is back" in assert_note(h.latest(B), None)
    h.answer(A, "hints on")
    assert "You agreed to hints" in assert_note(h.latest(A), None)
    assert "would like hints" in assert_note(h.latest(B), "hints on")
    h.answer(A, "stop")
    assert "Send 'start'" in assert_note(h.latest(A), "start")
    h.answer(A, "hand")
    assert "Your cards" in _text(h.latest(A))  # asked for: the board
    assert not h.game(game_id).is_over
