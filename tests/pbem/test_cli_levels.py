"""``pbem game new … --computer --level LEVEL``: the computer's level, stored per seat and
shown on the board; an unknown level, or a level without a computer, is one clean line."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from pbem.commands import computer_levels
from pbem.demo.bots import text_of
from pbem.store import models as m
from tests.e2e.helpers import ALICE, BOB, Harness, cli_env, run_cli
from tests.pbem.test_cli import ok, one_line_error

A, B = ALICE[0], BOB[0]


@pytest.fixture
def env(harness: Harness, db_url: str) -> dict[str, str | None]:
    return cli_env(harness.tmp_path, db_url)


def games(harness: Harness) -> list[m.Game]:
    with Session(harness.db) as session:
        rows = list(session.exec(select(m.Game)).all())
        for row in rows:
            session.expunge(row)
        return rows


@pytest.mark.parametrize("level", ["easy", "medium", "hard", "HARD"])
def test_the_level_is_stored_and_shown(
    harness: Harness, env: dict[str, str | None], level: str
) -> None:
    ok(run_cli(env, "game", "new", A, "--computer", "--level", level, "--to", "61"))
    (game,) = games(harness)
    assert game.settings["computer"] == [1]
    assert game.settings["levels"] == {"1": level.lower()}
    assert game.hints  # one player against the computer
    harness.clock.catch_up()  # the command line queued the mail on the real clock
    harness.step()
    assert f"Computer ({level.lower()})" in " ".join(text_of(harness.latest(A)).split())


def test_no_level_is_medium_and_people_get_no_hints(
    harness: Harness, env: dict[str, str | None]
) -> None:
    ok(run_cli(env, "game", "new", A, "--computer"))
    ok(run_cli(env, "game", "new", A, B))
    robot, people = sorted(games(harness), key=lambda g: g.id or 0)
    assert robot.settings["levels"] == {"1": "medium"} and robot.hints
    assert "levels" not in people.settings and not people.hints


@pytest.mark.parametrize(
    ("args", "phrase"),
    [
        ((A, "--computer", "--level", "grandmaster"), "unknown level 'grandmaster'"),
        ((A, B, "--level", "hard"), "--level is the computer's level: add --computer"),
    ],
)
def test_a_bad_level_is_one_line(
    harness: Harness, env: dict[str, str | None], args: tuple[str, ...], phrase: str
) -> None:
    line = one_line_error(run_cli(env, "game", "new", *args), phrase)
    if "unknown" in phrase:
        assert ", ".join(computer_levels()) in line
    assert games(harness) == []
    assert harness.outbox() == []


def test_a_rematch_keeps_the_level(harness: Harness, env: dict[str, str | None]) -> None:
    ok(run_cli(env, "game", "new", A, "--computer", "--level", "easy", "--to", "61"))
    harness.clock.catch_up()
    harness.step()
    harness.answer(A, "resign confirm")
    assert harness.last_inbound().status == "applied", harness.last_inbound().reason
    (first,) = games(harness)
    ok(run_cli(env, "game", "rematch", str(first.id)))
    second = next(g for g in games(harness) if g.id != first.id)
    assert second.settings["levels"] == {"1": "easy"} and second.hints
