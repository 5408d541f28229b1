"""Every query that a mail or a timer makes the service run is served by an index: the
statements of a real run (a game played by mail, a ``standings`` mail in the game and one
to the plain address, a resignation, a reminder and a timeout, the outbox drained) are
captured as the database receives them, then explained on the same database once it
holds a long history (many finished games with their seats and moves, players, ratings,
old mail; PostgreSQL analysed), and no plan may read a whole big table."""

from __future__ import annotations

import json
import os
import random
import sys
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, text

from pbem.mail.tokens import reply_address
from tests.e2e.helpers import ALICE, BOB, CAROL, Harness
from tests.pbem.store.bulk import Sizes, fill

BIG = {"game", "seat", "action_log", "inbound", "outbox", "player", "rating", "rated_game"}
"""The tables that grow with the history."""

HISTORY = Sizes(games=10_000, players=5_000, actions_per_game=5, mails=10_000)


@pytest.fixture
def h(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(
        tmp_path / "h",
        db_url,
        db_engine,
        timeout_action="forfeit",
        timeout_days=7,
        reminder_hours=24,
    )
    yield harness
    harness.close()


def plain_mail(h: Harness, sender: str, body: str, to: str | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to or h.settings.address
    msg["Subject"] = body
    msg["Date"] = format_datetime(h.clock())
    msg["Message-ID"] = f"<{random.getrandbits(64):x}@example.com>"
    msg.set_content(body + "\n")
    return msg.as_bytes()


def a_real_run(h: Harness) -> None:
    """A game by mail to its end, both ways of asking for the standings, the timers."""
    game_id = h.new_game([ALICE, BOB], seed="plans")
    h.play_until(game_id, lambda game: len(game.actions) >= 14)
    h.answer(ALICE[0], "standings")
    h.deliver(plain_mail(h, BOB[0], "standings"))
    token = reply_address(h.settings.local_part, h.token(game_id, 1), h.settings.domain)
    h.deliver(plain_mail(h, BOB[0], "resign confirm", to=token))
    assert h.game_row(game_id).status == "finished"
    slow = h.new_game([CAROL, BOB], seed="slow")
    h.clock.advance(timedelta(hours=25))
    h.step()  # a reminder
    h.clock.advance(timedelta(days=7))
    h.step()  # the timeout: Carol forfeits
    assert h.game_row(slow).status == "finished"


def captured(engine: Engine, run: Any, *, every: bool = False) -> list[tuple[str, Any]]:
    """The distinct statements (with their first parameters) the run sent: those of the
    daemon's steps, or ``every`` one."""
    seen: dict[str, Any] = {}

    def listen(
        conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool
    ) -> None:
        if not every and not from_the_service():
            return
        if many and params:
            params = params[0]
        seen.setdefault(statement, params)

    event.listen(engine, "before_cursor_execute", listen)
    try:
        run()
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    return list(seen.items())


def from_the_service() -> bool:
    """Whether the statement being sent comes from the daemon's step (a mail or a timer),
    not from the test's own look at the database: the nearest test frame is a step."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if f"{os.sep}tests{os.sep}" in name:
            return frame.f_code.co_name in ("step", "deliver")
        frame = frame.f_back  # type: ignore[assignment]
    return False


def planned(statement: str) -> bool:
    """Whether a statement reads rows a plan could scan (not BEGIN, a PRAGMA, a plain
    INSERT … VALUES)."""
    head = statement.lstrip().split(None, 1)[0].upper()
    if head in ("SELECT", "UPDATE", "DELETE", "WITH"):
        return True
    return head == "INSERT" and " SELECT " in statement.upper()


def analyse(engine: Engine) -> None:
    """Statistics on the history, as the planners weigh them: PostgreSQL's autovacuum
    gathers them by itself; on SQLite an operator's ``ANALYZE`` (or ``PRAGMA optimize``)
    does, and they say a state column (``status``, ``digest``) has few values: a plan
    that leans on its index unless it must would then read every row."""
    with engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            driver = connection.connection.driver_connection
            assert driver is not None
            driver.execute("ANALYZE")
            return
        connection.exec_driver_sql("ANALYZE")
        connection.commit()


def full_scans_sqlite(
    engine: Engine, statement: str, params: Any, big: frozenset[str] | set[str] = BIG
) -> list[str]:
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", params).all()
    limited = " LIMIT " in statement.upper()
    bad = []
    for row in rows:
        detail = str(row[-1])
        words = detail.split()
        if len(words) >= 2 and words[0] == "SEARCH" and words[1] in big and "(" not in detail:
            # An index read from its start with nothing to seek (a min() walking it).
            bad.append(detail)
            continue
        if len(words) >= 2 and words[0] == "SCAN" and words[1] in big:
            if limited and ("USING INDEX" in detail or f"ORDER BY {words[1]}.id" in statement):
                continue  # read in the index's (or the row id's) order, up to the limit
            bad.append(detail)
    return bad


def full_scans_postgresql(
    engine: Engine, statement: str, params: Any, big: frozenset[str] | set[str] = BIG
) -> list[str]:
    with engine.connect() as connection:
        plan = connection.exec_driver_sql(f"EXPLAIN (FORMAT JSON) {statement}", params).scalar()
    if isinstance(plan, str):
        plan = json.loads(plan)
    assert isinstance(plan, list)
    bad: list[str] = []

    def walk(node: dict[str, Any], limited: bool) -> None:
        relation = node.get("Relation Name")
        kind = node.get("Node Type", "")
        if relation in big:
            if kind == "Seq Scan":
                bad.append(f"Seq Scan on {relation}")
            elif (
                kind in ("Index Scan", "Index Only Scan")
                and "Index Cond" not in node
                and not limited  # read in the index's order, up to the limit
            ):
                bad.append(f"{kind} of all {relation} ({node.get('Index Name')})")
        for child in node.get("Plans", ()):
            walk(child, limited or kind == "Limit")

    walk(plan[0]["Plan"], False)
    return bad


def test_every_query_of_the_mail_path_and_the_timers_uses_an_index(
    h: Harness, db_engine: Engine
) -> None:
    statements = captured(db_engine, lambda: a_real_run(h))
    dialect = db_engine.dialect.name
    with db_engine.begin() as connection:
        fill(connection, HISTORY)
    analyse(db_engine)
    explain = full_scans_postgresql if dialect == "postgresql" else full_scans_sqlite
    checked = 0
    failures = []
    for statement, params in statements:
        if not planned(statement):
            continue
        checked += 1
        bad = explain(db_engine, statement, params)
        if bad:
            failures.append(f"{'; '.join(bad)}\n    {' '.join(statement.split())}")
    assert checked >= 20, checked  # the run made the service read and write a lot
    assert failures == [], "\n".join(failures)


FORGET_BIG = (BIG - {"player"}) | {"mail_name", "inbound_raw", "outbox_raw"}
"""Forgetting reads the stored mail's tables and its index too: none may be read whole.
The one table it reads whole is ``player``, for the players a ``+tag`` of the mailbox
reaches (a pattern on the address, ``…@domain``, that no index of the address serves on
both databases): one line per player, 20,000 at the scale benchmark's size, never the
history of games or mail."""


def test_every_query_of_forgetting_a_player_uses_an_index(h: Harness, db_engine: Engine) -> None:
    """``pbem player forget`` reads the player's rows alone: its time follows the
    player, not the history (`pbem.service.forget`)."""
    game_id = h.new_game([ALICE, BOB], seed="forget")
    h.play_until(game_id, lambda game: len(game.actions) >= 14)
    h.answer(ALICE[0], "say good luck")
    h.deliver(plain_mail(h, ALICE[0], "standings"))
    statements = captured(
        db_engine, lambda: h.service.forget(ALICE[0], abort_games=True), every=True
    )
    with db_engine.begin() as connection:
        fill(connection, HISTORY)
        # The history's mail named in the index, as the service indexes what it stores,
        # and its raw bytes kept (as in the retention period).
        for table in ("inbound", "outbox"):
            connection.execute(
                text(
                    f"INSERT INTO mail_name (mailbox, {table}_id) "
                    f"SELECT 'bulk' || (id % 1000) || '@bulk.example', id FROM {table} "
                    f"WHERE id > 1000000"
                )
            )
            connection.execute(
                text(
                    f"INSERT INTO {table}_raw ({table}_id, raw) "
                    f"SELECT id, :raw FROM {table} WHERE id > 1000000"
                ),
                {"raw": b"Subject: old\r\n\r\n" + b"x" * 2000},
            )
    analyse(db_engine)
    explain = full_scans_postgresql if db_engine.dialect.name == "postgresql" else full_scans_sqlite
    checked = 0
    failures = []
    for statement, params in statements:
        if not planned(statement):
            continue
        checked += 1
        bad = explain(db_engine, statement, params, FORGET_BIG)
        if bad:
            failures.append(f"{'; '.join(bad)}\n    {' '.join(statement.split())}")
    assert checked >= 10, checked
    assert failures == [], "\n".join(failures)


def test_the_harness_reads_the_newest_rows_alone(h: Harness, db_engine: Engine) -> None:
    """The test harness, which the benchmarks drive the service with, reads what a move
    needs by index too: a game played against a long history is not slowed by the
    harness (it once read every stored mail at each move: a forgetting benchmark with
    10,000 games of history moved a few mails a minute)."""
    game_id = h.new_game([ALICE, BOB], seed="harness")
    h.play_until(game_id, lambda game: len(game.actions) >= 6)
    statements = captured(
        db_engine,
        lambda: (h.last_inbound(), h.received(ALICE[0]), h.latest(BOB[0])),
        every=True,
    )
    with db_engine.begin() as connection:
        fill(connection, HISTORY)
    analyse(db_engine)
    explain = full_scans_postgresql if db_engine.dialect.name == "postgresql" else full_scans_sqlite
    failures = [
        f"{'; '.join(bad)}\n    {' '.join(statement.split())}"
        for statement, params in statements
        if planned(statement) and (bad := explain(db_engine, statement, params))
    ]
    assert len(statements) >= 2  # the newest mail in; the mails out, by Message-ID
    assert failures == [], "\n".join(failures)
