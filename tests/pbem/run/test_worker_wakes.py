"""PostgreSQL workers wake only for work they can take (real PostgreSQL, two workers
with their LMTP listeners on one port, as ``pbem serve`` runs them): the moves are
applied and answered with no step that found nothing — the notification of a worker's
own mail lets the other worker sleep, and a listener whose loop waits wakes no one
else — while a poke of the command line, or mail it queues, still wakes them."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from pbem.listen.lmtp import LmtpListener, start_listener
from pbem.run.wakeup import SERVE_NAME, Wakeup, inbound_poke, poke
from pbem.service import utcnow
from pbem.store import models as m
from pbem.store.db import make_engine, session_scope
from pbem.store.outbox import enqueue_outbox
from pbem.transport.woken import LmtpInbound
from tests.e2e.helpers import ALICE, Harness
from tests.fixtures.realmail import POSTGRES_ONLY
from tests.pbem.listen.test_lmtp import first_move, free_port, inbound_rows, lmtp


def until(condition: Callable[[], bool], seconds: float = 20) -> None:
    """Wait for ``condition`` (met by the workers' threads), at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the workers did not get there"
        time.sleep(0.01)


def outbox_left(db: Engine) -> int:
    with Session(db) as session:
        rows = session.exec(select(m.Outbox.status)).all()
    return sum(1 for status in rows if status != m.OutboxStatus.SENT.value)


@pytest.fixture
def workers(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[list[Harness]]:
    """Two workers on one LMTP port, their connections named as ``pbem serve`` names
    them, their loops running; games made before the loops start."""
    served = make_engine(db_url, application_name=SERVE_NAME)
    url = f"lmtp://127.0.0.1:{free_port()}"
    pair = [Harness.build(tmp_path, db_url, served, inbound_url=url) for _ in range(2)]
    listeners: list[LmtpListener] = []
    threads: list[threading.Thread] = []
    try:
        for h in pair:
            assert isinstance(h.daemon.inbox, LmtpInbound)
            listeners.append(start_listener(h.service, h.daemon.inbox))
        yield pair
    finally:
        for h in pair:
            h.daemon.stop()
        for thread in threads:
            thread.join(30)
        for listener in listeners:
            listener.stop()
        for h in pair:
            h.close()
        served.dispose()


def run(pair: list[Harness]) -> list[threading.Thread]:
    threads = [threading.Thread(target=h.daemon.run, daemon=True) for h in pair]
    for thread in threads:
        thread.start()
    until(lambda: all(h.daemon.inbox.waiting for h in pair))  # type: ignore[attr-defined]
    return threads


def idle(pair: list[Harness], db: Engine) -> bool:
    """Both loops wait, and every mail is sent."""
    return all(h.daemon.inbox.waiting for h in pair) and outbox_left(db) == 0  # type: ignore[attr-defined]


@POSTGRES_ONLY
def test_workers_wake_only_for_work_they_can_take(
    workers: list[Harness], db_engine: Engine
) -> None:
    pair = workers
    games = [pair[0].new_game(seed=f"wake-{n}") for n in range(6)]
    pair[0].step()  # the games' first mails
    threads = run(pair)
    try:
        # One move at a time, each over a connection of its own: both discards of each
        # game (the second one's mail goes to both players).
        for game_id in [g for g in games for _ in range(2)]:
            recipient, raw = first_move(pair[0], game_id)
            with lmtp(int(pair[0].settings.inbound.rsplit(":", 1)[1])) as client:
                client.mail(ALICE[0])
                client.rcpt(recipient)
                assert client.data(raw)[0] == 250
            until(lambda: inbound_rows(db_engine)[-1].status != "pending")
            until(lambda: idle(pair, db_engine))
        assert [row.status for row in inbound_rows(db_engine)] == ["applied"] * 2 * len(games)
        # Each move woke the worker whose listener took it, and no one else: no step
        # found nothing, though the other worker was notified of each move's mail.
        assert sum(h.daemon.wakes for h in pair) == 2 * len(games)
        assert [h.daemon.empty_wakes for h in pair] == [0, 0]
        assert sum(h.daemon.wakeup.passed for h in pair) >= len(games)

        # The command line's poke wakes both; mail it queues is sent by one of them.
        wakes = [h.daemon.wakes for h in pair]
        assert poke(db_engine)
        until(lambda: all(h.daemon.wakes > w for h, w in zip(pair, wakes, strict=True)))
        with session_scope(db_engine) as session:
            raw = b"From: cribbage@pbem.test\r\nTo: x@example.org\r\nSubject: q\r\n\r\nq\r\n"
            enqueue_outbox(
                session,
                "<cli@pbem.test>",
                "x@example.org",
                "cribbage@pbem.test",
                "note",
                raw,
                None,
                now=pair[0].clock(),
            )
        until(lambda: idle(pair, db_engine))
    finally:
        for h in pair:
            h.daemon.stop()
        for thread in threads:
            thread.join(30)


@POSTGRES_ONLY
def test_a_listeners_notification_wakes_the_other_workers_only(db_engine: Engine) -> None:
    """The listener of a busy loop notifies the others; its own loop lets it pass (its
    listener woke it already); a worker's own mail wakes no worker, another's does."""
    served = make_engine(str(db_engine.url), application_name=SERVE_NAME)
    mine, other = Wakeup(db_engine, worker="w1"), Wakeup(db_engine, worker="w2")
    try:
        mine.open()
        other.open()
        assert poke(db_engine, inbound_poke("w1"))
        assert other.wait(5) and other.check()
        assert mine.wait(5) and not mine.check() and mine.passed == 1
        assert poke(served)  # a plain poke wakes everyone, whoever sends it
        assert mine.wait(5) and mine.check() and other.wait(5) and other.check()
        with session_scope(served) as session:  # a serve worker's own mail
            enqueue_outbox(
                session,
                "<own@pbem.test>",
                "x@example.org",
                "c@pbem.test",
                "note",
                b"Subject: own\r\n\r\nown\r\n",
                None,
                now=utcnow(),
            )
        assert mine.wait(5) and not mine.check() and other.wait(5) and not other.check()
        with session_scope(db_engine) as session:  # mail the command line queued
            enqueue_outbox(
                session,
                "<cli@pbem.test>",
                "x@example.org",
                "c@pbem.test",
                "note",
                b"Subject: cli\r\n\r\ncli\r\n",
                None,
                now=utcnow(),
            )
        assert mine.wait(5) and mine.check() and other.wait(5) and other.check()
    finally:
        mine.close()
        other.close()
        served.dispose()
