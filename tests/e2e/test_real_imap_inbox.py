"""The service's own IMAP mailbox on the real Dovecot: a message is marked \\Seen (or moved
to the ``processed`` folder) only after the transaction that processed it committed, so a
daemon that dies between storing and processing a message processes it once on restart."""

from __future__ import annotations

import subprocess

import pytest

from pbem.service import InjectedFault
from tests.fixtures.realmail import RealMail, RealMailFactory, RealPlayer


def one_move_in_the_inbox(real: RealMail) -> tuple[int, RealPlayer]:
    """A two-player game whose first player's discard waits, unread, in the service's INBOX."""
    alice, bob = real.player("alice", "Alice"), real.player("bob", "Bob")
    game_id = real.new_game([alice, bob], seed="imap-inbox")
    real.settle()  # the deal reaches both
    alice.answer()
    real.wait_own(1)
    return game_id, alice


def moves(real: RealMail, game_id: int) -> int:
    return len(real.game(game_id).actions)


def test_seen_only_after_processing(realmail: RealMail) -> None:
    real = realmail
    game_id, _ = one_move_in_the_inbox(real)
    before = moves(real, game_id)
    assert real.own_flags() == [set()]

    stats = real.step()
    assert (stats.fetched, stats.new, stats.processed) == (1, 1, 1)
    assert [r.status for r in real.inbound()] == ["applied"]
    assert moves(real, game_id) == before + 1
    assert real.own_flags() == [{"\\Seen"}]
    assert real.step().fetched == 0  # seen and behind the cursor: not read again


def test_moved_to_the_processed_folder(realmail_factory: RealMailFactory) -> None:
    real = realmail_factory(imap={"processed": "Done"})
    _, alice = one_move_in_the_inbox(real)
    stats = real.step()
    assert (stats.fetched, stats.processed) == (1, 1)
    assert [r.status for r in real.inbound()] == ["applied"]
    assert real.own_flags() == []
    assert real.own_flags("Done") == [{"\\Seen"}]
    [kept] = real.own_mailbox("Done")
    assert kept["From"].addresses[0].addr_spec == alice.address
    assert real.step().fetched == 0


@pytest.mark.parametrize("processed", [None, "Done"], ids=["seen", "moved"])
def test_killed_between_store_and_process(
    realmail_factory: RealMailFactory, processed: str | None
) -> None:
    real = realmail_factory(imap={"processed": processed} if processed else {})
    game_id, _ = one_move_in_the_inbox(real)
    before = moves(real, game_id)

    def killed(step: str) -> None:
        if step == "read":
            raise InjectedFault("killed after storing, before processing")

    real.service.fault = killed
    with pytest.raises(InjectedFault):
        real.step()
    assert [r.status for r in real.inbound()] == ["pending"]  # stored and committed
    assert real.own_flags() == [set()]  # the fetch did not set \Seen
    assert moves(real, game_id) == before

    real.restart()  # a new daemon: new IMAP session, cursor from the database
    stats = real.step()
    assert (stats.fetched, stats.new, stats.processed) == (1, 0, 1)
    assert [r.status for r in real.inbound()] == ["applied"]
    assert moves(real, game_id) == before + 1
    if processed:
        assert real.own_flags() == [] and real.own_flags(processed) == [{"\\Seen"}]
    else:
        assert real.own_flags() == [{"\\Seen"}]
    real.step()
    assert len(real.inbound()) == 1 and moves(real, game_id) == before + 1


def test_the_reply_address_with_a_token_reaches_the_service_inbox(realmail: RealMail) -> None:
    """Postfix and Dovecot split ``local+TOKEN@domain`` at the "+" (deploy/mailstack.sh sets
    ``recipient_delimiter``): the mail lands in the service's own INBOX, address intact."""
    real = realmail
    delimiter = subprocess.run(
        ["postconf", "-h", "recipient_delimiter"], capture_output=True, text=True, check=True
    )
    assert delimiter.stdout.strip() == "+"
    alice = real.player("alice", "Alice")
    to = f"{real.local_part}+sometoken@{real.settings.domain}"
    raw = (
        f"From: Alice <{alice.address}>\r\nTo: {to}\r\nSubject: hello\r\n"
        f"Message-ID: <plus.{alice.address}>\r\n\r\nhand\r\n"
    ).encode()
    alice.send(raw)
    real.wait_own(1)
    [msg] = real.own_mailbox()
    assert msg["Delivered-To"] == to
    assert msg["To"] == to
