"""Strangers asking for answers: in an open lobby, mail in a stranger's name (every
spelling) asks ``help``, ``games``, ``standings``, lobby commands it cannot use, or says
nothing a command — and now and then ``new``, so that the stranger becomes a "player"
whose questions would be answered. Over 30 days its mailbox gets at most ONE mail."""

from __future__ import annotations

import pytest

from tests.abuse.conftest import Build, Record
from tests.abuse.helpers import (
    BUDGETS,
    VICTIM,
    Campaign,
    forged,
    kinds_to,
    mails_to,
    reasons,
    spellings,
)

QUESTIONS = (
    "new",
    "help",
    "games",
    "standings",
    "what is this? please tell me",
    "xyzzy 42 ♣",
    "hand",
    "rematch 1",
    "unwatch 1",
    "cancel",
    "history",
)


@pytest.mark.parametrize("budget", BUDGETS)
def test_questions_in_a_strangers_name(build: Build, budget: int, record_property: Record) -> None:
    h = build(lobby="open")
    spell = spellings(VICTIM)

    def mail(i: int) -> bytes:
        return forged(spell(i), QUESTIONS[i % len(QUESTIONS)], subject=("", "help", "?")[i % 3])

    Campaign(h, budget, mail).run()
    got = mails_to(h, VICTIM)
    record_property("victim_mails", got)
    assert got <= 1, (kinds_to(h, VICTIM), reasons(h))
