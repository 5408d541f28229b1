"""A fair game's cut clocks and the delivery of its cut requests, each rule alone: which
cut requests start the clocks, what a delivery moves, what the timers wait for, and whom
they tell when a cut request failed for good."""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import Session, col, select

from pbem.service import admin, timers
from pbem.store import models as m
from pbem.store.db import session_scope
from pbem.store.delivery import clear_failed, hold_for_mail, start_clock, waiting_mail
from tests.pbem.service.desk import NOW, PLAYERS, Desk

HOUR = timedelta(hours=1)
ANN, BOB, CY = (address for address, _ in PLAYERS)


def fair_game(desk: Desk, players: int = 2) -> int:
    desk.ctx.settings.fair_deals = True
    desk.ctx.settings.reminder_hours = 1
    desk.ctx.settings.timeout_days = 1
    return admin.new_game(desk.ctx, PLAYERS[:players])


def mail(session: Session, game_id: int) -> list[m.Outbox]:
    return list(
        session.exec(select(m.Outbox).where(m.Outbox.game_id == game_id).order_by(col(m.Outbox.id)))
    )


def game(session: Session, game_id: int) -> m.Game:
    row = session.get(m.Game, game_id)
    assert row is not None
    return row


def test_the_cut_requests_start_the_cut_clocks_when_delivered(desk: Desk) -> None:
    game_id = fair_game(desk)
    with Session(desk.ctx.db) as session:
        row = game(session, game_id)
        assert row.status == "cutting"
        asked = mail(session, game_id)
        assert [(r.kind, r.starts_clock) for r in asked] == [("cut", True)] * 2
        reminder, deadline = row.next_reminder_at, row.deadline_at
        assert reminder == NOW + HOUR and deadline == NOW + timedelta(days=1)
    with desk.ctx.db.begin() as connection:
        assert start_clock(connection, game_id, NOW, NOW + 3 * HOUR)
    with Session(desk.ctx.db) as session:
        row = game(session, game_id)
        assert row.clock_from == NOW + 3 * HOUR
        assert row.next_reminder_at == reminder + 3 * HOUR
        assert row.deadline_at == deadline + 3 * HOUR


def test_the_timers_wait_for_an_undelivered_cut_request(desk: Desk) -> None:
    game_id = fair_game(desk)
    later = NOW + 2 * timedelta(days=1)
    # Past the deadline, the cut requests never left: the clocks move along.
    desk.ctx.clock = lambda: later
    assert timers.run_timers(desk.ctx) == 1
    with Session(desk.ctx.db) as session:
        row = game(session, game_id)
        assert (row.status, row.reminders_sent) == ("cutting", 0)
        assert row.clock_from == later and row.deadline_at == later + timedelta(days=1)
        assert [r.kind for r in mail(session, game_id)] == ["cut", "cut"]
    desk.delivered()
    desk.ctx.clock = lambda: later + 2 * HOUR
    assert timers.run_timers(desk.ctx) == 1  # delivered: the reminder falls due
    with Session(desk.ctx.db) as session:
        assert game(session, game_id).reminders_sent == 1
        assert sorted(r.kind for r in mail(session, game_id)) == ["cut"] * 2 + ["reminder"] * 2


def test_only_a_cut_request_to_a_player_who_has_not_cut_holds_the_clocks(desk: Desk) -> None:
    game_id = fair_game(desk)
    with session_scope(desk.ctx.db) as session:
        row = game(session, game_id)
        seats = session.exec(select(m.Seat).where(m.Seat.game_id == game_id)).all()
        assert waiting_mail(session, row, seats, {ANN, BOB})
        assert waiting_mail(session, row, seats, {BOB})
        assert not waiting_mail(session, row, [], set())  # everyone has cut
        assert not waiting_mail(session, row, [], {CY})  # no cut request to Cy
        row.entropy = [{"seat": 0, "text": "ann's cut"}]  # Ann cut, her request unsent
        session.add(row)
    desk.delivered()
    with session_scope(desk.ctx.db) as session:
        ann = next(r for r in mail(session, game_id) if r.recipient == ANN)
        ann.status = m.OutboxStatus.PENDING.value
        session.add(ann)
    with session_scope(desk.ctx.db) as session:
        assert not timers.waiting_for_cut_requests(session, game(session, game_id))


def test_a_failed_cut_request_holds_the_game_and_the_others_are_told(desk: Desk) -> None:
    """Bob's cut request failed for good: the game waits (no reminder, no abort), Ann is
    told once in a cut mail (the game has no deal to show), Cy (who said "stop") and Bob
    are not; once Bob's mail gets through, Ann is told the game goes on."""
    game_id = fair_game(desk, players=3)
    desk.delivered()
    with session_scope(desk.ctx.db) as session:
        bob = next(r for r in mail(session, game_id) if r.recipient == BOB)
        assert hold_for_mail(session, bob, NOW)
        cy = session.exec(select(m.Player).where(m.Player.email == CY)).one()
        cy.stopped = True
        session.add(cy)
    with session_scope(desk.ctx.db) as session:
        assert timers.tell_waiting(desk.ctx, session, NOW) == 1
        [told] = [r for r in mail(session, game_id) if r.kind == "status"]
        assert told.recipient == ANN
        text = told.raw.decode(errors="replace").replace("=\n", "").replace("\n", " ")
        assert "asking Bob to cut for the deal could not be delivered" in " ".join(text.split())
        assert timers.tell_waiting(desk.ctx, session, NOW) == 0  # once
    desk.ctx.clock = lambda: NOW + timedelta(days=3)
    timers.run_timers(desk.ctx)
    with session_scope(desk.ctx.db) as session:
        row = game(session, game_id)
        assert (row.status, row.reminders_sent) == ("cutting", 0)
        clear_failed(session.connection(), game_id, BOB)
    with session_scope(desk.ctx.db) as session:
        assert timers.tell_waiting(desk.ctx, session, NOW) == 1
        told_again = [r for r in mail(session, game_id) if r.kind == "status"]
        assert [r.recipient for r in told_again] == [ANN, ANN]
        assert b"gets through again" in told_again[-1].raw
