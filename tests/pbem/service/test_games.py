"""games alone: the admin's operations, each a transaction of its own."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from pbem.service import admin
from pbem.service.context import ServiceError
from pbem.store import models as m
from tests.pbem.service.desk import Desk


def test_a_new_game_mails_every_player_but_the_computer(desk: Desk) -> None:
    game_id = desk.new_game(3, computer=[2])
    with Session(desk.ctx.db) as session:
        rows = desk.outbox(session)
        assert [(r.recipient, r.kind, r.game_id) for r in rows] == [
            ("ann@play.example", "turn", game_id),
            ("bob@play.example", "turn", game_id),
        ]


def test_a_player_cannot_sit_twice_and_nothing_is_stored(desk: Desk) -> None:
    with pytest.raises(ServiceError, match="cannot sit twice"):
        admin.new_game(desk.ctx, [("ann@play.example", None), ("Ann@play.example", None)])
    with Session(desk.ctx.db) as session:
        assert session.get(m.Game, 1) is None and desk.outbox(session) == []


def test_pause_resume_and_abort_tell_the_players(desk: Desk) -> None:
    game_id = desk.new_game()
    admin.set_status(desk.ctx, game_id, "paused")
    admin.set_status(desk.ctx, game_id, "active", "back")
    row = admin.set_status(desk.ctx, game_id, "aborted", "  a  tie\n")
    assert (row.status, row.status_reason, row.deadline_at) == ("aborted", "a tie", None)
    with Session(desk.ctx.db) as session:
        kinds = [r.kind for r in desk.outbox(session)]
        assert kinds == ["turn", "turn", *["paused"] * 2, *["resumed"] * 2, *["aborted"] * 2]
    with pytest.raises(ServiceError, match="is aborted; cannot make it paused"):
        admin.set_status(desk.ctx, game_id, "paused")


def test_unknown_and_unfinished_games_are_refused(desk: Desk) -> None:
    game_id = desk.new_game()
    with pytest.raises(ServiceError, match="no game 99"):
        admin.resend(desk.ctx, 99)
    with pytest.raises(ServiceError, match=f"game {game_id} is not over yet"):
        admin.rematch(desk.ctx, game_id)


def test_an_export_imports_again_as_a_new_game(desk: Desk) -> None:
    game_id = desk.new_game()
    data = admin.export(desk.ctx, game_id)
    copy = admin.import_archive(desk.ctx, data)
    assert copy != game_id
    assert admin.export(desk.ctx, copy)["actions"] == data["actions"]
