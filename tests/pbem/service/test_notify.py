"""notify alone: a played mail → its mails in the outbox (or held back in a batch)."""

from __future__ import annotations

from sqlmodel import Session

from pbem.service.ops import play
from pbem.service.send import answers
from pbem.store import models as m
from tests.pbem.service.desk import NOW, Desk

ANN = "ann@play.example"


def test_a_refused_move_is_answered_with_one_error_mail_in_the_thread(desk: Desk) -> None:
    game_id = desk.new_game()
    with Session(desk.ctx.db) as session:
        before = desk.outbox(session)
        last = before[0].message_id  # Ann's first mail
        move = play.play(desk.ctx, session, desk.known(session, game_id, 0, "play 5h"))
        answers.answer_move(desk.ctx, session, move, 7, NOW)
        [mail] = desk.outbox(session)[len(before) :]
        assert (mail.recipient, mail.kind, mail.game_id) == (ANN, "error", game_id)
        assert f"In-Reply-To: {last}".encode() in mail.raw
        assert b"could not be applied" in mail.raw


def test_questions_get_where_the_game_stands_history_and_help(desk: Desk) -> None:
    game_id = desk.new_game()
    with Session(desk.ctx.db) as session:
        before = len(desk.outbox(session))
        move = play.play(desk.ctx, session, desk.known(session, game_id, 0, "hand\nhistory\nhelp"))
        answers.answer_move(desk.ctx, session, move, 8, NOW)
        kinds = [row.kind for row in desk.outbox(session)[before:]]
        assert kinds == ["status", "history", "help"]


def test_in_a_batch_the_mail_is_held_back_until_the_commit(desk: Desk) -> None:
    game_id = desk.new_game()
    desk.ctx.deferred = []
    with Session(desk.ctx.db) as session:
        before = len(desk.outbox(session))
        move = play.play(desk.ctx, session, desk.known(session, game_id, 0, "hand"))
        answers.answer_move(desk.ctx, session, move, 9, NOW)
        assert len(desk.outbox(session)) == before
        [held] = desk.ctx.deferred
        assert held["recipient"] == ANN and held["kind"] == "status"
        assert isinstance(held["raw"], bytes) and held["raw"]
        seat = session.get(m.Seat, move.known.seats[0].seat.id)
        assert seat is not None and seat.last_mail_id == held["message_id"].strip("<>")
