"""Daily caps within one batch and across workers: an attacker's mails all arrive at
once — one batch, or two PostgreSQL workers taking the same batch turn about — and the
caps still hold, counted on locked rows: at most ``max_new_games_per_day`` games in one
mailbox's name (any +tag or case of it), at most ``max_open_invitations`` open
invitations of one player, at most ``max_invitations_per_address_per_day`` invitations
into one mailbox, whoever sends them. (Invitations need a proven mail: their attackers
are players whose mail the trusted provider vouches for.)"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from pbem.store import models as m
from tests.abuse.conftest import Build, Record
from tests.abuse.helpers import (
    BUDGETS,
    TRUSTED,
    VICTIM,
    count_rows,
    forged,
    games_of_mailbox,
    kinds_to,
    one_batch,
    passing,
    reasons,
    spellings,
    two_workers,
)
from tests.e2e.helpers import ALICE, BOB, DAVE, Harness

A = ALICE[0]
CAPS = ("new-games", "open-invitations", "invitee-day")
CHALLENGERS = [(f"p{k}@players.test", f"P{k}") for k in range(6)]


@dataclass
class Attack:
    """One cap under attack: the service, the attacker's mails, the cap, and how to count
    what got through."""

    h: Harness
    mails: list[bytes]
    limit: int
    measure: Callable[[], int]


def attack(build: Build, cap: str, budget: int) -> Attack:
    """The harness, the attacker's ``budget`` mails against ``cap``, the cap, and how
    much got through."""
    if cap == "new-games":
        # Alice is a confirmed player; in an open lobby every spelling of her address
        # may start games in her mailbox's name, three a day.
        h = build(lobby="open", max_new_games_per_day=3)
        h.new_game((ALICE, BOB))
        spell = spellings(A)
        mails = [forged(spell(i), "new") for i in range(budget)]
        return Attack(h, mails, 3, lambda: len(games_of_mailbox(h, A)) - 1)
    if cap == "open-invitations":
        h = build(max_open_invitations=2, trusted_authserv_id=TRUSTED)
        h.new_game((ALICE, BOB))
        mails = [
            forged(A, f"challenge t{i}@targets.test", auth=[passing("example.com")])
            for i in range(budget)
        ]
        # The invitations that went out (each open one was mailed once).
        return Attack(h, mails, 2, lambda: count_rows(h, m.Outbox, m.Outbox.kind == "invite"))
    assert cap == "invitee-day"
    # The victim is a confirmed player (seated by the admin): no one-unasked-mail rule
    # stands in the way, only the day cap — against six challengers at once.
    h = build(trusted_authserv_id=TRUSTED)
    h.new_game(((VICTIM, "Victor"), DAVE))
    for k in range(0, len(CHALLENGERS), 2):
        h.service.new_game(CHALLENGERS[k : k + 2], seed=f"caps-{k}")
    h.step()
    spell = spellings(VICTIM)
    mails = [
        forged(
            CHALLENGERS[i % len(CHALLENGERS)][0],
            f"challenge {spell(i)}",
            auth=[passing("players.test")],
        )
        for i in range(budget)
    ]
    limit = h.settings.max_invitations_per_address_per_day
    return Attack(h, mails, limit, lambda: kinds_to(h, VICTIM).count("invite"))


RUNS = [
    (cap, budget)
    for cap in CAPS
    for budget in BUDGETS
    # A thousand mails where they stay cheap; each refusal to six challengers at the
    # one victim is a mail of its own (still at 10 and 100).
    if budget < 1000 or cap != "invitee-day"
]


@pytest.mark.parametrize(("cap", "budget"), RUNS)
def test_daily_caps_hold_within_one_batch(
    build: Build, cap: str, budget: int, record_property: Record
) -> None:
    run = attack(build, cap, budget)
    one_batch(run.h, run.mails)
    got = run.measure()
    record_property("got_through", got)
    assert 0 < got <= run.limit, (got, reasons(run.h))


@pytest.mark.parametrize(
    "db_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
@pytest.mark.parametrize(("cap", "budget"), RUNS)
def test_daily_caps_hold_across_two_workers(
    build: Build, cap: str, budget: int, record_property: Record
) -> None:
    run = attack(build, cap, budget)
    two_workers(run.h, run.mails)
    got = run.measure()
    record_property("got_through", got)
    assert 0 < got <= run.limit, (got, reasons(run.h))
