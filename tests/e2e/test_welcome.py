"""An open lobby answers a stranger who writes without a command of it ("help", "how do
I play?") once, with how to start — within the policy's consent limits: one unasked mail
per quiet period to a mailbox that never confirmed. Elsewhere strangers get nothing."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from pbem.demo.bots import text_of
from tests.e2e.helpers import SERVICE_ADDRESS, STRANGER, Harness, about, plain_mail, reply


@pytest.fixture
def open_lobby(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(tmp_path, db_url, db_engine, lobby="open")
    yield harness
    harness.close()


def test_a_stranger_is_welcomed_once_and_can_start(open_lobby: Harness) -> None:
    h = open_lobby
    h.deliver(plain_mail(STRANGER, SERVICE_ADDRESS, "Hello! How do I play?"))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    (welcome,) = h.received(STRANGER)
    assert "Welcome" in about(welcome)
    text = " ".join(text_of(welcome).split())
    assert '"play computer"' in text and '"challenge friend@example.com"' in text
    # Again, and with "help", under another +tag: nothing more in the quiet period.
    for body, sender in (("help", STRANGER), ("help", STRANGER.replace("@", "+x@"))):
        h.deliver(plain_mail(sender, SERVICE_ADDRESS, body))
        assert "no welcome" in (h.last_inbound().reason or "")
    assert h.count(STRANGER) == 1
    # What the welcome says works: a game against the computer.
    h.deliver(reply(welcome, STRANGER, "Mallory", "play computer to 61"))
    assert h.last_inbound().game_id is not None, h.last_inbound().reason
    # A month on, a new question is welcomed again (that mailbox never confirmed).
    h.clock.advance(timedelta(days=h.settings.invitation_quiet_days + 1))
    h.deliver(plain_mail("newcomer@example.net", SERVICE_ADDRESS, "help"))
    assert h.count("newcomer@example.net") == 1


def test_other_lobbies_do_not_answer_strangers(harness: Harness) -> None:
    h = harness
    h.deliver(plain_mail(STRANGER, SERVICE_ADDRESS, "help"))
    assert h.last_inbound().status == "ignored" and h.count(STRANGER) == 0
