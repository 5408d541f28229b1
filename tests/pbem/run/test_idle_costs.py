"""What a step of the loop asks the database, counted statement by statement (both
databases, fed over LMTP as ``pbem serve`` is): a step with nothing stored and nothing
due asks nothing; a step with a move asks nothing to find it (the listener hands its id
over) nor to log it (the outcome says who sent it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event

from pbem.listen.lmtp import start_listener
from pbem.run import daemon as daemon_module
from pbem.transport.woken import LmtpInbound
from tests.e2e.helpers import ALICE, Harness
from tests.pbem.listen.test_lmtp import first_move, free_port, lmtp


@pytest.fixture
def statements(db_engine: Engine) -> Iterator[list[str]]:
    """Every statement sent to the database while the list is being watched."""
    sent: list[str] = []

    def note(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        sent.append(" ".join(statement.split()))

    event.listen(db_engine, "before_cursor_execute", note)
    yield sent
    event.remove(db_engine, "before_cursor_execute", note)


def test_an_idle_step_asks_nothing_and_a_move_is_neither_looked_for_nor_asked_after(
    tmp_path: Path,
    db_url: str,
    db_engine: Engine,
    statements: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # (On PostgreSQL the dues known are asked again after a while: other workers change
    # them. Not within this test.)
    monkeypatch.setattr(daemon_module, "RECOVER_SECONDS", 3600.0)
    port = free_port()
    h = Harness.build(tmp_path, db_url, db_engine, inbound_url=f"lmtp://127.0.0.1:{port}")
    assert isinstance(h.daemon.inbox, LmtpInbound)
    listener = start_listener(h.service, h.daemon.inbox)
    try:
        game_id = h.new_game(seed="idle-costs")
        h.step()  # the first mails; a step asks everything afresh
        statements.clear()
        for _ in range(3):
            assert not h.daemon._step(True).busy  # as the loop steps, nothing stored
        assert statements == []

        recipient, raw = first_move(h, game_id)
        with lmtp(port) as client:
            client.mail(ALICE[0])
            client.rcpt(recipient)
            assert client.data(raw)[0] == 250
        assert h.daemon.inbox.wait(10)
        statements.clear()
        stats = h.daemon._step(True)
        sent = list(statements)
        assert stats.processed == 1 and h.last_inbound().status == "applied"
        assert sent  # the move itself
        asked_pending = [s for s in sent if s.startswith("SELECT inbound.id FROM inbound")]
        asked_after = [s for s in sent if "inbound.received_at, inbound.processed_at" in s]
        assert asked_pending == [] and asked_after == []

        statements.clear()
        assert not h.daemon._step(True).busy  # and idle again: nothing asked
        assert statements == []
    finally:
        listener.stop()
        h.close()
