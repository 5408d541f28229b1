"""Forged ``watch``: in an open lobby, an attacker starts a game against the computer,
answers it with its tokens, and sends ``watch GAME`` in the names of 20 strangers (every
spelling) for 30 days while playing on. A board after every move would be 20 mailboxes
flooded; instead each stranger gets at most ONE mail — the confirmation request — and
no board. A stranger who answers its confirmation does get the boards (the control)."""

from __future__ import annotations

import random

import pytest

from engine import computer
from pbem.demo.bots import command_for
from tests.abuse.conftest import Build, Record
from tests.abuse.helpers import (
    Campaign,
    forged,
    kinds_to,
    latest_to,
    mails_to,
    reasons,
    rows_to,
    spellings,
)
from tests.e2e.helpers import STRANGER, reply

STRANGERS = [f"s{k}@strangers.test" for k in range(20)]
WILLING = STRANGERS[0]
"""The one stranger who answers the confirmation request: the positive control."""


@pytest.mark.parametrize("budget", [10, 100])
def test_forged_watch_requests(build: Build, budget: int, record_property: Record) -> None:
    h = build(lobby="open")
    h.deliver(forged(STRANGER, "new"))  # the attacker's own game against the computer
    game = h.last_inbound().game_id
    assert game is not None
    rng = random.Random(5)

    def move() -> None:
        """The attacker's next move, a reply to its newest game mail (taken with the
        next day's mail)."""
        state = h.game(game)
        if not state.is_over:
            action = computer.choose_action(state, state.to_act()[0], rng, "random")
            h.send(reply(latest_to(h, STRANGER), STRANGER, "Mallory", command_for(action)))

    move()
    h.step()
    assert h.last_inbound().status == "applied"  # with its token: the attacker's seat joined
    spell = {address: spellings(address) for address in STRANGERS}

    def mail(i: int) -> bytes:
        address = STRANGERS[i % len(STRANGERS)]
        return forged(spell[address](i // len(STRANGERS)), f"watch {game}")

    answered: list[int] = []

    def each_day(day: int) -> None:
        if not answered and mails_to(h, WILLING):  # the willing stranger confirms at once
            asked = latest_to(h, rows_to(h, WILLING)[0].recipient)
            h.send(reply(asked, WILLING, "Willing", "yes please"))
            answered.append(day)
        move()

    Campaign(h, budget, mail, each_day).run()
    others = {address: kinds_to(h, address) for address in STRANGERS[1:]}
    worst = max(len(kinds) for kinds in others.values())
    record_property("most_mails_to_a_stranger", worst)
    assert worst <= 1, (others, reasons(h))
    assert all(set(kinds) <= {"confirm"} for kinds in others.values()), others
    assert sum(map(len, others.values())) >= min(budget, len(STRANGERS)) - 1  # they were asked
    # The control: the stranger who confirmed watches, and gets the board as play goes on.
    boards = [row for row in rows_to(h, WILLING) if row.kind == "observe"]
    record_property("boards_to_the_willing_stranger", len(boards))
    assert kinds_to(h, WILLING)[0] == "confirm"
    assert len(boards) >= 2, (kinds_to(h, WILLING), reasons(h))
    moves = sum(1 for row in h.inbound() if (row.reason or "").startswith("applied: play"))
    record_property("attacker_moves", moves)
    assert moves >= 10, reasons(h)
