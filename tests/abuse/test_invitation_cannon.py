"""Invitation cannon: known players loop ``challenge`` at one stranger's mailbox (under
+tags and changes of case) and ``cancel`` it, for 30 days, alone or taking turns. The
stranger never answers, so the mailbox gets at most ONE mail in all — the first
invitation; no second invitation, no "withdrawn" note, nothing the timers send."""

from __future__ import annotations

import pytest

from tests.abuse.conftest import Build, Record
from tests.abuse.helpers import (
    VICTIM,
    Campaign,
    forged,
    kinds_to,
    mails_to,
    reasons,
    spellings,
)
from tests.e2e.helpers import ALICE, BOB

ATTACKERS = {"one-attacker": (ALICE[0],), "two-attackers": (ALICE[0], BOB[0])}


@pytest.mark.parametrize("attackers", list(ATTACKERS))
@pytest.mark.parametrize("budget", [10, 100])
def test_invitation_cannon(
    build: Build, budget: int, attackers: str, record_property: Record
) -> None:
    h = build()
    h.new_game((ALICE, BOB))  # both known players (seated by the admin: confirmed)
    who = ATTACKERS[attackers]
    spell = spellings(VICTIM)

    def mail(i: int) -> bytes:
        attacker, turn = who[i % len(who)], i // len(who)
        body = (
            f"challenge v+{turn}@VICTIM.test",
            f"challenge {spell(turn)}",
            "cancel",
        )[turn % 3]
        return forged(attacker, body)

    Campaign(h, budget, mail).run()
    record_property("victim_mails", mails_to(h, VICTIM))
    assert mails_to(h, VICTIM) <= 1, (kinds_to(h, VICTIM), reasons(h))
