"""A fair game's cut clocks run from the delivery of its cut requests, as a turn's do.

On the test clock, on both databases: a game made while the relay is down (nothing
listens on its port) goes through a whole cut deadline and more with no reminder and no
abort; once a real SMTP server (aiosmtpd) listens there again the cut requests go, and
the reminder and the abort fall due counted from that delivery. A cut request that fails
for good (``outbox_max_age``) makes the game wait, and ``pbem status`` says so, until
``pbem outbox retry`` gets it through.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from pbem.store import models as m
from tests.e2e.helpers import ALICE, BOB, Harness, cli_env, run_cli

HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)
# The cut clocks: a reminder after an hour, the abort after a day.
CLOCKS = {"reminder_hours": 1, "timeout_days": 1, "timeout_action": "forfeit"}
# Past the longest backoff (4000 s, with up to a quarter more of jitter).
LONGEST_WAIT = timedelta(seconds=5001)


class Relay:
    """The relay: down (nothing listens on ``port``) until `up`, then a real SMTP server
    that takes every message."""

    def __init__(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        self.url = f"smtp://127.0.0.1:{self.port}?tls=none&timeout=10"
        self.taken: list[tuple[list[str], bytes]] = []
        self._controller: Controller | None = None

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        self.taken.append((list(envelope.rcpt_tos), envelope.original_content or b""))
        return "250 OK"

    def up(self) -> None:
        self._controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self._controller.start()

    def down(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def to(self, address: str) -> list[bytes]:
        return [raw for rcpts, raw in self.taken if address in rcpts]


@pytest.fixture
def relay() -> Iterator[Relay]:
    relay = Relay()
    try:
        yield relay
    finally:
        relay.down()


def game_mail(h: Harness, game_id: int) -> list[m.Outbox]:
    return [r for r in h.outbox() if r.game_id == game_id]


def seats(h: Harness, game_id: int) -> list[m.Seat]:
    with Session(h.db) as session:
        return list(
            session.exec(select(m.Seat).where(m.Seat.game_id == game_id).order_by(col(m.Seat.seat)))
        )


def test_a_relay_down_through_the_cut_deadline_aborts_nobody(
    tmp_path: Path, db_url: str, db_engine: Engine, relay: Relay
) -> None:
    h = Harness.build(
        tmp_path, db_url, db_engine, outbound_url=relay.url, fair_deals=True, **CLOCKS
    )
    try:
        game_id = h.service.new_game([ALICE, BOB], target=61)
        h.step()
        asked = game_mail(h, game_id)
        assert [(r.kind, r.status) for r in asked] == [("cut", "pending")] * 2
        assert all(r.starts_clock for r in asked)  # their delivery starts the cut clocks

        for _ in range(30):  # thirty hours of outage: past the reminder and the deadline
            h.clock.advance(HOUR)
            h.step()
        row = h.game_row(game_id)
        assert row.status == "cutting" and row.reminders_sent == 0
        assert row.deadline_at is not None and row.deadline_at > h.clock.now
        assert [(r.kind, r.status) for r in game_mail(h, game_id)] == [("cut", "pending")] * 2
        assert min(r.attempts for r in game_mail(h, game_id)) >= 15  # tried all along
        assert relay.taken == []

        relay.up()
        h.clock.advance(LONGEST_WAIT)
        h.step()
        sent = game_mail(h, game_id)
        assert [(r.kind, r.status) for r in sent] == [("cut", "sent")] * 2
        assert len(relay.to(ALICE[0])) == len(relay.to(BOB[0])) == 1
        started = max(r.sent_at for r in sent if r.sent_at is not None)
        row = h.game_row(game_id)
        assert row.clock_from == started  # the cut clocks run from the delivery
        assert row.next_reminder_at == started + HOUR
        assert row.deadline_at == started + timedelta(days=1)

        h.clock.now = started + HOUR - MINUTE
        h.step()
        assert h.game_row(game_id).reminders_sent == 0
        h.clock.now = started + HOUR + MINUTE
        h.step()  # an hour after the delivery, not after the game was made
        assert h.game_row(game_id).reminders_sent == 1
        assert len(relay.to(ALICE[0])) == len(relay.to(BOB[0])) == 2

        h.clock.now = started + timedelta(days=1) - MINUTE
        h.step()
        assert h.game_row(game_id).status == "cutting"
        h.clock.now = started + timedelta(days=1) + MINUTE
        h.step()  # a day after the delivery: the players were asked, and did not cut
        row = h.game_row(game_id)
        assert row.status == "aborted" and "not everyone cut" in (row.status_reason or "")
        told = relay.to(ALICE[0])[-1]
        assert b"aborted" in told
    finally:
        h.close()


def test_a_cut_request_that_fails_for_good_makes_the_game_wait(
    tmp_path: Path, db_url: str, db_engine: Engine, relay: Relay
) -> None:
    """Down past ``outbox_max_age`` (a quarter day): the cut requests fail, the game
    waits (no reminder, no abort, for days) and ``pbem status`` names it; ``pbem outbox
    retry`` with the relay back delivers them and the clocks run from then."""
    h = Harness.build(
        tmp_path,
        db_url,
        db_engine,
        outbound_url=relay.url,
        fair_deals=True,
        outbox_max_age=0.25,
        **CLOCKS,
    )
    try:
        game_id = h.service.new_game([ALICE, BOB], target=61)
        h.step()
        for _ in range(8):
            h.clock.advance(HOUR)
            h.step()
        assert {r.status for r in game_mail(h, game_id)} == {"failed"}
        assert all(s.mail_failed_at is not None for s in seats(h, game_id))

        for _ in range(3):  # three days: past every clock of the game
            h.clock.advance(timedelta(days=1))
            h.step()
        row = h.game_row(game_id)
        assert (row.status, row.reminders_sent) == ("cutting", 0)
        assert [r.kind for r in game_mail(h, game_id)] == ["cut", "cut"]  # nobody else told

        env = cli_env(h.tmp_path, db_url)
        status = run_cli(env, "status")
        assert status.exit_code == 1
        for address in (ALICE[0], BOB[0]):
            assert f"game {game_id} waits: the cut request to {address} failed for good" in (
                status.stdout
            )
        assert "games waiting for mail: 2" in status.stdout

        relay.up()
        retried = run_cli(env, "outbox", "retry")
        assert retried.exit_code == 0 and "2 messages queued again" in retried.stdout
        h.clock.catch_up()
        h.step()
        sent = game_mail(h, game_id)
        assert {r.status for r in sent} == {"sent"}
        assert all(s.mail_failed_at is None for s in seats(h, game_id))
        started = max(r.sent_at for r in sent if r.sent_at is not None)
        row = h.game_row(game_id)
        assert row.status == "cutting" and row.clock_from == started
        assert row.deadline_at == started + timedelta(days=1)
        status = run_cli(env, "status")
        assert "games waiting for mail: 0" in status.stdout and "waits:" not in status.stdout
    finally:
        h.close()
