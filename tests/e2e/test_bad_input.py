"""Mail that is not a move: garbage, broken MIME, huge mail, machines, our own mail.

Every message must end in a recorded final state with a reason (ignored, rejected or
failed), acknowledged in the inbox, nothing lost and nobody answered who should not be.
"""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from pbem.demo.bots import text_of
from pbem.service.send import turns
from tests.e2e.helpers import (
    ALICE,
    BOB,
    DOMAIN,
    SERVICE_ADDRESS,
    STRANGER,
    Harness,
    about,
    bounce,
    plain_mail,
    reply,
    vacation_reply,
)

A, B = ALICE[0], BOB[0]
FINAL = {"applied", "rejected", "ignored", "failed"}


def inbox_files(h: Harness) -> list[Path]:
    return [p for sub in ("new", "cur") for p in (h.inbox_dir / sub).iterdir()]


def assert_all_acknowledged(h: Harness) -> None:
    """Every inbox message is flagged Seen and has a stored row in a final state."""
    files = inbox_files(h)
    assert all(p.parent.name == "cur" and p.name.endswith(":2,S") for p in files), files
    rows = h.inbound()
    assert len(rows) == len(files)
    for row in rows:
        assert row.status in FINAL and row.reason, (row.id, row.status, row.reason)
        assert row.processed_at is not None


def test_garbage_missing_from_and_broken_mime(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="bad-1")
    before = h.counts((A, B, STRANGER))
    token = h.token(game, 0)
    to = f"cribbage+{token}@{DOMAIN}"

    h.send(random.Random(1).randbytes(3000))
    h.send(b"\x00\xff\xfe not a mail at all \r\n\r\n\x00")
    h.send(
        f"To: {to}\r\nSubject: Re: move\r\nMessage-ID: <nofrom@client.test>\r\n\r\n"
        "discard as 3d\r\n".encode()
    )
    h.send(
        f"From: Alice <{A}>\r\nTo: {to}\r\nSubject: Re: move\r\n"
        "Message-ID: <broken-boundary@client.test>\r\nMIME-Version: 1.0\r\n"
        'Content-Type: multipart/alternative; boundary="never-there"\r\n\r\n'
        "hello, no boundary in here\r\n".encode()
    )
    h.send(
        f"From: Alice <{A}>\r\nTo: {to}\r\nSubject: Re: move\r\n"
        "Message-ID: <bad-base64@client.test>\r\nMIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        "!!!! this is %%% not base64 ####\r\n".encode()
    )
    h.send(
        f"From: Alice <{A}>\r\nTo: {to}\r\nSubject: Re: move\r\n"
        "Message-ID: <unknown-charset@client.test>\r\nMIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=x-no-such-charset\r\n\r\n"
        "hello\r\n".encode()
    )
    h.step()

    rows = h.inbound()
    assert len(rows) == 6
    assert [r.status for r in rows[:3]] == ["ignored", "ignored", "ignored"]
    assert all("sender" in (r.reason or "") for r in rows[:3])
    assert [r.status for r in rows[3:]] == ["rejected"] * 3
    assert_all_acknowledged(h)
    assert h.log(game) == []
    assert h.count(B) == before[B]
    assert h.count(A) == before[A] + 3  # one "could not be applied" each, no more
    assert not (h.outbox_dir / STRANGER).exists()


def test_a_mangled_but_readable_reply_still_moves(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="bad-2")
    cards = sorted(h.game(game).holding(0))[:2]
    raw = reply(h.latest(A), A, "Alice", "discard " + " ".join(c.ascii for c in cards))
    # A relay rewrote every line end to bare LF and dropped the closing boundary.
    mangled = raw.replace(b"\r\n", b"\n").rsplit(b"--000000000000a1b2c3d4e5f6--", 1)[0]
    h.deliver(mangled)
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert len(h.log(game)) == 1
    assert_all_acknowledged(h)


