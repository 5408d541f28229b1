"""Forged senders where proof is required: with a trusted provider named
(``trusted_authserv_id``), a mail whose From that provider did not vouch for — no
Authentication-Results of it at all, its ``dmarc=fail``, or its topmost header unreadable
(too long, or garbage after the authserv-id) with a forged ``dmarc=pass`` of the same
authserv-id below — changes nothing and is not answered, whatever it asks: settings,
lobby commands, watching, a tokenless resignation, even a move carrying the seat's real
reply token. A genuine mail with the provider's pass on top still works."""

from __future__ import annotations

from email.utils import make_msgid

import pytest

from engine import computer
from pbem.demo.bots import command_for
from tests.abuse.conftest import Build, Record
from tests.abuse.helpers import (
    BUDGETS,
    FORGERIES,
    TRUSTED,
    Campaign,
    forged,
    last_inbound_id,
    passing,
    reasons,
    snapshot,
    with_auth,
)
from tests.e2e.helpers import ALICE, BOB, Harness, reply

A, B = ALICE[0], BOB[0]


def genuine(h: Harness, sender: str, body: str) -> None:
    """A mail the trusted provider vouched for (its pass on top), processed."""
    h.deliver(forged(sender, body, auth=(passing(sender.split("@")[1]),)))
    row = h.last_inbound()
    assert row.status == "applied", row.reason


@pytest.mark.parametrize("budget", BUDGETS)
def test_unproven_mail_changes_nothing_and_sends_nothing(
    build: Build, budget: int, record_property: Record
) -> None:
    # The clock runs 30 days; nothing else may change meanwhile (no timers, no lapse).
    h = build(trusted_authserv_id=TRUSTED, reminder_hours=0, timeout_days=0, invitation_days=60)
    game = h.new_game((ALICE, BOB))
    genuine(h, A, "challenge carol@example.net")  # an invitation for 'cancel' to withdraw
    genuine(h, B, "new")  # a game against the computer, open to watchers
    watched = h.last_inbound().game_id
    game_mail = next(msg for msg in h.received(A) if h.token(game, 0) in str(msg["Reply-To"]))
    move = command_for(computer.choose_action(h.game(game), 0, level="random"))
    commands = (
        "stop",
        "name Mallory",
        "away 3 days",
        "digest on",
        "mail all",
        "challenge x@y.test",
        "new",
        "cancel",
        f"watch {watched}",
        "resign",
        move,  # with the seat's real token: a reply to Alice's game mail
    )
    kinds = list(FORGERIES.values())

    def mail(i: int) -> bytes:
        body = commands[i % len(commands)]
        auth = kinds[(i // len(commands)) % len(kinds)]
        if body == move:
            raw = reply(game_mail, A, "Alice", move, message_id=make_msgid(domain="x.test"))
            return with_auth(raw, *auth)
        return forged(A, body, auth=auth)

    before = snapshot(h)
    start = last_inbound_id(h)
    # From 100 mails on, every command goes under every forgery; the smallest budget sends
    # each command once (11 mails).
    Campaign(h, max(budget, len(commands)), mail).run()
    after = snapshot(h)
    record_property("mails_sent", after["Outbox"] - before["Outbox"])
    assert after == before, reasons(h, start)
    said = reasons(h, start)
    assert all("From not vouched for" in r for r in said), said
    # The positive control: with the provider's pass on top, a setting and a move work.
    genuine(h, A, "name Alicia")
    alice = h.player(A)
    assert alice is not None and alice.display_name == "Alicia"
    assert snapshot(h)["Outbox"] == after["Outbox"] + 1  # the answer
    h.deliver(with_auth(reply(game_mail, A, "Alice", move), passing("example.com")))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert len(h.log(game)) > 0
