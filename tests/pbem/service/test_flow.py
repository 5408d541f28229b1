"""The flow of one message through the stages, in a plain Session: the final state,
and the fault hook's steps where a crash is tested."""

from __future__ import annotations

from sqlmodel import Session

from pbem.service.flow import handle
from pbem.store import models as m
from tests.pbem.service.desk import Desk

ANN = "ann@play.example"


def run(desk: Desk, inbound_id: int) -> tuple[str, str]:
    with Session(desk.ctx.db) as session:
        row = session.get(m.Inbound, inbound_id)
        assert row is not None
        outcome = handle(desk.ctx, session, row)
        assert session.get(m.Inbound, inbound_id).status == outcome.status  # type: ignore[union-attr]
        return outcome.status, outcome.reason


def test_a_move_passes_every_step(desk: Desk) -> None:
    game_id = desk.new_game()
    with Session(desk.ctx.db) as session:
        command = desk.discard(session, game_id, 0)
    status, reason = run(desk, desk.store(ANN, command, desk.token(game_id, 0)))
    assert (status, reason) == ("applied", f"applied: {command.lower()}")
    assert desk.steps == ["read", "before-log", "before-render", "before-mark"]


def test_a_refused_mail_logs_nothing_and_is_answered(desk: Desk) -> None:
    game_id = desk.new_game()
    status, reason = run(desk, desk.store(ANN, "play 5h", desk.token(game_id, 0)))
    assert status == "rejected" and reason.startswith("play 5h:")
    assert desk.steps == ["read"]
