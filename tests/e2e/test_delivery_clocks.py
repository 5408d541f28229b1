"""Mail is not given up lightly, and a player's clock runs from their turn mail's delivery.

On the test clock: a real relay that refuses (451) for a simulated day, then hands the
mail on to the real Postfix — no reminder or forfeit meanwhile, and the clocks start
from the delivery; the real Postfix refusing an address for good (550) and for now
(450) past ``outbox_max_age`` — the game waits, the other player is told, ``pbem
status`` tells the admin, and ``pbem outbox retry`` after the address is fixed resumes
it; a bounce of a turn mail the relay took ends the same way, and the player writing
in resumes the game.
"""

from __future__ import annotations

import asyncio
import secrets
import smtplib
import socket
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession
from sqlalchemy import Engine
from sqlmodel import Session, select

from engine import computer
from pbem.store import models as m
from tests.e2e.helpers import ALICE, BOB, Harness, bounce, cli_env, run_cli
from tests.fixtures.mailstack import MailStack, _run_script, send_raw, wait_for_messages

HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)
# The test games' clocks: a reminder after 12 hours, the forfeit after a day.
CLOCKS: dict[str, Any] = {"reminder_hours": 12, "timeout_days": 1, "timeout_action": "forfeit"}
# Past the longest backoff (4000 s, with up to a quarter more of jitter).
LONGEST_WAIT = timedelta(seconds=5001)

# One real-server run per behaviour: the rules themselves run on both databases
# (tests/pbem/service/test_delivery_clocks.py, and the bounce below).
SQLITE_ONLY = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