def test_oversized_mail(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="bad-3")
    h.restart()
    h.daemon.service.settings = h.settings.model_copy(update={"max_message_bytes": 20_000})
    padding = "\n".join("x" * 70 for _ in range(400))  # ~28 kB
    move = "discard " + " ".join(c.ascii for c in sorted(h.game(game).holding(0))[:2])
    before = h.counts((A, B))

    h.deliver(reply(h.latest(A), A, "Alice", f"{move}\n\n{padding}"))
    row = h.last_inbound()
    assert row.status == "rejected" and row.reason == "message too large"
    assert h.count(A) == before[A] + 1 and h.count(B) == before[B]
    assert "too large" in about(h.latest(A))

    h.deliver(reply(h.latest(B), STRANGER, "Mallory", f"{move}\n\n{padding}"))
    row = h.last_inbound()
    assert row.status == "ignored" and row.reason == "message too large"
    assert not (h.outbox_dir / STRANGER).exists()
    assert h.log(game) == []
    assert_all_acknowledged(h)


def test_mail_over_the_inbox_size_cap_is_read_as_headers_only(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    inbox = tmp_path / "inbox"
    h = Harness.build(tmp_path, db_url, db_engine, inbound_url=f"maildir:{inbox}?max_size=8000")
    try:
        game = h.new_game(seed="bad-4")
        body = "discard as 3d\n\n" + "\n".join("y" * 70 for _ in range(200))
        h.deliver(reply(h.latest(A), A, "Alice", body))
        row = h.last_inbound()
        assert row.source.endswith(":oversize")
        assert len(row.raw) < 8000
        assert row.status == "rejected" and row.reason == "message too large"
        assert "too large" in about(h.latest(A))
        assert h.log(game) == []
        assert_all_acknowledged(h)
    finally:
        h.close()


def test_auto_replies_and_bounces_are_never_answered(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="bad-5")
    before = h.counts((A, B))
    last_to_bob = h.mail_files(B)[-1][1]

    h.send(vacation_reply(h.latest(A), A))
    h.send(bounce(last_to_bob, B))
    h.send(bounce(last_to_bob, "nobody@example.net"))
    h.step()

    rows = h.inbound()
    assert len(rows) == 3 and all(r.status == "ignored" for r in rows)
    reasons = sorted(r.reason or "" for r in rows)
    assert reasons[0].startswith("auto_reply")
    assert all(reason.startswith("bounce") for reason in reasons[1:])
    assert sum(f"recorded on player {B}" in reason for reason in reasons) == 1
    bob = h.player(B)
    assert bob is not None and bob.bounce_count == 1 and bob.last_bounce_reason
    alice = h.player(A)
    assert alice is not None and alice.bounce_count == 0
    # None of the three is answered. Bob's bounce is of his turn mail: the game waits for
    # him and Alice, seated in it, is told so once (not Bob, whose mail fails; nobody
    # else).
    assert h.counts((A, B)) == {A: before[A] + 1, B: before[B]}
    assert "could not be delivered: the game waits for them" in " ".join(
        text_of(h.latest(A)).split()
    )
    assert h.log(game) == []
    assert_all_acknowledged(h)


def test_our_own_mail_looping_back_is_ignored(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="bad-6")
    before = h.counts((A, B))
    own = h.mail_files(A)[-1][1]
    h.send(own)  # e.g. a forwarding rule sent it straight back
    # ... and one rewritten by a forwarder that kept our loop header
    head, body = own.split(b"\r\n\r\n", 1)
    forwarded = head.replace(b"Message-ID: <", b"Message-ID: <fwd.", 1)
    forwarded = forwarded.replace(f"From: Cribbage by mail <{SERVICE_ADDRESS}>\r\n".encode(), b"")
    h.send(b"From: Alice <" + A.encode() + b">\r\n" + forwarded + b"\r\n\r\n" + body)
    h.step()
    first, second = h.inbound()
    assert first.status == "ignored" and "loop" in (first.reason or "")
    assert second.status == "ignored" and "loop" in (second.reason or "")
    assert h.counts((A, B)) == before
    assert h.log(game) == []
    assert_all_acknowledged(h)


def test_an_unexpected_error_is_recorded_as_failed_and_the_rest_goes_on(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    game = h.new_game(seed="bad-7")
    move_a = "discard " + " ".join(c.ascii for c in sorted(h.game(game).holding(0))[:2])
    move_b = "discard " + " ".join(c.ascii for c in sorted(h.game(game).holding(1))[:2])
    h.send(reply(h.latest(A), A, "Alice", move_a))
    h.send(reply(h.latest(B), B, "Bob", move_b))
    real = turns.turn_mails

    def broken_for_alice(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("replying") == 0:  # the mails after a move of seat 0
            raise KeyError("template variable missing")
        return real(*args, **kwargs)

    monkeypatch.setattr(turns, "turn_mails", broken_for_alice)
    h.step()

    failed, applied = h.inbound()
    assert failed.status == "failed"
    assert "KeyError" in (failed.reason or "") and "template variable missing" in (
        failed.reason or ""
    )
    assert applied.status == "applied", applied.reason
    log = h.log(game)
    assert len(log) == 1 and log[0][1] == 1  # Alice's move was rolled back, Bob's applied
    assert_all_acknowledged(h)
    assert "could not" not in text_of(h.latest(A))  # no half-made mail went out


def test_the_hourly_cap_per_sender(harness: Harness) -> None:
    h = harness
    h.restart()
    h.daemon.service.settings = h.settings.model_copy(update={"max_per_sender_per_hour": 3})
    h.new_game(seed="bad-8")
    h.new_game(seed="bad-8-second")  # two games: a plain mail names neither
    before = h.count(A)
    for n in range(5):
        h.send(plain_mail(A, SERVICE_ADDRESS, "hello", message_id=f"<flood{n}@client.test>"))
    h.step()
    statuses = [r.status for r in h.inbound()]
    assert statuses == ["rejected"] * 3 + ["ignored"] * 2
    assert "in an hour" in (h.inbound()[-1].reason or "")
    assert h.count(A) == before + 1  # and the "which game?" answers are throttled too
    assert_all_acknowledged(h)


def test_the_hourly_cap_counts_the_mail_of_earlier_batches(harness: Harness) -> None:
    h = harness
    h.restart()
    h.daemon.service.settings = h.settings.model_copy(update={"max_per_sender_per_hour": 3})
    h.new_game(seed="bad-8b")
    h.new_game(seed="bad-8b-second")  # two games: a plain mail names neither
    for n in range(2):
        h.send(plain_mail(A, SERVICE_ADDRESS, "hi", message_id=f"<early{n}@client.test>"))
    h.step()
    h.clock.advance(timedelta(minutes=30))
    for n in range(3):
        h.send(plain_mail(A, SERVICE_ADDRESS, "hi", message_id=f"<late{n}@client.test>"))
    h.step()
    assert [r.status for r in h.inbound()] == ["rejected"] * 3 + ["ignored"] * 2
    h.clock.advance(timedelta(minutes=31))  # the first two are over an hour old: 3 left
    h.send(plain_mail(A, SERVICE_ADDRESS, "hi", message_id="<later0@client.test>"))
    h.step()
    h.clock.advance(timedelta(minutes=30))  # and now all of them
    for n in range(1, 3):
        h.send(plain_mail(A, SERVICE_ADDRESS, "hi", message_id=f"<later{n}@client.test>"))
    h.step()
    assert [r.status for r in h.inbound()][5:] == ["ignored", "rejected", "rejected"]
    assert_all_acknowledged(h)


def test_error_replies_thread_after_the_mail_they_answer(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="bad-thread")
    move = "discard " + " ".join(c.ascii for c in sorted(h.game(game).holding(0))[:2])
    fake = f"cribbage+{'x' * 20}@{h.settings.domain}"
    h.deliver(
        reply(h.latest(A), A, "Alice", move, to=fake, threading=False, message_id="<q1@a.example>")
    )
    answer = h.latest(A)
    assert "Which game?" in about(answer)
    assert str(answer["In-Reply-To"]) == "<q1@a.example>"
    assert str(answer["References"]) == "<q1@a.example>"


def test_an_unrepeatable_message_id_is_not_threaded_but_still_answered(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="bad-thread-2")
    move = "discard " + " ".join(c.ascii for c in sorted(h.game(game).holding(0))[:2])
    fake = f"cribbage+{'y' * 20}@{h.settings.domain}"
    odd = "<bad id with spaces and ünïcode@a.example>"
    h.deliver(reply(h.latest(A), A, "Alice", move, to=fake, threading=False, message_id=odd))
    assert h.last_inbound().status == "rejected"
    answer = h.latest(A)
    assert "Which game?" in about(answer)
    assert answer["In-Reply-To"] is None and answer["References"] is None
