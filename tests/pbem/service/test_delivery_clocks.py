"""The clocks and the delivery of a turn mail (`pbem.store.delivery`), each rule alone:
what moves the clocks, what does not, and which failed mail makes a game wait."""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import Session, select

from pbem.service import timers
from pbem.store import models as m
from pbem.store.db import session_scope
from pbem.store.delivery import (
    clear_failed,
    fail_bounced,
    failed_seats,
    hold_for_mail,
    start_clock,
    waiting_mail,
)
from pbem.store.outbox import mark_sent
from tests.pbem.service.desk import NOW, Desk

HOUR = timedelta(hours=1)
ANN, BOB = "ann@play.example", "bob@play.example"


def turn_rows(session: Session, game_id: int) -> dict[str, m.Outbox]:
    rows = session.exec(select(m.Outbox).where(m.Outbox.game_id == game_id)).all()
    return {r.recipient: r for r in rows if r.kind == "turn"}


def game(session: Session, game_id: int) -> m.Game:
    row = session.get(m.Game, game_id)
    assert row is not None
    return row


def test_a_late_delivery_moves_the_clocks_by_its_delay(desk: Desk) -> None:
    game_id = desk.new_game()
    with session_scope(desk.ctx.db) as session:
        before = game(session, game_id)
        reminder, deadline = before.next_reminder_at, before.deadline_at
        assert reminder is not None and deadline is not None
        assert all(r.starts_clock for r in turn_rows(session, game_id).values())
    with desk.ctx.db.begin() as connection:
        assert start_clock(connection, game_id, NOW, NOW + 2 * HOUR)
        # the second player's mail, an hour later still: from then
        assert start_clock(connection, game_id, NOW, NOW + 3 * HOUR)
        assert not start_clock(connection, game_id, NOW, NOW + 3 * HOUR)  # already from then
    with Session(desk.ctx.db) as session:
        after = game(session, game_id)
        assert after.clock_from == NOW + 3 * HOUR
        assert after.next_reminder_at == reminder + 3 * HOUR
        assert after.deadline_at == deadline + 3 * HOUR


def test_an_older_moves_mail_or_a_game_not_active_leaves_the_clocks(desk: Desk) -> None:
    game_id = desk.new_game()
    with desk.ctx.db.begin() as connection:
        # queued before the move the clocks are for
        assert not start_clock(connection, game_id, NOW - HOUR, NOW + HOUR)
        assert not start_clock(connection, 999_999, NOW, NOW + HOUR)  # no such game
    with session_scope(desk.ctx.db) as session:
        row = game(session, game_id)
        row.status = m.GameStatus.PAUSED.value
        session.add(row)
    with desk.ctx.db.begin() as connection:
        assert not start_clock(connection, game_id, NOW, NOW + HOUR)
    with session_scope(desk.ctx.db) as session:
        row = game(session, game_id)
        row.status = m.GameStatus.ACTIVE.value
        row.clock_from = NOW + 5 * HOUR  # the player to move is away until then
        session.add(row)
    with desk.ctx.db.begin() as connection:
        assert not start_clock(connection, game_id, NOW, NOW + HOUR)
    with Session(desk.ctx.db) as session:
        assert game(session, game_id).clock_from == NOW + 5 * HOUR


def test_only_a_failed_turn_mail_to_a_player_to_move_holds_the_game(desk: Desk) -> None:
    game_id = desk.new_game()
    with session_scope(desk.ctx.db) as session:
        seats = session.exec(select(m.Seat).where(m.Seat.game_id == game_id)).all()
        row = game(session, game_id)
        assert waiting_mail(session, row, seats)  # the turn mails are not delivered yet
    desk.delivered()
    with session_scope(desk.ctx.db) as session:
        seats = session.exec(select(m.Seat).where(m.Seat.game_id == game_id)).all()
        assert not waiting_mail(session, game(session, game_id), seats)
        ann = turn_rows(session, game_id)[ANN]
        ann.starts_clock = False  # as a mail to a player not to move
        assert not hold_for_mail(session, ann, NOW)
        ann.starts_clock, ann.created_at = True, NOW - HOUR  # as an older move's mail
        assert not hold_for_mail(session, ann, NOW)
        bob = turn_rows(session, game_id)[BOB]
        assert hold_for_mail(session, bob, NOW)
        assert not hold_for_mail(session, bob, NOW + HOUR)  # held already: since NOW
        assert failed_seats(session.connection(), [game_id]) == {(game_id, BOB)}
        assert failed_seats(session.connection(), []) == set()
        session.expire_all()  # (the seat was written by a plain UPDATE)
        seats = session.exec(select(m.Seat).where(m.Seat.game_id == game_id)).all()
        assert waiting_mail(session, game(session, game_id), seats)
        clear_failed(session.connection(), game_id, BOB.upper())
        assert failed_seats(session.connection(), [game_id]) == set()


