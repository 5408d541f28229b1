"""Waking a daemon: a poke reaches a listening daemon (SQLite FIFO, PostgreSQL NOTIFY), is
harmless when no daemon listens, and a stop ends a wait at once."""

from __future__ import annotations

import time
from pathlib import Path

from sqlalchemy import Engine

from pbem.run.wakeup import Wakeup, fifo_path, poke
from pbem.store.db import make_engine


def test_a_poke_wakes_a_listener_once(db_engine: Engine) -> None:
    wakeup = Wakeup(db_engine)
    try:
        wakeup.open()
        assert not wakeup.wait(0.2) and not wakeup.check()  # nothing yet
        assert poke(db_engine)
        assert wakeup.wait(5)
        assert wakeup.check()
        assert not wakeup.check()  # consumed
        poke(db_engine)
        poke(db_engine)  # two pokes before a look are one wake-up
        assert wakeup.wait(5) and wakeup.check() and not wakeup.check()
    finally:
        wakeup.close()


def test_stop_ends_a_wait_at_once(db_engine: Engine) -> None:
    wakeup = Wakeup(db_engine)
    try:
        wakeup.stop()
        started = time.monotonic()
        assert wakeup.wait(30)
        assert time.monotonic() - started < 1
        wakeup.check()
        assert not wakeup.wait(0.1)  # the stop was consumed by the look
    finally:
        wakeup.close()
    wakeup.open()  # usable again after close (a daemon run twice)
    try:
        assert not wakeup.wait(0.1)
    finally:
        wakeup.close()


def test_a_poke_with_no_daemon_is_harmless(db_engine: Engine) -> None:
    path = fifo_path(str(db_engine.url))
    if path is None:  # PostgreSQL: a NOTIFY nobody hears
        assert poke(db_engine)
        return
    assert not path.exists()
    assert not poke(db_engine)  # no FIFO
    wakeup = Wakeup(db_engine)
    wakeup.open()
    wakeup.close()
    assert path.exists()
    assert not poke(db_engine)  # a FIFO nobody has open


def test_a_stray_file_where_the_fifo_goes_is_replaced(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'pbem.sqlite'}")  # a FIFO is SQLite's
    try:
        path = fifo_path(str(engine.url))
        assert path == tmp_path / "pbem.sqlite.wake"
        path.write_text("not a fifo")
        assert not poke(engine)  # a regular file is not written to
        assert path.read_text() == "not a fifo"
        wakeup = Wakeup(engine)
        try:
            wakeup.open()
            assert poke(engine) and wakeup.wait(5) and wakeup.check()
        finally:
            wakeup.close()
    finally:
        engine.dispose()
