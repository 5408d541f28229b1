"""play alone: a known player's commands → engine actions, logged by `record`."""

from __future__ import annotations

from sqlmodel import Session, select

from pbem.service import admin
from pbem.service.ops import play
from pbem.store import models as m
from tests.pbem.service.desk import NOW, Desk


def logged(session: Session, game_id: int) -> list[m.ActionLog]:
    return list(session.exec(select(m.ActionLog).where(m.ActionLog.game_id == game_id)))


def test_a_legal_move_is_applied_then_logged_by_record(desk: Desk) -> None:
    game_id = desk.new_game()
    with Session(desk.ctx.db) as session:
        command = desk.discard(session, game_id, 0)
        move = play.play(desk.ctx, session, desk.known(session, game_id, 0, command))
        assert [seat for seat, _, auto in move.actions] == [0]
        assert [n.status for n in move.notices] == ["applied"]
        assert logged(session, game_id) == []  # nothing written before `record`
        play.record(desk.ctx, session, move, None, NOW)  # no stored message
        assert len(logged(session, game_id)) == 1
        assert game_id in desk.ctx.staged
        done = command.lower()  # as the parser writes the command back
        assert play.verdict(move) == ("applied", f"applied: {done}", (done,))


def test_an_illegal_card_is_refused_with_what_may_be_done(desk: Desk) -> None:
    game_id = desk.new_game()
    with Session(desk.ctx.db) as session:
        move = play.play(desk.ctx, session, desk.known(session, game_id, 0, "play 5h"))
        assert move.actions == []
        [notice] = move.notices
        assert notice.status == "refused" and (notice.legal or "").startswith("discard 2 of")
        status, reason, applied = play.verdict(move)
        assert (status, applied) == ("rejected", ())
        assert reason.startswith("play 5h:")


def test_resign_without_a_token_is_refused(desk: Desk) -> None:
    game_id = desk.new_game()
    with Session(desk.ctx.db) as session:
        known = desk.known(session, game_id, 0, "resign", tokenless=True)
        move = play.play(desk.ctx, session, known)
        assert move.actions == []
        assert "To resign, reply to your latest game email" in move.notices[0].message


def test_a_paused_game_takes_no_move_but_answers_questions(desk: Desk) -> None:
    game_id = desk.new_game()
    admin.set_status(desk.ctx, game_id, "paused", "a holiday")
    with Session(desk.ctx.db) as session:
        command = desk.discard(session, game_id, 0)
        move = play.play(desk.ctx, session, desk.known(session, game_id, 0, command))
        assert play.verdict(move) == ("rejected", "game is paused", ())
        assert "paused by the admin (a holiday)" in move.notices[0].message
        move = play.play(desk.ctx, session, desk.known(session, game_id, 0, "hand"))
        assert move.refusal is None and move.wants == ["hand"]
        assert play.verdict(move) == ("applied", "sent: hand", ())