class Gate:
    """A real SMTP relay (aiosmtpd) in front of the stack's Postfix: while ``refusing``
    it answers 451 to every recipient; then it hands each message to Postfix and
    answers as Postfix did."""

    def __init__(self, stack: MailStack) -> None:
        self.stack = stack
        self.refusing = True
        self.refused = 0

    async def handle_RCPT(
        self,
        server: SMTP,
        session: SMTPSession,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        if self.refusing:
            self.refused += 1
            return "451 4.3.0 the relay is refusing mail for now"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        try:
            await asyncio.to_thread(
                send_raw, self.stack, str(envelope.mail_from), list(envelope.rcpt_tos), raw
            )
        except smtplib.SMTPResponseException as exc:
            error = exc.smtp_error
            text = error.decode(errors="replace") if isinstance(error, bytes) else error
            return f"{exc.smtp_code} {text}"
        return "250 OK"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def gate(mailstack: MailStack) -> Iterator[tuple[Gate, str]]:
    """The refusing relay, running, and the ``smtp://`` URL the service sends to."""
    handler = Gate(mailstack)
    port = _free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield handler, f"smtp://127.0.0.1:{port}?tls=none&timeout=10"
    finally:
        controller.stop()


def rows(h: Harness, game_id: int) -> list[m.Outbox]:
    return [r for r in h.outbox() if r.game_id == game_id]


def seat_row(h: Harness, game_id: int, seat: int) -> m.Seat:
    with Session(h.db) as session:
        return session.exec(
            select(m.Seat).where(m.Seat.game_id == game_id, m.Seat.seat == seat)
        ).one()


@SQLITE_ONLY
def test_a_relay_refusing_for_a_day_delays_the_clock_not_the_player(
    tmp_path: Path, db_url: str, db_engine: Engine, mailstack: MailStack, gate: tuple[Gate, str]
) -> None:
    relay, url = gate
    alice, alice_pw = mailstack.new_user("alice-day")
    bob, bob_pw = mailstack.new_user("bob-day")
    h = Harness.build(tmp_path, db_url, db_engine, outbound_url=url, **CLOCKS)
    try:
        game_id = h.new_game([(alice, "Alice"), (bob, "Bob")], seed="relay-day")
        turn = rows(h, game_id)
        assert {r.status for r in turn} == {"pending"} and all(r.starts_clock for r in turn)
        assert "451" in (turn[0].last_error or "")

        for _ in range(30):  # a day and six hours of refusals, past every clock of the game
            h.clock.advance(HOUR)
            h.step()
        game = h.game_row(game_id)
        assert game.status == "active" and game.action_count == 0  # no forfeit
        assert game.reminders_sent == 0
        assert [r.kind for r in rows(h, game_id)] == ["turn", "turn"]  # no reminder queued
        assert {r.status for r in rows(h, game_id)} == {"pending"}  # not given up
        assert relay.refused >= 25  # tried about once an hour all along
        assert game.deadline_at is not None and game.deadline_at > h.clock.now

        relay.refusing = False
        h.clock.advance(LONGEST_WAIT)
        h.step()
        delivered = rows(h, game_id)
        assert {r.status for r in delivered} == {"sent"}
        wait_for_messages(mailstack, alice, alice_pw, 1)
        wait_for_messages(mailstack, bob, bob_pw, 1)
        started = max(r.sent_at for r in delivered if r.sent_at is not None)
        game = h.game_row(game_id)
        assert game.clock_from == started  # the clocks run from the delivery
        assert game.next_reminder_at == started + timedelta(hours=12)
        assert game.deadline_at == started + timedelta(days=1)

        h.clock.now = started + timedelta(hours=12) - MINUTE
        h.step()
        assert [r.kind for r in rows(h, game_id)] == ["turn", "turn"]
        h.clock.advance(2 * MINUTE)
        h.step()  # twelve hours after the delivery, not after the move
        assert sorted(r.kind for r in rows(h, game_id)) == ["reminder"] * 2 + ["turn"] * 2
        assert len(wait_for_messages(mailstack, alice, alice_pw, 2)) == 2
    finally:
        h.close()


def status_lines(h: Harness, db_url: str) -> tuple[int, str]:
    result = run_cli(cli_env(h.tmp_path, db_url), "status")
    return result.exit_code, result.stdout


@SQLITE_ONLY
def test_a_refused_address_makes_the_game_wait_until_its_mail_is_delivered(
    tmp_path: Path, db_url: str, db_engine: Engine, mailstack: MailStack
) -> None:
    """550 from the real Postfix: failed at once, the game waits (no reminder, no
    forfeit), Alice and the admin are told, the player with the bad address is not
    mailed about it; once the mailbox exists, ``pbem outbox retry`` delivers the turn
    mail and the clocks run from that delivery."""
    alice, alice_pw = mailstack.new_user("alice-wait")
    local = f"carol-wait-{secrets.token_hex(4)}"
    carol = f"{local}@{mailstack.domain}"  # no such mailbox yet
    h = Harness.build(tmp_path, db_url, db_engine, outbound_url=mailstack.smtp_url(), **CLOCKS)
    try:
        game_id = h.new_game([(alice, "Alice"), (carol, "Carol")], seed="refused")
        to_carol = [r for r in rows(h, game_id) if r.recipient == carol]
        assert [(r.status, r.attempts) for r in to_carol] == [("failed", 1)]
        assert "550" in (to_carol[0].last_error or "")
        assert seat_row(h, game_id, 1).mail_failed_at is not None

        h.step()  # the timers tell Alice, once
        told = wait_for_messages(mailstack, alice, alice_pw, 2)
        assert any(b"could not be delivered" in raw for raw in told)
        assert seat_row(h, game_id, 1).mail_failed_told
        code, text = status_lines(h, db_url)
        assert code == 1
        assert f"game {game_id} waits: the turn mail to {carol} failed for good" in text
        assert f"games waiting for mail: 1: {game_id} ({carol})" in text

        for _ in range(3):  # three days: past the reminder and the forfeit
            h.clock.advance(timedelta(days=1))
            h.step()
        game = h.game_row(game_id)
        assert (game.status, game.action_count, game.reminders_sent) == ("active", 0, 0)
        assert [r.kind for r in rows(h, game_id) if r.recipient == carol] == ["turn"]
        assert len(wait_for_messages(mailstack, alice, alice_pw, 2)) == 2  # told once

        password = secrets.token_urlsafe(12)
        assert _run_script("adduser", local, password).strip() == carol  # the address fixed
        retried = run_cli(cli_env(h.tmp_path, db_url), "outbox", "retry")
        assert retried.exit_code == 0 and "1 messages queued again" in retried.stdout
        h.clock.catch_up()
        h.step()
        [again] = [r for r in rows(h, game_id) if r.recipient == carol]
        assert again.status == "sent" and again.sent_at is not None
        wait_for_messages(mailstack, carol, password, 1)
        assert seat_row(h, game_id, 1).mail_failed_at is None
        resumed = wait_for_messages(mailstack, alice, alice_pw, 3)  # Alice told, once
        assert sum(b"gets through again" in raw for raw in resumed) == 1
        assert not seat_row(h, game_id, 1).mail_failed_told
        game = h.game_row(game_id)
        assert game.clock_from == again.sent_at
        assert game.deadline_at == again.sent_at + timedelta(days=1)
        code, text = status_lines(h, db_url)
        assert "games waiting for mail: 0" in text and "waits:" not in text
    finally:
        h.close()


@SQLITE_ONLY
def test_a_temporary_refusal_fails_only_after_outbox_max_age(
    tmp_path: Path, db_url: str, db_engine: Engine, mailstack: MailStack
) -> None:
    """450 from the real Postfix, every try, for ``outbox_max_age`` (a quarter day here):
    pending all along, then failed, and the game waits."""
    alice, alice_pw = mailstack.new_user("alice-age")
    deferred = f"tempfail@{mailstack.domain}"  # Postfix answers 450 for it, always
    h = Harness.build(
        tmp_path,
        db_url,
        db_engine,
        outbound_url=mailstack.smtp_url(),
        outbox_max_age=0.25,
        **CLOCKS,
    )
    try:
        game_id = h.new_game([(alice, "Alice"), (deferred, "Dee")], seed="max-age")
        queued = h.clock.now
        while h.clock.now < queued + timedelta(hours=6) - 30 * MINUTE:
            h.clock.advance(30 * MINUTE)
            h.step()
            [row] = [r for r in rows(h, game_id) if r.recipient == deferred]
            assert row.status == "pending" and "450" in (row.last_error or "")
        assert row.attempts >= 6
        h.clock.advance(HOUR)
        h.step()
        [row] = [r for r in rows(h, game_id) if r.recipient == deferred]
        assert row.status == "failed"
        assert seat_row(h, game_id, 1).mail_failed_at is not None
        h.step()
        assert any(
            b"could not be delivered" in raw
            for raw in wait_for_messages(mailstack, alice, alice_pw, 2)
        )
    finally:
        h.close()


def test_a_bounced_turn_mail_makes_the_game_wait_until_the_player_writes(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    """A bounce of a turn mail the relay had taken: failed, the game waits and Alice is
    told; Bob's own move (his mailbox works after all) is answered, and once that answer
    is delivered the game goes on, and Alice is told so."""
    h = Harness.build(tmp_path, db_url, db_engine, **CLOCKS)
    try:
        game_id = h.new_game(seed="bounced")
        b = BOB[0]
        [turn] = [r for r in rows(h, game_id) if r.recipient == b]
        assert turn.status == "sent" and turn.starts_clock
        h.deliver(bounce(h.mail_files(b)[-1][1], b))
        assert "failed: its game waits" in (h.last_inbound().reason or "")
        [turn] = [r for r in rows(h, game_id) if r.recipient == b]
        assert turn.status == "failed" and (turn.last_error or "").startswith("bounced")
        assert seat_row(h, game_id, 1).mail_failed_told  # told in the same step
        note = h.latest(ALICE[0])
        assert "could not be delivered" in str(note.get_body(("plain",)).get_content())  # type: ignore[union-attr]
        assert h.count(b) == 1  # Bob is not mailed about his own mail

        h.clock.advance(timedelta(days=2))
        h.step()
        assert h.game_row(game_id).status == "active"  # no forfeit while it waits

        before = h.count(b)
        for seat in (1, 0):  # Bob discards (his mailbox works after all), then Alice
            h.move(game_id, computer.choose_action(h.game(game_id), seat, level="random"))
            assert h.last_inbound().status == "applied", h.last_inbound().reason
        assert h.count(b) == before + 1  # the news of the hand reached him
        assert seat_row(h, game_id, 1).mail_failed_at is None
        told = [str(msg.get_body(("plain",)).get_content()) for msg in h.received(ALICE[0])]  # type: ignore[union-attr]
        assert sum("gets through again: the game goes on" in text for text in told) == 1
        game_row = h.game_row(game_id)
        assert game_row.deadline_at is not None and game_row.deadline_at > h.clock.now
        _, text = status_lines(h, db_url)
        assert "games waiting for mail: 0" in text
    finally:
        h.close()
