"""A bounce counts on a player only when it answers mail we sent that player: anyone can
write a delivery status notification naming a player's address."""

from __future__ import annotations

import pytest

from tests.e2e.helpers import ALICE, BOB, SERVICE_ADDRESS, Harness, bounce

A, B = ALICE[0], BOB[0]


def _message_id(raw: bytes) -> str:
    for line in raw.split(b"\n"):
        if line.lower().startswith(b"message-id:"):
            return line.split(b":", 1)[1].strip().decode()
    raise AssertionError("no Message-ID")


def _short_bounce(failed: str, header: str, value: str) -> bytes:
    """A bounce that carries no original: only ``header`` (In-Reply-To or References)
    names the mail that failed."""
    return (
        "From: MAILER-DAEMON@mx.example.net (Mail Delivery System)\r\n"
        f"To: {SERVICE_ADDRESS}\r\n"
        "Subject: Undelivered Mail Returned to Sender\r\n"
        f"Message-ID: <short.{failed.replace('@', '.')}.{header}@mx.example.net>\r\n"
        f"X-Failed-Recipients: {failed}\r\n"
        f"{header}: {value}\r\n"
        "\r\n"
        f"Your message to {failed} could not be delivered.\r\n"
    ).encode()


def _counts(h: Harness) -> tuple[int, int]:
    alice, bob = h.player(A), h.player(B)
    assert alice is not None and bob is not None
    return alice.bounce_count, bob.bounce_count


def test_a_bounce_of_our_mail_to_the_player_counts(harness: Harness) -> None:
    h = harness
    h.new_game((ALICE, BOB), seed="dsn-real")
    h.deliver(bounce(h.mail_files(B)[-1][1], B))
    assert _counts(h) == (0, 1)
    assert f"recorded on player {B}" in (h.last_inbound().reason or "")


def test_a_bounce_naming_a_player_but_answering_mail_to_another_counts_nothing(
    harness: Harness,
) -> None:
    h = harness
    h.new_game((ALICE, BOB), seed="dsn-other")
    before = (h.count(A), h.count(B))
    # Our real mail to Alice, reported as failed for Bob.
    h.deliver(bounce(h.mail_files(A)[-1][1], B))
    row = h.last_inbound()
    assert row.status == "ignored"
    assert f"not counted on {B}" in (row.reason or "")
    assert _counts(h) == (0, 0)
    assert (h.count(A), h.count(B)) == before


def test_a_bounce_of_mail_we_never_sent_counts_nothing(harness: Harness) -> None:
    h = harness
    h.new_game((ALICE, BOB), seed="dsn-forged")
    forged_original = (
        b"From: cribbage@pbem.test\r\nTo: bob@example.org\r\n"
        b"Subject: [Cribbage 1] Hand 1\r\nMessage-ID: <g1.s0.forgedtokenxxxxxxxxx@pbem.test>\r\n"
        b"\r\nhi\r\n"
    )
    h.deliver(bounce(forged_original, B))
    assert _counts(h) == (0, 0)
    assert f"not counted on {B}" in (h.last_inbound().reason or "")


@pytest.mark.parametrize("header", ["In-Reply-To", "References"])
def test_a_bounce_answering_our_mail_by_its_threading_headers(
    harness: Harness, header: str
) -> None:
    h = harness
    h.new_game((ALICE, BOB), seed="dsn-thread")
    ours = _message_id(h.mail_files(B)[-1][1])
    h.deliver(_short_bounce(B, header, f"<unrelated@x.test> {ours}"))
    assert _counts(h) == (0, 1)
    h.deliver(_short_bounce(A, header, ours))  # our mail to Bob does not make Alice bounce
    assert _counts(h) == (0, 1)


def test_a_bounce_guessing_an_answer_of_ours_counts_nothing(harness: Harness) -> None:
    """Answers outside a game ("Which game?") carry an unguessable Message-ID: a forged
    bounce that names what such an id would be if it were built from the inbound id and
    kind alone counts nothing; a bounce of the real answer counts."""
    h = harness
    h.new_game((ALICE, BOB), seed="dsn-guess")
    h.new_game((ALICE, BOB), seed="dsn-guess-2")  # two games: a plain mail gets "Which game?"
    h.deliver(
        b"From: "
        + A.encode()
        + b"\r\nTo: "
        + SERVICE_ADDRESS.encode()
        + b"\r\nSubject: hello\r\nMessage-ID: <plain.1@example.org>\r\n\r\nplay 7c\r\n"
    )
    row = h.last_inbound()
    assert row.status == "rejected", row.reason
    answer = h.mail_files(A)[-1][1]
    real_id = _message_id(answer)
    guessed = f"<err.{row.id}.no-game@pbem.test>"
    assert real_id != guessed
    h.deliver(_short_bounce(A, "In-Reply-To", guessed))
    assert _counts(h) == (0, 0)
    h.deliver(_short_bounce(A, "References", real_id))
    assert _counts(h) == (1, 0)
