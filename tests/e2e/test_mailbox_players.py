"""The built-in mailbox players, reading the Maildirs the service writes."""

from __future__ import annotations

import email
import email.parser
import mailbox
import os
import random
from datetime import timedelta
from typing import Any
from unittest import mock

from pbem.demo.bots import MailboxPlayer, maildir_delivery, maildir_fetch, thread_order
from pbem.transport.maildir import recipient_folder_name
from tests.e2e.helpers import ALICE, BOB, Harness, parse, reply

A, B = ALICE[0], BOB[0]


def test_thread_order_puts_replies_after_what_they_answer() -> None:
    first = parse(b"Message-ID: <1@x>\r\n\r\nx")
    second = parse(b"Message-ID: <2@x>\r\nIn-Reply-To: <1@x>\r\nReferences: <1@x>\r\n\r\nx")
    third = parse(b"Message-ID: <3@x>\r\nIn-Reply-To: <2@x>\r\nReferences: <1@x> <2@x>\r\n\r\nx")
    other = parse(b"Message-ID: <9@y>\r\n\r\nx")
    assert thread_order([third, other, second, first]) == [other, first, second, third]


def test_a_player_answers_the_latest_mail_even_when_file_times_disagree(
    harness: Harness,
) -> None:
    h = harness
    game = h.new_game(seed="burst")
    h.mail_all(A)  # so that her own move brings her a mail
    cards = sorted(h.game(game).holding(0))[:2]
    h.answer(A, "discard " + " ".join(c.ascii for c in cards))
    folder = h.outbox_dir / recipient_folder_name(A)
    files = sorted((folder / "new").iterdir(), key=lambda p: p.stat().st_mtime_ns)
    assert len(files) == 2  # "your turn: discard", then "waiting for Bob"
    newest = files[1].stat().st_mtime
    os.utime(files[0], (newest + 1, newest + 1))  # the older mail looks newer on disk

    alice = MailboxPlayer(
        A, "Alice", maildir_fetch(folder), maildir_delivery(h.inbox_dir), random.Random(1)
    )
    assert len(alice.play()) == 2
    assert alice.replies == 0  # the latest mail says: wait for Bob
    h.step()
    assert len(h.inbound()) == 1

    # and once Bob has discarded, what the thread says next is answered as usual
    h.deliver(
        reply(
            h.latest(B),
            B,
            "Bob",
            "discard " + " ".join(c.ascii for c in sorted(h.game(game).holding(1))[:2]),
        )
    )
    bob_turn = h.game(game).to_act() == (1,)
    alice.play()
    assert alice.replies == (0 if bob_turn else 1)


def test_fetch_reads_only_new_mail_and_marks_it_read(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="fetch")
    folder = h.outbox_dir / recipient_folder_name(A)
    fetch = maildir_fetch(folder)
    assert [str(m["Message-ID"]) for m in fetch()] == [str(h.latest(A)["Message-ID"])]
    assert fetch() == []
    for _ in range(3):
        h.service.resend(game)
        h.clock.advance(timedelta(seconds=1))
    h.step()

    parses: list[object] = []
    real = email.parser.Parser.parse

    def counting(self: email.parser.Parser, fp: Any, headersonly: bool = False) -> Any:
        parses.append(fp)
        return real(self, fp, headersonly)

    with mock.patch.object(email.parser.Parser, "parse", counting):
        fresh = fetch()
    assert len(fresh) == 3 and len(parses) == 3  # the mail read before is not read again
    box = mailbox.Maildir(str(folder), create=False)
    assert len(box) == 4
    for key in box.iterkeys():
        msg = box.get_message(key)
        assert msg.get_subdir() == "cur" and "S" in msg.get_flags()
    assert h.received(A)[-1]["Message-ID"] == fresh[-1]["Message-ID"]
