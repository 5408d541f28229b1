"""A move written in the subject, as the README promises: a subject the writer wrote
("Re: discard 9d qs") with an empty body, a body of only the quoted original, or only a
signature, applies the move. One of the service's own subjects, or a reply to one, is
never read as a command; a game's one Subject ("[Cribbage 12] Alice v Bob") edited by
the writer is ("Re: [Cribbage 12] discard 5d 5s" with an empty body applies it)."""

from __future__ import annotations

import pytest

from pbem.commands import parse_reply
from pbem.mail.reading import reply_subject
from tests.e2e.helpers import ALICE, BOB, STYLES, Harness, reply

A = ALICE[0]


@pytest.mark.parametrize(
    ("subject", "command"),
    [
        ("Re: discard 9d qs", "discard 9d qs"),
        ("RE: AW: Re: play 7c", "play 7c"),
        ("discard 5h jd", "discard 5h jd"),
        ("stop", "stop"),
        ("unwatch 12", "unwatch 12"),
        # Ours, and replies to ours: never read, whatever was added after the tag.
        ("Re: [Cribbage 12] discard 9d qs", ""),
        ("RE: AW: [Cribbage 12] Re: play 7c", ""),
        ("Re: [Cribbage 12] Hand 1 — your turn: discard", ""),
        ("Re: [Cribbage 12] hand 3 — waiting for Bob", ""),
        ("Re: [Cribbage 12] hand", ""),
        ("Re: [Cribbage 12] Hint: your play", ""),
        ("Re: [Cribbage] Standings", ""),
        ("Fwd: [cribbage #3] Game over — you win", ""),
        ("[Cribbage] Daily digest — 2 games wait for you", ""),
        ("Re: Hand 2 — your turn: play", ""),
    ],
)
def test_reply_subject(subject: str, command: str) -> None:
    assert reply_subject(subject) == command


SENT = "[Cribbage 12] Alice v Bob"


@pytest.mark.parametrize(
    ("subject", "command"),
    [
        # The game's one Subject, as sent and as replied to: never a command.
        (SENT, ""),
        ("Re: [Cribbage 12] Alice v Bob", ""),
        ("RE: AW:  [cribbage 12]   alice v bob", ""),
        ("Re: Alice v Bob", ""),  # a client that dropped the tag
        # Edited after the tag: read.
        ("Re: [Cribbage 12] discard 9d qs", "discard 9d qs"),
        ("RE: AW: [Cribbage 12] Re: play 7c", "play 7c"),
        ("[Cribbage 12] hand", "hand"),
        # What older game mails said after the tag: never read.
        ("Re: [Cribbage 12] Hand 1 — your turn: discard", ""),
        ("Re: [Cribbage 12] Hint: your play", ""),
        ("Fwd: [cribbage #12] Game over — you win", ""),
        # Lobby subjects and the writer's own: as without a game.
        ("Re: [Cribbage] Standings", ""),
        ("Re: discard 9d qs", "discard 9d qs"),
        ("Re: Hand 2 — your turn: play", ""),
    ],
)
def test_reply_subject_of_a_game(subject: str, command: str) -> None:
    assert reply_subject(subject, sent=SENT) == command


def test_a_name_like_a_command_is_not_read() -> None:
    sent = "[Cribbage 4] Hand v Go"
    assert reply_subject("Re: [Cribbage 4] Hand v Go", sent=sent) == ""
    assert reply_subject("Re: Hand v Go", sent=sent) == ""


def _discard(h: Harness, game: int) -> str:
    cards = sorted(h.game(game).holding(0))[:2]
    return "discard " + " ".join(c.ascii for c in cards)


def _empty_body(raw: bytes) -> bytes:
    """``raw`` with its body gone: a plain-text message of no text at all."""
    head = raw.partition(b"\n\n")[0]
    keep = [
        line
        for line in head.split(b"\n")
        if not line.lower().startswith((b"content-", b"mime-version", b" ", b"\t"))
    ]
    return b"\n".join(keep) + b"\nContent-Type: text/plain; charset=utf-8\n\n"


