"""Open lobby, forged ``new``: anyone may start a game against the computer, so an
attacker starts games in a stranger's name (every spelling of the mailbox, every way of
asking) for 30 days while the timers run — cut reminders, the cut deadline, aborts. The
stranger never answers: its mailbox gets at most ONE mail (the first game's first mail),
and a game it never answered is dropped quietly, with no abort mail."""

from __future__ import annotations

import pytest

from pbem.store import models as m
from tests.abuse.conftest import Build, Record
from tests.abuse.helpers import (
    BUDGETS,
    VICTIM,
    Campaign,
    forged,
    games_of_mailbox,
    kinds_to,
    mails_to,
    reasons,
    spellings,
)

ASKS = ("new", "NEW", "play computer", "new 3 players", "new best of 3", "play computer level hard")


@pytest.mark.parametrize("budget", BUDGETS)
def test_forged_new_in_a_strangers_name(build: Build, budget: int, record_property: Record) -> None:
    h = build(lobby="open", fair_deals=True)  # every game first waits for the cuts
    spell = spellings(VICTIM)

    def mail(i: int) -> bytes:
        return forged(spell(i), ASKS[i % len(ASKS)])

    Campaign(h, budget, mail).run()
    got = mails_to(h, VICTIM)
    games = games_of_mailbox(h, VICTIM)
    record_property("victim_mails", got)
    record_property("games_started", len(games))
    assert got <= 1, (kinds_to(h, VICTIM), reasons(h))
    assert games, reasons(h)  # the lobby is open: the first one did start
    # Nobody cut for the deal: each game was aborted at its deadline, and no abort mail
    # (nor reminder) went — only the first game's first mail.
    assert {g.status for g in games} == {m.GameStatus.ABORTED.value}
    assert kinds_to(h, VICTIM) in ([], ["cut"]), kinds_to(h, VICTIM)
