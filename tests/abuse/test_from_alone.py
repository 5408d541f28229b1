"""A From alone proves nothing: with no trusted provider (the default), anyone can write
a player's From to the plain address. For 30 days a forger sends a confirmed player's
From with every change there is — a move in her only game, ``name``, ``stop``, ``away``,
``digest``, ``mail all``, ``never``, ``challenge``, ``cancel`` — and nothing changes: no
move, no setting, no invitation, no suppression. The real player gets at most
``max_unproven_answers_per_day`` answers a day (each a "Did you send this?" with a
one-click link), and one click of hers does what she asked."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from sqlmodel import Session, select

from engine import computer
from pbem.demo.bots import command_for
from pbem.store import models as m
from tests.abuse.conftest import Build, Record
from tests.abuse.helpers import (
    BUDGETS,
    Campaign,
    confirm_latest,
    forged,
    last_inbound_id,
    reasons,
    rows_to,
    snapshot,
)
from tests.e2e.helpers import ALICE, BOB, Harness

A, B = ALICE[0], BOB[0]

CHANGES = (
    "name Mallory",
    "stop",
    "away 3 days",
    "digest on",
    "mail all",
    "never",
    "challenge x@y.test",
    "cancel",
    "unsubscribe",
)
"""What the forger asks in Alice's name, besides a move in her game."""


def state(h: Harness) -> dict[str, Any]:
    """What a forged mail must not change: the players, games, seats, moves, talk,
    invitations, watchers and matches, and whether any mailbox is suppressed."""
    snap = snapshot(h)
    with Session(h.db) as session:
        suppressed = sorted(c.mailbox for c in session.exec(select(m.Consent)) if c.suppressed)
    keep = ("players", "games", "seats", "invitations", "watchers", "ActionLog", "Talk", "Match")
    return {**{k: snap[k] for k in keep}, "suppressed": suppressed}


def answers_per_day(h: Harness, address: str, after: int) -> Counter[str]:
    """The mails that answered someone's mail (not a game's own) to ``address``'s
    mailbox, written after outbox row ``after``, by day."""
    answering = ("confirm", "error", "help", "welcome")
    return Counter(
        row.created_at.strftime("%Y-%m-%d")
        for row in rows_to(h, address)
        if (row.id or 0) > after and row.kind in answering
    )


@pytest.mark.parametrize("budget", BUDGETS)
def test_a_forged_from_changes_nothing(build: Build, budget: int, record_property: Record) -> None:
    # No timers (nothing else may change in 30 days); confirmation requests lapse weekly.
    h = build(reminder_hours=0, timeout_days=0)
    game = h.new_game((ALICE, BOB))  # Alice's only game: a plain mail of hers is its
    move = command_for(computer.choose_action(h.game(game), 0, level="random"))
    bodies = (move, *CHANGES)
    before = state(h)
    start, last_row = last_inbound_id(h), max((r.id or 0) for r in h.outbox())

    def mail(i: int) -> bytes:
        return forged(A, bodies[i % len(bodies)])

    Campaign(h, max(budget, len(bodies)), mail).run()
    assert state(h) == before, reasons(h, start)
    per_day = answers_per_day(h, A, last_row)
    record_property("victim_answers", sum(per_day.values()))
    record_property("victim_answers_max_a_day", max(per_day.values(), default=0))
    assert per_day, reasons(h, start)  # she was asked, at least once
    assert max(per_day.values()) <= h.settings.max_unproven_answers_per_day, per_day
    # Nobody else heard of it: Bob got no mail from the forger's doing.
    assert not answers_per_day(h, B, last_row)
    assert [r.kind for r in rows_to(h, B) if (r.id or 0) > last_row] == []


def test_one_click_of_the_real_player_does_it(build: Build) -> None:
    """A move and a setting by plain mail each wait for one click; then they are done,
    exactly once (a second click does nothing more)."""
    h = build(reminder_hours=0, timeout_days=0)
    game = h.new_game((ALICE, BOB))
    action = computer.choose_action(h.game(game), 0, level="random")
    h.deliver(forged(A, command_for(action)))
    assert "held until" in (h.last_inbound().reason or "")
    assert len(h.log(game)) == 0
    confirm_latest(h, A)
    assert len(h.log(game)) == 1, reasons(h)
    h.deliver(forged(A, "name Alicia"))
    alice = h.player(A)
    assert alice is not None and alice.display_name == "Alice"
    confirm_latest(h, A)
    alice = h.player(A)
    assert alice is not None and alice.display_name == "Alicia"
    # The same confirmation again: no longer open, nothing more done.
    confirm = [r for r in rows_to(h, A) if r.kind == "confirm"]
    assert len(confirm) == 2
    logged = len(h.log(game))
    with pytest.raises(AssertionError):
        confirm_latest(h, A)
    assert len(h.log(game)) == logged


def test_a_forged_never_or_stop_silences_no_one(build: Build) -> None:
    """``never`` and ``stop`` in a player's name by a From alone change nothing until
    her mailbox confirms: her game's mail keeps coming."""
    h = build(reminder_hours=0, timeout_days=0)
    game = h.new_game((ALICE, BOB))
    h.play_until(game, lambda g: len(g.actions) > 2 and g.to_act() == (1,))
    for word in ("never", "stop", "unsubscribe"):
        h.deliver(forged(A, word))
    alice = h.player(A)
    assert alice is not None and not alice.stopped
    assert h.service.mailbox(A)[2] == ("suppressed", "no")
    before = h.count(A)
    # The game goes on (Bob's turn), and Alice hears of it when it is hers.
    while (g := h.game(game)).to_act() == (1,):
        h.move(game, computer.choose_action(g, 1, level="random"))
    assert h.game(game).to_act() == (0,)
    assert h.count(A) > before
