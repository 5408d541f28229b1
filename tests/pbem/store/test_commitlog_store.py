"""The commitment log's appends (`pbem.store.commitlog`): chained from the stored head,
one at a time when two workers append at once (the head row is locked), on both
databases."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from sqlalchemy import Engine
from sqlmodel import Session

from engine.commitlog import GENESIS, check_log
from pbem.store.commitlog import append, entries, head_of

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def test_appends_chain_from_the_head(db_engine: Engine) -> None:
    with Session(db_engine) as session:
        assert head_of(session) == (0, GENESIS)
        first = append(session, 7, "commit", "a" * 64, NOW)
        second = append(session, 7, "end", "a" * 64, NOW, fate="played", server_seed="s")
        session.commit()
        assert second["prev"] == first["hash"] and head_of(session) == (2, second["hash"])
        rows = entries(session)
    assert rows == [first, second]
    assert check_log(rows).entries == 2


def test_two_workers_append_one_after_the_other(db_engine: Engine) -> None:
    """Worker A appends and holds its transaction open; worker B appends meanwhile, in
    another connection: B waits for A's commit (the head row's lock), then chains after
    A's entry. Both orders of arrival give the same chain."""
    for round_no in range(2):
        a = Session(db_engine)
        append(a, 10 * round_no + 1, "commit", "a" * 64, NOW)
        failures: list[BaseException] = []

        def worker_b(
            game: int = 10 * round_no + 2, failures: list[BaseException] = failures
        ) -> None:
            try:
                with Session(db_engine) as b:
                    append(b, game, "commit", "b" * 64, NOW)
                    b.commit()
            except BaseException as exc:  # reported below, in the test's thread
                failures.append(exc)

        other = threading.Thread(target=worker_b)
        other.start()
        a.commit()
        a.close()
        other.join(timeout=60)
        assert not other.is_alive() and not failures, failures
    with Session(db_engine) as session:
        rows = entries(session)
        head = head_of(session)
    found = check_log(rows)
    assert found.ok, found.problems
    assert [row["game"] for row in rows] == [1, 2, 11, 12]
    assert head == (4, found.head)


def test_an_offer_before_its_game_is_a_known_event(db_engine: Engine) -> None:
    """An ``offer`` (a commitment shown before its game exists, game 0) chains like any
    entry and needs no end; an event the log does not know is still a problem."""
    from engine.commitlog import NO_GAME, make_entry

    when = datetime(2026, 11, 29, tzinfo=UTC)
    with Session(db_engine) as session:
        append(session, NO_GAME, "offer", "c" * 64, when)
        append(session, 7, "commit", "c" * 64, when)
        session.commit()
        rows = entries(session)
    found = check_log(rows)
    assert found.ok and found.games == 1 and found.entries == 2
    odd = make_entry(3, rows[-1]["hash"], 7, "promise", "c" * 64, when.isoformat())
    assert check_log([*rows, odd]).problems == ["entry 3: unknown event 'promise'"]
