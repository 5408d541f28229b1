"""timers alone: reminders, then the timeout rule, on a context whose clock is later."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from sqlmodel import Session

from pbem.service import timers
from pbem.store import models as m
from tests.pbem.service.desk import NOW, Desk


def test_a_reminder_goes_to_each_player_to_act_once_it_is_due(desk: Desk) -> None:
    game_id = desk.new_game()
    desk.delivered()
    assert timers.run_timers(desk.ctx) == 0  # nothing due yet
    later = replace(desk.ctx, clock=lambda: NOW + timedelta(hours=25))
    assert timers.run_timers(later) == 1
    with Session(desk.ctx.db) as session:
        reminders = [r for r in desk.outbox(session) if r.kind == "reminder"]
        assert sorted(r.recipient for r in reminders) == ["ann@play.example", "bob@play.example"]
        game_row = session.get(m.Game, game_id)
        assert game_row is not None and game_row.reminders_sent == 1


def test_after_the_deadline_a_forfeit_ends_the_game(desk: Desk) -> None:
    game_id = desk.new_game()
    desk.delivered()
    settings = desk.ctx.settings.model_copy(update={"timeout_action": "forfeit"})
    later = replace(desk.ctx, settings=settings, clock=lambda: NOW + timedelta(days=8))
    assert timers.run_timers(later) == 1
    with Session(desk.ctx.db) as session:
        game_row = session.get(m.Game, game_id)
        assert game_row is not None and game_row.status == "finished"
        assert [r.kind for r in desk.outbox(session)][-2:] == ["gameover", "gameover"]


def test_no_reminder_nor_forfeit_while_the_turn_mail_is_not_delivered(desk: Desk) -> None:
    """The turn mails still wait in the outbox (the relay refuses them): the clocks move
    along, to run from now at the earliest; nothing is sent, nothing is forfeited."""
    game_id = desk.new_game()
    settings = desk.ctx.settings.model_copy(update={"timeout_action": "forfeit"})
    at = NOW + timedelta(days=8)
    later = replace(desk.ctx, settings=settings, clock=lambda: at)
    assert timers.run_timers(later) == 1
    with Session(desk.ctx.db) as session:
        game_row = session.get(m.Game, game_id)
        assert game_row is not None and game_row.status == "active"
        assert game_row.reminders_sent == 0 and game_row.clock_from == at
        assert game_row.next_reminder_at == at + timedelta(hours=24)
        assert game_row.deadline_at == at + timedelta(days=7)
        assert [r.kind for r in desk.outbox(session)] == ["turn", "turn"]