def test_a_bounce_fails_only_a_delivered_turn_mail_to_that_address(desk: Desk) -> None:
    game_id = desk.new_game()
    with session_scope(desk.ctx.db) as session:
        rows = turn_rows(session, game_id)
        ann, bob = rows[ANN].message_id, rows[BOB].message_id
        # not delivered yet: a bounce cannot answer it
        assert fail_bounced(session, [bob], BOB, "550 5.1.1", NOW) == 0
    desk.delivered()
    with session_scope(desk.ctx.db) as session:
        assert fail_bounced(session, [], BOB, "550 5.1.1", NOW) == 0
        assert fail_bounced(session, [ann], BOB, "550 5.1.1", NOW) == 0  # another's mail
        assert fail_bounced(session, ["<forged@x>"], BOB, "550 5.1.1", NOW) == 0
        assert fail_bounced(session, [bob.strip("<>")], BOB, "550 5.1.1", NOW) == 1
        failed = turn_rows(session, game_id)[BOB]
        assert failed.status == "failed" and failed.last_error == "bounced: 550 5.1.1"
        assert failed_seats(session.connection(), [game_id]) == {(game_id, BOB)}
        mark_sent(session, failed, now=NOW)


def status_mails(session: Session, game_id: int) -> list[str]:
    rows = session.exec(select(m.Outbox).where(m.Outbox.game_id == game_id)).all()
    return sorted(r.recipient for r in rows if r.kind == "status")


def test_the_others_are_told_once_through_the_policy(desk: Desk) -> None:
    """Bob's turn mail failed for good: Cy (who said "stop") is not told, Ann is, once;
    Bob is not mailed about his own mail. Once Bob's mail gets through, Ann is told the
    game goes on, once."""
    game_id = desk.new_game(players=3)
    desk.delivered()
    with session_scope(desk.ctx.db) as session:
        assert hold_for_mail(session, turn_rows(session, game_id)[BOB], NOW)
        cy = session.exec(select(m.Player).where(m.Player.email == "cy@play.example")).one()
        cy.stopped = True
        session.add(cy)
    with session_scope(desk.ctx.db) as session:
        assert timers.tell_waiting(desk.ctx, session, NOW) == 1
        assert status_mails(session, game_id) == [ANN]
    with session_scope(desk.ctx.db) as session:
        assert timers.tell_waiting(desk.ctx, session, NOW) == 0  # told already
        clear_failed(session.connection(), game_id, BOB)
    with session_scope(desk.ctx.db) as session:
        assert timers.tell_waiting(desk.ctx, session, NOW) == 1
        assert status_mails(session, game_id) == [ANN, ANN]
        [resumed] = [
            r
            for r in session.exec(select(m.Outbox).where(m.Outbox.game_id == game_id)).all()
            if r.kind == "status" and b"goes on" in r.raw
        ]
        assert resumed.recipient == ANN
        assert timers.tell_waiting(desk.ctx, session, NOW) == 0


def test_nobody_told_when_every_other_player_cannot_be_mailed(desk: Desk) -> None:
    """Both turn mails failed for good: neither player is told of the other's (their own
    mail does not get through), nor, once they get through, that the game goes on."""
    game_id = desk.new_game()
    desk.delivered()
    with session_scope(desk.ctx.db) as session:
        rows = turn_rows(session, game_id)
        assert hold_for_mail(session, rows[ANN], NOW) and hold_for_mail(session, rows[BOB], NOW)
    with session_scope(desk.ctx.db) as session:
        assert timers.tell_waiting(desk.ctx, session, NOW) == 2
        assert status_mails(session, game_id) == []
        told = {s.mail_failed_told for s in session.exec(select(m.Seat)).all()}
        assert told == {False}  # nobody could be told
        clear_failed(session.connection(), game_id, ANN)
        clear_failed(session.connection(), game_id, BOB)
    with session_scope(desk.ctx.db) as session:
        assert timers.tell_waiting(desk.ctx, session, NOW) == 0
        assert status_mails(session, game_id) == []
