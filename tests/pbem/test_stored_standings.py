"""The stored standings: rated once, in the transaction that ends each game, by every way
a game ends — a resignation by mail (alone, and two in one batch sharing a player), a
timeout's forfeit, the computer playing a game out, an archive imported — never an
aborted game; always equal to a recomputation from every finished game; filled by the
migration; rebuilt and checked by the command line; the ``standings`` mail read from
it (the asker's rank counted on the index)."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import Engine, func
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from engine import Game, Settings
from engine.archive import to_archive
from pbem.mail.tokens import reply_address
from pbem.render.standings import render_standings
from pbem.service.context import load_game
from pbem.service.game.standings import (
    current_standings,
    differences,
    rate_finished,
    recompute,
    standings_for,
    store_record,
)
from pbem.store import models as m
from pbem.store.db import alembic_config, session_scope
from tests.e2e.helpers import CliResult, Harness, cli_env, run_cli
from tests.engine.helpers import play_out

POOL = [(f"p{n}@play.example", f"P{n}") for n in range(6)]
DAY = timedelta(days=1)


@pytest.fixture
def h(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(
        tmp_path / "h",
        db_url,
        db_engine,
        timeout_action="forfeit",
        timeout_days=7,
        reminder_hours=0,
    )
    yield harness
    harness.close()


def send(h: Harness, game_id: int, seat: int, body: str) -> None:
    """The player of ``seat`` mails ``body`` to their seat's reply address (not yet
    processed: the next step takes every mail sent in one batch)."""
    address = h.address_of(game_id, seat)
    msg = EmailMessage()
    msg["From"] = address
    msg["To"] = reply_address(h.settings.local_part, h.token(game_id, seat), h.settings.domain)
    msg["Subject"] = "Re: Cribbage"
    msg["Date"] = format_datetime(h.clock())
    msg["Message-ID"] = f"<{random.getrandbits(64):x}@play.example>"
    msg.set_content(body + "\n")
    h.send(msg.as_bytes())


def people(rng: random.Random, count: int) -> list[tuple[str, str]]:
    return rng.sample(POOL, count)


def imported(h: Harness, rng: random.Random, count: int) -> int:
    """A whole game played out by the engine, imported from its archive."""
    settings = Settings(
        players=count, target=61, muggins=rng.random() < 0.5, skunk=rng.choice(["skunk", "none"])
    )
    game = play_out(Game(settings, f"imp-{rng.random()}"), rng)
    archive = to_archive(game)
    archive["players"] = [{"email": e, "name": n} for e, n in people(rng, count)]
    return h.service.import_archive(archive)


def stored_and_recomputed(h: Harness) -> tuple[list[str], int, int]:
    """The differences, how many games are finished, and how many are logged as rated
    (each once: the log's key is the game)."""
    ctx = h.service._ctx()
    with Session(h.db) as session:
        found = differences(current_standings(ctx, session), recompute(ctx, session))
        finished = session.exec(
            select(func.count()).select_from(m.Game).where(m.Game.status == "finished")
        ).one()
        rated = session.exec(select(func.count()).select_from(m.RatedGame)).one()
    return found, int(finished), int(rated)


def test_every_way_a_game_ends_is_rated_once_and_equals_a_recomputation(h: Harness) -> None:
    rng = random.Random(24)
    for round_no in range(3):
        # Resignations by mail, two to four players, each game alone in its batch.
        for count in (2, 3, 4):
            game_id = h.new_game(people(rng, count), seed=f"r{round_no}-{count}")
            send(h, game_id, rng.randrange(count), "resign confirm")
            h.step()
            assert h.game_row(game_id).status == "finished"
        # Two games sharing a player, both resigned in one batch (held-back writes).
        shared = people(rng, 3)
        first = h.new_game(shared[:2], seed=f"b{round_no}a")
        second = h.new_game([shared[0], shared[2]], seed=f"b{round_no}b")
        send(h, first, 1, "resign confirm")
        send(h, second, 0, "resign confirm")
        h.step()
        assert {h.game_row(first).status, h.game_row(second).status} == {"finished"}
        # Whole games with every kind of points, imported.
        for count in (2, 3, 4):
            imported(h, rng, count)
        # A game against the computer: the player runs out of time and forfeits; an
        # aborted game counts for nobody.
        computer = h.service.new_game(
            [POOL[round_no], POOL[5]], target=61, computer=[1], seed=f"c{round_no}"
        )
        h.step()
        aborted = h.new_game(people(rng, 2), seed=f"x{round_no}")
        h.service.set_status(aborted, "aborted")
        h.clock.advance(8 * DAY)
        h.step()
        assert h.game_row(computer).status == "finished"
        assert h.game_row(aborted).status == "aborted"
        found, finished, rated = stored_and_recomputed(h)
        assert found == []
        assert finished == rated == 9 * (round_no + 1)
    ctx = h.service._ctx()
    with Session(h.db) as session:
        table = current_standings(ctx, session)
        assert table.games == 27
        assert "computer:medium" in {row.key for row in table.rows}
        assert [row.rank for row in table.rows] == list(range(1, len(table.rows) + 1))
        # Rating a game twice is refused by the log's key: its transaction fails whole.
        game_row = session.get(m.Game, first)
        assert game_row is not None
        game = load_game(ctx, session, game_row)
        with pytest.raises(IntegrityError):
            rate_finished(ctx, session, game_row, game)


def cli(h: Harness, *args: str) -> CliResult:
    return run_cli(cli_env(h.settings.data_dir, h.settings.db_url), *args)


def test_the_migration_fills_the_table_and_the_cli_rebuilds_and_checks_it(
    h: Harness, db_url: str
) -> None:
    rng = random.Random(12)
    for count in (2, 3, 4, 2, 4):
        imported(h, rng, count)
    game_id = h.new_game(people(rng, 2), seed="mig")
    send(h, game_id, 0, "resign confirm")
    h.step()
    ctx = h.service._ctx()
    with Session(h.db) as session:
        before = current_standings(ctx, session)
    assert before.games == 6
    # An installation of the revision before: its tables go, and come back filled.
    config = alembic_config(db_url)
    command.downgrade(config, "0010_next_seed")
    command.upgrade(config, "head")
    with Session(h.db) as session:
        after = current_standings(ctx, session)
    assert differences(after, before) == []
    assert cli(h, "standings", "--check").exit_code == 0
    # A table damaged by hand is found by --check and mended by --rebuild.
    with session_scope(h.db) as session:
        line = session.exec(select(m.Rating).order_by(m.Rating.id)).first()  # type: ignore[arg-type]
        assert line is not None
        line.wins += 1
        session.add(line)
    checked = cli(h, "standings", "--check")
    assert checked.exit_code == 1
    assert "wins: stored" in checked.output and "differ from a recomputation" in checked.output
    rebuilt = cli(h, "standings", "--rebuild")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert "rebuilt from 6 finished games" in rebuilt.output
    assert cli(h, "standings", "--check").exit_code == 0
    shown = cli(h, "standings", "--json", "--top", "2")
    assert shown.exit_code == 0 and '"games": 6' in shown.output


def test_the_mail_shows_the_top_and_the_askers_line_with_its_rank(
    h: Harness, db_engine: Engine
) -> None:
    with session_scope(db_engine) as session:
        player = m.Player(email="far@play.example", display_name="Far", created_at=h.clock())
        session.add(player)
        session.flush()
        lines: list[tuple[str, float, int, int | None]] = [
            (f"k{n:03}@play.example", 30.0 - n / 10, n % 3, None) for n in range(40)
        ]
        lines += [("tie@play.example", 26.0, 1, None), ("far@play.example", 26.0, 1, player.id)]
        for key, rating, games, owner in lines:
            session.add(
                m.Rating(
                    key=key,
                    player_id=owner,
                    name=key,
                    mu=rating + 3,
                    sigma=1.0,
                    rating=rating,
                    games=games,
                )
            )
    ctx = h.service._ctx()
    with Session(db_engine) as session:
        everyone = current_standings(ctx, session)
        table = standings_for(ctx, session, "far@play.example", top=10)
        nobody = standings_for(ctx, session, "new@play.example", top=10)
    assert [row.key for row in table.rows[:10]] == [row.key for row in everyone.rows[:10]]
    mine = table.rows[-1]
    assert mine.key == "far@play.example" and mine.name == "Far"
    assert mine.rank == 41  # after the 40 rated higher, before "tie" (same rating and games)
    assert mine.rank == next(r.rank for r in everyone.rows if r.key == mine.key)
    assert len(nobody.rows) == 10
    mail = render_standings(table, "far@play.example")
    assert "Far" in mail.text and "41" in mail.text


def test_games_that_end_at_once_are_rated_one_after_the_other(
    h: Harness, db_engine: Engine
) -> None:
    """Two transactions rate games sharing a player at the same time: the second waits
    for the first's commit at the count's row lock, then reads the lines it wrote."""
    from datetime import UTC, datetime

    from pbem.ratings import GameRecord, Place, compute_standings

    ann, bob, cy = (Place(f"{n}@play.example", n.title()) for n in ("ann", "bob", "cy"))
    ids = [h.new_game(people(random.Random(n), 2), seed=f"at-once-{n}") for n in range(2)]
    when = datetime(2026, 5, 1, tzinfo=UTC)

    def record(game_id: int, places: tuple[Place, Place]) -> GameRecord:
        return GameRecord(
            game_id=game_id,
            finished_at=when,
            places=places,
            sides=((0,), (1,)),
            scores=(61, 40),
            winner=0,
            values={1: 1},
            hands=5,
            points=({"pegging": 9, "hand": 30, "crib": 8}, {"pegging": 5, "hand": 25, "crib": 6}),
            cribs=(2, 3),
        )

    first, second = record(ids[0], (ann, bob)), record(ids[1], (bob, cy))
    owners: dict[str, int | None] = {}
    waiting = threading.Event()
    done = threading.Event()
    failed: list[BaseException] = []

    def rate_second() -> None:
        try:
            with session_scope(db_engine) as session:
                waiting.set()
                store_record(session, second, owners, when)
            done.set()
        except BaseException as exc:  # pragma: no cover - reported below
            failed.append(exc)

    with session_scope(db_engine) as session:
        store_record(session, first, owners, when)  # (SQLite: the one writer, until commit)
        thread = threading.Thread(target=rate_second)
        thread.start()
        assert waiting.wait(10)
        assert not done.wait(0.5)  # blocked behind the first until it commits
    thread.join(30)
    assert not failed and done.is_set()
    ctx = h.service._ctx()
    with Session(db_engine) as session:
        stored_table = current_standings(ctx, session)
        order = session.exec(select(m.RatedGame.game_id).order_by(col(m.RatedGame.seq))).all()
    assert list(order) == ids
    assert differences(stored_table, compute_standings([first, second], ordered=True)) == []
