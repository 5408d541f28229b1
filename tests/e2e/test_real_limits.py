"""Limits through the real Postfix and Dovecot: one error reply per address and kind per
hour, the hourly cap per sender, and mail over the IMAP size cap (recorded, the player told
once, the message kept)."""

from __future__ import annotations

import os
from email.utils import make_msgid

from pbem.demo.bots import quoted_reply
from pbem.service import utcnow
from tests.e2e.helpers import about
from tests.fixtures.realmail import RealMail, RealMailFactory, RealPlayer, parse


def started(real: RealMail) -> tuple[int, RealPlayer, RealPlayer]:
    alice, bob = real.player("alice", "Alice"), real.player("bob", "Bob")
    game_id = real.new_game([alice, bob], seed="limits")
    real.settle()  # the deal reaches both
    return game_id, alice, bob


def fresh_mail(sender: RealPlayer, to: str, body: str) -> bytes:
    """A new mail (not a reply): no token anywhere."""
    return (
        f"From: {sender.name} <{sender.address}>\r\nTo: {to}\r\nSubject: my move\r\n"
        f"Message-ID: {make_msgid(domain='client.test')}\r\nMIME-Version: 1.0\r\n"
        f"Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    ).encode()


def subjects(player: RealPlayer, after: int) -> list[str]:
    return [about(msg) for msg in player.mailbox()[after:]]


def test_one_which_game_reply_per_hour(realmail: RealMail) -> None:
    real = realmail
    game_id, alice, _ = started(real)
    # A second game: a fresh mail names neither (with one game it would be that game's).
    real.new_game([alice, real.player("carol", "Carol")], seed="limits-2")
    real.settle()
    stranger = real.player("stranger", "Stranger")
    before = len(alice.mailbox())
    move = alice.legal_command()
    for _ in range(3):
        alice.send(fresh_mail(alice, real.address, move))
    stranger.send(fresh_mail(stranger, real.address, move))
    rows = real.until_processed(4)
    by_sender = {(r.sender, r.status, r.reason) for r in rows}
    assert by_sender == {
        (alice.address, "rejected", "no valid game token"),
        (stranger.address, "ignored", "unknown sender and no game token: no reply"),
    }
    errors = [r for r in real.outbox() if r.kind == "error"]
    assert [r.recipient for r in errors] == [alice.address]
    real.settle()
    assert len(alice.mailbox()) == before + 1
    [which] = alice.mailbox()[before:]
    assert "Which game?" in about(which)
    assert which["Auto-Submitted"] == "auto-generated"
    assert stranger.mailbox() == []
    real.assert_quiet(0.5)
    assert real.game_row(game_id).action_count == len(real.game(game_id).actions)


def test_a_fresh_mail_from_a_player_with_one_game_is_that_games(realmail: RealMail) -> None:
    """A fresh mail (no token) from a player with one game is that game's — but its
    From alone proves nothing: it is held, she is asked "Did you send this?", and her
    reply to that request (through the real servers) makes the move."""
    real = realmail
    game_id, alice, bob = started(real)
    before, hers = len(bob.mailbox()), len(alice.mailbox())
    alice.send(fresh_mail(alice, real.address, alice.legal_command()))
    [row] = real.until_processed(1)
    assert (row.status, row.game_id) == ("applied", game_id), row.reason
    assert "held until" in (row.reason or ""), row.reason
    assert real.game_row(game_id).action_count == 0
    real.settle()
    [request] = alice.wait_for(hers + 1)[hers:]
    assert "confirm" in str(request["Subject"]).lower()
    alice.send(quoted_reply(request, alice.address, alice.name, "yes", utcnow()))
    real.until_processed(2)
    assert real.game_row(game_id).action_count == 1
    real.settle()
    assert len(bob.mailbox()) == before  # no news for Bob: he was asked to discard already


def test_the_hourly_cap_per_sender(realmail_factory: RealMailFactory) -> None:
    """Mail proven by its From alone is capped per sender and hour (unread, unanswered
    over the cap); the player's proven replies are not counted out by it."""
    real = realmail_factory(max_per_sender_per_hour=3, max_unproven_answers_per_day=10)
    _, alice, _ = started(real)
    before = len(alice.mailbox())
    for question in ("games", "standings", "help", "games", "help"):  # (each answered once)
        alice.send(fresh_mail(alice, real.address, question))
    rows = real.until_processed(5)
    assert [r.status for r in rows] == ["applied"] * 3 + ["ignored"] * 2
    over = "more than 3 unproven mails from this sender in an hour"
    assert all(r.reason == over for r in rows[3:])
    real.settle()
    assert len(alice.wait_for(before + 3)) == before + 3, [(r.status, r.reason) for r in rows]
    # Her replies with her token are read, over that cap.
    alice.send(alice.reply("hand"))
    [proven] = real.until_processed(6)[5:]
    assert (proven.status, proven.reason) == ("applied", "sent: hand")
    real.settle()
    assert len(alice.wait_for(before + 4)) == before + 4
    real.assert_quiet(0.5)


def with_attachment(raw: bytes, size: int) -> bytes:
    msg = parse(raw)
    msg.add_attachment(
        os.urandom(size), maintype="application", subtype="octet-stream", filename="photo.raw"
    )
    return msg.as_bytes()


def test_oversize_mail_is_recorded_answered_once_and_kept(
    realmail_factory: RealMailFactory,
) -> None:
    real = realmail_factory(imap={"max_size": 20000})
    game_id, alice, _ = started(real)
    moves = len(real.game(game_id).actions)
    before = len(alice.mailbox())
    move = alice.legal_command()
    big = with_attachment(alice.reply(move), 60000)
    alice.send(big)
    [row] = real.until_processed(1)
    assert (row.source, row.status, row.reason) == (
        "imap:oversize",
        "rejected",
        "message too large",
    )
    assert row.sender == alice.address
    assert len(row.raw) < 20000  # the header section only
    assert len(real.game(game_id).actions) == moves
    real.settle()
    assert len(alice.mailbox()) == before + 1
    assert "too large" in subjects(alice, before)[0].lower()

    # Nothing lost: the whole message stays in the service's mailbox, read.
    [kept] = real.own_mailbox()
    assert len(kept.as_bytes()) > 60000
    assert kept["Message-ID"] == parse(big)["Message-ID"]
    assert real.own_flags() == [{"\\Seen"}]

    # Told once: neither a later step nor a second big mail within the hour answers again.
    real.assert_quiet(0.5)
    alice.send(with_attachment(alice.reply(move), 60000))
    rows = real.until_processed(2)
    assert (rows[1].status, rows[1].reason) == ("rejected", "message too large")
    real.settle()
    assert len(alice.mailbox()) == before + 1

    # The move itself, sent small, goes through.
    alice.send(alice.reply(move))
    rows = real.until_processed(3)
    assert rows[2].status == "applied", rows[2].reason
    assert len(real.game(game_id).actions) > moves