@pytest.mark.parametrize("style", STYLES)
def test_a_move_in_the_subject_with_only_the_quoted_original(harness: Harness, style: str) -> None:
    h = harness
    game = h.new_game((ALICE, BOB), seed="subject")
    move = _discard(h, game)
    subject = f"Re: {move}"  # the writer's own subject, in place of ours
    h.deliver(reply(h.latest(A), A, "Alice", "", style=style, subject=subject))
    row = h.last_inbound()
    assert row.status == "applied", row.reason
    assert len(h.log(game)) == 1 and h.log(game)[0][1] == 0


@pytest.mark.parametrize(
    "body", ["", "-- \nAlice Liddell\nhttps://alice.example.com", "\n\nSent from my iPhone"]
)
def test_a_move_in_the_subject_with_an_empty_or_signature_body(harness: Harness, body: str) -> None:
    h = harness
    game = h.new_game((ALICE, BOB), seed="subject-sig")
    move = _discard(h, game)
    subject = move
    raw = reply(h.latest(A), A, "Alice", body, style="thunderbird", subject=subject)
    if not body:
        raw = _empty_body(raw)
    h.deliver(raw)
    row = h.last_inbound()
    assert row.status == "applied", row.reason
    assert "applied: " + move.lower() in (row.reason or "")


def test_our_own_subject_is_not_a_command(harness: Harness) -> None:
    h = harness
    game = h.new_game((ALICE, BOB), seed="subject-ours")
    original = h.latest(A)
    assert str(original["Subject"]) == f"[Cribbage {game}] Alice v Bob"
    before = h.count(A)
    h.deliver(reply(original, A, "Alice", ""))  # "Re: [Cribbage 1] Alice v Bob"
    row = h.last_inbound()
    assert row.status == "rejected" and row.reason == "no command found"
    assert h.log(game) == [] and h.count(A) == before + 1


def test_a_move_written_over_our_subject_is_read(harness: Harness) -> None:
    """The tag kept, the names replaced by a move, an empty body: the move is applied."""
    h = harness
    game = h.new_game((ALICE, BOB), seed="subject-added")
    move = _discard(h, game)
    subject = f"Re: [Cribbage {game}] {move}"
    raw = reply(h.latest(A), A, "Alice", "", style="thunderbird", subject=subject)
    h.deliver(_empty_body(raw))
    row = h.last_inbound()
    assert row.status == "applied", row.reason
    assert "applied: " + move.lower() in (row.reason or "")
    assert len(h.log(game)) == 1 and h.log(game)[0][1] == 0


def test_words_added_to_an_older_subject_are_not_read(harness: Harness) -> None:
    h = harness
    game = h.new_game((ALICE, BOB), seed="subject-older")
    subject = f"Re: [Cribbage {game}] Hint: your play"
    h.deliver(reply(h.latest(A), A, "Alice", "", subject=subject))
    row = h.last_inbound()
    assert row.status == "rejected" and row.reason == "no command found"
    assert h.log(game) == []


def test_the_body_wins_over_the_subject(harness: Harness) -> None:
    h = harness
    game = h.new_game((ALICE, BOB), seed="subject-body")
    cards = sorted(h.game(game).holding(0))
    body = "discard " + " ".join(c.ascii for c in cards[:2])
    subject = "discard " + " ".join(c.ascii for c in cards[2:4])
    h.deliver(reply(h.latest(A), A, "Alice", body, subject=subject))
    row = h.last_inbound()
    assert row.status == "applied", row.reason
    assert set(h.game(game).laid_away(0)) == set(cards[:2])


@pytest.mark.parametrize(
    ("body", "subject", "verbs"),
    [
        ("play 7c", "Re: [Cribbage 3] Hint: your play", ["play"]),
        ("", "Re: [Cribbage 3] Hint: your play", []),
        ("games", "Re: [Cribbage] Standings", []),  # a lobby command: not a game's
        ("", "Re: hint", ["hint"]),
        ("Thanks!", "hand", ["hand"]),
        ("go", "play 7c", ["go"]),
    ],
)
def test_the_command_reader(body: str, subject: str, verbs: list[str]) -> None:
    parsed = parse_reply(body, reply_subject(subject))
    assert [c.verb for c in parsed.commands] == verbs
