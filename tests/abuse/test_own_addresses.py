"""The service's own addresses: a player invites the service itself (its address with
any +tag, in any case) or its computer seats, and forged mail comes *from* those
addresses asking for games, help, watching and invitations. None of it makes the
service write to itself — 0 mails to its own mailboxes over 30 days — and everything it
did write, fed back to its inbox as a looping forwarder would, is dropped as its own
mail: no loop."""

from __future__ import annotations

import pytest

from pbem.store import models as m
from tests.abuse.conftest import Build, Record
from tests.abuse.helpers import (
    Campaign,
    drain,
    forged,
    invitations,
    is_service_address,
    last_inbound_id,
    reasons,
)
from tests.e2e.helpers import ALICE, BOB, Harness

A, B = ALICE[0], BOB[0]

OWN = (
    "cribbage+x@pbem.test",
    "computer2@pbem.test",
    "CRIBBAGE@PBEM.TEST",
    "Cribbage+Tag@Pbem.Test",
    "computer@pbem.test",
    "cribbage@pbem.test",
)


def to_self(h: Harness) -> list[m.Outbox]:
    return [row for row in h.outbox() if is_service_address(row.recipient)]


@pytest.mark.parametrize("budget", [10, 100])
def test_the_service_never_mails_itself(build: Build, budget: int, record_property: Record) -> None:
    h = build(lobby="open")
    h.new_game((ALICE, BOB))
    h.deliver(forged(B, "new 3 players"))  # computer and computer2 sit at a game now
    watched = h.last_inbound().game_id

    def mail(i: int) -> bytes:
        own = OWN[i % len(OWN)]
        attacks = (
            (A, f"challenge {own}"),
            (A, f"challenge {own} carol@example.net"),
            (own, "new"),
            (own, "help"),
            (own, f"watch {watched}"),
            (own, "challenge v@victim.test"),
            (own, "games"),
            (A, "cancel"),
        )
        sender, body = attacks[(i // len(OWN)) % len(attacks)]
        return forged(sender, body)

    Campaign(h, budget, mail).run()
    record_property("mails_to_itself", len(to_self(h)))
    assert to_self(h) == [], reasons(h)
    assert [i.invitee for i in invitations(h) if is_service_address(i.invitee)] == []
    # Everything written so far comes back to the service's inbox: all of it is its own
    # mail, dropped, and nothing more is written.
    # (Mail sent over a month ago is kept without its bytes: `mail_retention_days`.)
    written = h.outbox()
    kept = [row for row in written if row.raw]
    start = last_inbound_id(h)
    for row in kept:
        h.send(row.raw)
    drain(h)
    back = reasons(h, start)
    record_property("mails_after_feedback", len(h.outbox()) - len(written))
    assert len(h.outbox()) == len(written), back
    assert sum(back.values()) == len(kept)
    assert all(r.startswith("ignored: loop") for r in back), back
