"""Rematch cannon: one player of a finished game loops ``rematch N best of 7`` and
``cancel`` at the other, who never answers, for 30 days.

Every human opponent of a finished game confirmed its mailbox by design: the admin
seated it (`pbem.service.ops.start.start_game` counts admin seats as confirmed) or it
accepted an invitation with its own token. No game leaves an unconfirmed human at the
table to be rematched, so what bounds the cannon is the per-mailbox day cap: at most
``max_invitations_per_address_per_day`` invitations reach the opponent's mailbox on any
day, whoever asks. (A rematch needs a proven mail: the cannon is a player whose mail the
trusted provider vouches for.)"""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.abuse.conftest import Build, Record
from tests.abuse.helpers import (
    TRUSTED,
    VICTIM,
    Campaign,
    forged,
    kinds_to,
    passing,
    per_day,
    reasons,
    rows_to,
)
from tests.e2e.helpers import ALICE


@pytest.mark.parametrize("budget", [10, 100])
def test_rematch_cannon(build: Build, budget: int, record_property: Record) -> None:
    h = build(timeout_action="forfeit", timeout_days=1, trusted_authserv_id=TRUSTED)
    a = ALICE[0]
    game = h.new_game((ALICE, (VICTIM, "Victor")))
    h.clock.advance(timedelta(days=1, minutes=1))
    h.step()  # nobody discarded: the timeout rule forfeits the game
    assert h.game_row(game).status == "finished"
    before = len(rows_to(h, VICTIM))

    def mail(i: int) -> bytes:
        body = (f"rematch {game} best of 7", "cancel")[i % 2]
        return forged(a, body, auth=[passing("example.com")])

    Campaign(h, budget, mail).run()
    cap = h.settings.max_invitations_per_address_per_day
    got = rows_to(h, VICTIM)[before:]
    invites = per_day(got, "invite")
    record_property("victim_mails", len(got))
    record_property("invitations_max_a_day", max(invites.values(), default=0))
    assert invites, reasons(h)  # the cannon did fire
    assert max(invites.values()) <= cap, (invites, kinds_to(h, VICTIM), reasons(h))
