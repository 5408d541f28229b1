"""The daemon keeps its SMTP connection to the real Postfix open across outbox drains.

Each drain used to open a connection (and an event loop) of its own, which cost a move's
answer tens of milliseconds. The connections are counted twice: by the transport's own
counter and by Postfix's log, whose ``disconnect`` line lists the commands of one session
(``mail=2 ... quit=1``): one session carried both answers and ended with a clean QUIT.
"""

from __future__ import annotations

import re
import time
from datetime import timedelta
from pathlib import Path

from sqlalchemy import Engine

from pbem.store.db import session_scope
from pbem.store.outbox import enqueue_outbox
from pbem.transport.smtp import SmtpOutbound
from tests.e2e.helpers import Harness
from tests.fixtures.mailstack import MailStack, wait_for_messages
from tests.fixtures.realmail import SQLITE_ONLY

POSTFIX_LOG = Path("/var/lib/pbem-mailstack/log/postfix.log")


def postfix_sessions(offset: int, username: str, count: int = 0) -> list[str]:
    """The ``disconnect`` lines (commands per session) of the SMTP sessions that logged in
    as ``username``, from byte ``offset`` of Postfix's log on; waits up to 5 s for
    ``count`` of them (Postfix writes its log a moment after the fact)."""
    deadline = time.monotonic() + 5.0
    while True:
        sessions = _sessions(offset, username)
        if len(sessions) >= count or time.monotonic() > deadline:
            return sessions
        time.sleep(0.05)


def _sessions(offset: int, username: str) -> list[str]:
    with POSTFIX_LOG.open("rb") as log:
        log.seek(offset)
        lines = log.read().decode(errors="replace").splitlines()
    sessions: list[str] = []
    ours: set[str] = set()
    for line in lines:
        found = re.search(r"postfix/smtpd\[(\d+)\]: (.*)", line)
        if found is None:
            continue
        pid, text = found.groups()
        if f"sasl_username={username}" in text:
            ours.add(pid)
        elif text.startswith("disconnect from") and pid in ours:
            ours.discard(pid)
            sessions.append(text.split("]", 1)[1].strip())
    return sessions


def queue(h: Harness, number: int, sender: str, to: str) -> None:
    raw = (
        f"From: {sender}\r\nTo: {to}\r\nSubject: answer {number}\r\n"
        f"Message-ID: <kept-{number}@pbem.test>\r\n\r\nYour turn.\r\n"
    ).encode()
    with session_scope(h.db) as session:
        enqueue_outbox(
            session, f"<kept-{number}@pbem.test>", to, sender, "turn", raw, now=h.clock()
        )


@SQLITE_ONLY
def test_kept_connections_carry_every_drain_and_quit_when_the_daemon_stops(
    mailstack: MailStack, tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    """A move's two answers go out side by side over two connections, which the next
    drain uses again; both end with QUIT when the daemon stops."""
    service, service_pw = mailstack.new_user("kept-svc")
    alice, alice_pw = mailstack.new_user("kept-alice")
    bob, bob_pw = mailstack.new_user("kept-bob")
    h = Harness.build(
        tmp_path, db_url, db_engine, outbound_url=mailstack.smtp_url(service, service_pw)
    )
    sink = h.daemon.sender.sink
    assert isinstance(sink, SmtpOutbound) and sink.keep_open
    offset = POSTFIX_LOG.stat().st_size
    try:
        queue(h, 1, service, alice)
        queue(h, 2, service, bob)
        assert h.step().sent == 2
        assert (sink.opened, sink.idle_count()) == (2, 2)
        h.clock.advance(timedelta(seconds=10))
        queue(h, 3, service, alice)
        queue(h, 4, service, bob)
        assert h.step().sent == 2
        assert (sink.opened, sink.idle_count()) == (2, 2)
        # The daemon wakes in time to close the idle connections, not at its longest wait.
        idle = h.daemon.sender.seconds_until_idle_close()
        assert idle is not None and 0 < idle <= sink.idle_seconds
        assert h.daemon._wait_seconds(300.0) <= sink.idle_seconds
        wait_for_messages(mailstack, alice, alice_pw, 2)
        wait_for_messages(mailstack, bob, bob_pw, 2)
        assert postfix_sessions(offset, service) == []  # still open
    finally:
        h.daemon.close()
    assert sink.idle_count() == 0
    sessions = postfix_sessions(offset, service, 2)
    assert len(sessions) == 2, sessions
    for session in sessions:
        assert "mail=2" in session and "data=2" in session and "quit=1" in session, session


def test_an_idle_connection_is_closed_with_quit(mailstack: MailStack) -> None:
    import asyncio

    from pbem.transport.base import OutgoingMail
    from pbem.transport.urls import SmtpConfig, parse_outbound

    service, service_pw = mailstack.new_user("idle-svc")
    player, player_pw = mailstack.new_user("idle-player")
    now = [1000.0]
    config = parse_outbound(mailstack.smtp_url(service, service_pw))
    assert isinstance(config, SmtpConfig)
    sink = SmtpOutbound(config, keep_open=True, idle_seconds=30.0, monotonic=lambda: now[0])
    raw = f"From: {service}\r\nTo: {player}\r\nSubject: idle\r\n\r\nhi\r\n".encode()
    offset = POSTFIX_LOG.stat().st_size

    async def scenario() -> tuple[int, int, float | None]:
        [result] = await sink.send_batch([OutgoingMail("1", service, [player], raw)])
        assert result.ok, result.error
        now[0] += 29.0
        early = await sink.close_idle()
        now[0] += 1.0
        late = await sink.close_idle()
        return early, late, sink.seconds_until_idle_close()

    assert asyncio.run(scenario()) == (0, 1, None)
    [session] = postfix_sessions(offset, service, 1)
    assert "mail=1" in session and "quit=1" in session, session
    wait_for_messages(mailstack, player, player_pw, 1)
