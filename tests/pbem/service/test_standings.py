"""Names shown to strangers — the standings, the site's archives, observers' mails — are
chosen names or "Player N", never a part of a player's address."""

from __future__ import annotations

import json

from sqlmodel import Session

from pbem.render.site import public_archive, site_game
from pbem.render.standings import render_standings, standings_data
from pbem.service import admin
from pbem.service.context import load_game, seats_of
from pbem.service.flow import handle
from pbem.service.game.standings import current_standings, finished_records
from pbem.service.send.archive import game_archive
from pbem.service.send.watchers import observer_context
from pbem.store import models as m
from tests.pbem.service.desk import Desk

ANN = "ann@play.example"
SECRET = "zed.secret"
ZED = f"{SECRET}@play.example"


def finished_game(desk: Desk) -> int:
    """A game between Ann (named) and Zed (no name chosen), which Ann resigned."""
    game_id = admin.new_game(desk.ctx, [(ANN, "Ann"), (ZED, None)], seed="names-shown")
    inbound_id = desk.store(ANN, "resign confirm", desk.token(game_id, 0))
    with Session(desk.ctx.db) as session:
        row = session.get(m.Inbound, inbound_id)
        assert row is not None
        outcome = handle(desk.ctx, session, row)
        session.commit()
    assert outcome.status == "applied", outcome.reason
    return game_id


def test_standings_the_site_and_observers_show_no_part_of_an_address(desk: Desk) -> None:
    game_id = finished_game(desk)
    with Session(desk.ctx.db) as session:
        zed = seats_of(session, game_id)[1].player
        neutral = f"Player {zed.id}"
        records = finished_records(desk.ctx, session)
        assert [p.name for p in records[0].places] == ["Ann", neutral]
        mail = render_standings(current_standings(desk.ctx, session), ANN)
        game_row = session.get(m.Game, game_id)
        assert game_row is not None
        seats = seats_of(session, game_id)
        watched = observer_context(game_row, seats)
        archive = game_archive(game_row, load_game(desk.ctx, session, game_row), seats)
    assert watched.names == ("Ann", neutral)
    published = public_archive(archive)
    page = standings_data(records).html
    line = site_game(published, f"games/{game_id}.html")
    for shown in (mail.text, mail.html, page, json.dumps(published), repr(line)):
        assert SECRET not in shown.lower() and "zed" not in shown.lower()
        assert neutral in shown
