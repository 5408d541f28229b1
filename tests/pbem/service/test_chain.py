"""Intake's chain: one table of named rules, and the rule that ended each message kept."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlmodel import Session

from pbem.service import flow
from pbem.service.intake import CHAIN, ROUTES
from pbem.service.intake.chain import GAME
from pbem.store import models as m
from tests.pbem.service.desk import Desk

ANN, BOB = "ann@play.example", "bob@play.example"


def test_the_chain_reads_as_the_route_of_a_stored_mail() -> None:
    assert [link.rule for link in CHAIN] == [
        "machine",
        "own-address",
        "trusted-verdict",
        "size",
        "token",
        "blocked",
        "volume",
    ]
    assert set(ROUTES) == {"seat", "invitation", "confirmation", "nothing"}
    assert [link.rule for link in ROUTES["confirmation"]] == ["confirmation", "seat"]
    assert [link.rule for link in ROUTES["nothing"]] == [
        "quieten",
        "lobby",
        "stranger",
        "no-game",
        "seat",
    ]
    names = [link.rule for link in CHAIN] + [link.rule for r in ROUTES.values() for link in r]
    assert GAME not in names  # the game is where a seat's mail goes, not a rule of intake
    for link in [*CHAIN, *(link for route in ROUTES.values() for link in route)]:
        assert link.stops and link.check.__doc__, f"rule {link.rule} says what it does"


def run(desk: Desk, inbound_id: int) -> m.Inbound:
    with Session(desk.ctx.db) as session:
        row = session.get(m.Inbound, inbound_id)
        assert row is not None
        flow.handle(desk.ctx, session, row)
        session.commit()
        done = session.get(m.Inbound, inbound_id)
        assert done is not None
        return done


@pytest.mark.parametrize(
    ("case", "rule", "status"),
    [
        ("auto-reply", "machine", "ignored"),
        ("from the service", "own-address", "ignored"),
        ("stranger", "stranger", "ignored"),
        ("never", "quieten", "applied"),
        ("lobby", "lobby", "applied"),
        ("which game", "no-game", "rejected"),
        ("wrong seat", "seat", "rejected"),
        ("move", GAME, "applied"),
        ("blocked", "blocked", "ignored"),
    ],
)
def test_each_message_keeps_the_rule_that_ended_it(
    desk: Desk, case: str, rule: str, status: str
) -> None:
    game_id = desk.new_game()
    if case == "which game":
        desk.new_game()
    if case == "blocked":
        with Session(desk.ctx.db) as session:
            ann = session.get(m.Player, 1)
            assert ann is not None and ann.email == ANN
            ann.blocked = True
            session.add(ann)
            session.commit()
    mails = {
        "auto-reply": (ANN, "away", desk.token(game_id, 0), {"Auto_Submitted": "auto-replied"}),
        "from the service": (f"computer2@{desk.ctx.settings.domain}", "hello", None, {}),
        "stranger": ("eve@else.example", "help", None, {}),
        "never": ("eve@else.example", "never", None, {}),
        "lobby": (ANN, "games", None, {}),
        "which game": (ANN, "hand", None, {}),
        "wrong seat": (BOB, "hand", desk.token(game_id, 0), {}),
        "move": (ANN, "hand", desk.token(game_id, 0), {}),
        "blocked": (ANN, "hand", desk.token(game_id, 0), {}),
    }
    sender, body, token, headers = mails[case]
    row = run(desk, desk.store(sender, body, token, **headers))
    assert (row.rule, row.status) == (rule, status), row.reason


def test_a_batch_does_not_carry_one_messages_rule_to_the_next(desk: Desk) -> None:
    game_id = desk.new_game()
    first = run(desk, desk.store("eve@else.example", "help"))
    second = run(desk, desk.store(ANN, "hand", desk.token(game_id, 0)))
    assert (first.rule, second.rule) == ("stranger", GAME)
    desk.ctx = replace(desk.ctx, rule=None)
    third = run(desk, desk.store(ANN, "x" * 10, desk.token(game_id, 0)))
    assert third.rule == GAME
