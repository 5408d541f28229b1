"""The real mail stack in LMTP mode: players on real IMAP and SMTP, the service fed by
Postfix over LMTP (``mailstack.sh route``: the service's own domain is routed by
transport_maps to ``pbem serve``'s listener), and the daemon killed with SIGKILL in the
middle of a delivery.

``pbem serve`` runs as its own process with a test hook (a ``sitecustomize`` module on
its path) that stops it dead at one moment of the N-th LMTP delivery it takes, and tells
the test which mail that was; the test then kills it there and starts it again:

- ``data``: the message was read to its final dot; no answer given, nothing stored;
- ``commit``: the message is inserted in a transaction not yet committed;
- ``answer``: the message is committed, and the 250 not yet sent.

Postfix holds each of those mails (it never saw a 250) and delivers it again once the
daemon is back. Afterwards the game's action log equals the reference game played in
the engine alone, every move was applied exactly once, and each mail caught by a kill is
stored once and applied.
"""

from __future__ import annotations

import secrets
import socket
import time
from pathlib import Path

import pytest
from sqlmodel import Session

from engine import Settings as GameSettings
from pbem.config import load_settings
from pbem.service import Service
from pbem.store import models as m
from pbem.store.db import make_engine, migrate
from pbem.store.inbound import message_key
from tests.e2e.realstack_daemon import (
    REPO,
    ServeProcess,
    action_logs,
    flush_postfix_queue,
    inbound_statuses,
    moves_applied_once,
    outbox_rows,
    service_config,
)
from tests.e2e.realstack_players import ImapPlayer, PlayerPool, mail_every_move, reference_log
from tests.fixtures.mailstack import MailStack, MailStackError

pytestmark = [pytest.mark.slow, pytest.mark.mailstack]

STAGES = ("data:3", "commit:2", "answer:2")
FINISH_TIMEOUT = 120.0

HOOK = '''"""Test hook: stop pbem serve dead at one moment of its N-th LMTP delivery."""
import os

_SPEC = os.environ.get("LMTP_STALL", "")
if _SPEC:
    import pathlib
    import threading
    import time

    import pbem.listen.lmtp as _lmtp
    import pbem.service.transaction as _tx
    from pbem.service.intake import peek_headers as _peek

    _stage, _, _nth = _SPEC.partition(":")
    _marker = pathlib.Path(os.environ["LMTP_STALL_MARKER"])
    _count = [0]
    _lock = threading.Lock()

    def _due():
        with _lock:
            _count[0] += 1
            return _count[0] == int(_nth or 1)

    def _stall(raw):
        _marker.write_text(_stage + " " + (_peek(raw)[2] or ""))
        while True:
            time.sleep(60)

    if _stage == "data":
        _data = _lmtp.LmtpHandler.handle_DATA

        async def _handle_data(self, server, session, envelope):
            if _due():
                _stall(bytes(envelope.original_content))
            return await _data(self, server, session, envelope)

        _lmtp.LmtpHandler.handle_DATA = _handle_data
    elif _stage == "commit":
        _insert = _tx.insert_inbound_many

        def _insert_many(session, messages, **kwargs):
            result = _insert(session, messages, **kwargs)
            if threading.current_thread().name.startswith("pbem-lmtp") and _due():
                _stall(messages[0][0])
            return result

        _tx.insert_inbound_many = _insert_many
    elif _stage == "answer":
        _receive = _tx.Service.receive_many

        def _receive_then_stall(self, messages, source):
            result = _receive(self, messages, source)
            if threading.current_thread().name.startswith("pbem-lmtp") and _due():
                _stall(messages[0][0])
            return result

        _tx.Service.receive_many = _receive_then_stall
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def wait_for(what: str, done: object, timeout: float, daemon: ServeProcess | None = None) -> None:
    assert callable(done)
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            tail = daemon.tail() if daemon is not None else ""
            raise AssertionError(f"timed out waiting for {what}\n{tail}")
        time.sleep(0.05)


def test_postfix_over_lmtp_plays_a_game_through_kills_in_data_commit_and_answer(
    mailstack: MailStack, tmp_path: Path
) -> None:
    stack = mailstack
    svc_domain = f"lmtp-{secrets.token_hex(4)}.{stack.domain}"
    port = free_port()
    db_url = f"sqlite:///{tmp_path / 'pbem.sqlite'}"
    migrate(db_url)
    config = service_config(
        tmp_path / "pbem.toml",
        stack,
        f"cribbage@{svc_domain}",
        "",
        db_url,
        inbound_url=f"lmtp://127.0.0.1:{port}",
        outbound_url=stack.smtp_url(),
    )
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(HOOK)
    marker = tmp_path / "stalled"
    db = make_engine(db_url)
    service = Service(load_settings(config), db)

    players = []
    for i, level in enumerate(("random", "random")):
        who, secret = stack.new_user(f"lmtp-p{i}")
        players.append(
            ImapPlayer(who, secret, f"P{i}", svc_domain, stack.imap_host, stack.imap_port, level)
        )
    game_id = service.new_game([(p.address, p.name) for p in players], target=61, seed="lmtp")
    mail_every_move(db, [p.address for p in players])
    with Session(db) as session:
        row = session.get(m.Game, game_id)
        assert row is not None
        game_settings = GameSettings.from_json(row.settings)
    expected = reference_log(game_settings, "lmtp", [p.identity for p in players], "random")

    daemon = ServeProcess(config, tmp_path / "serve.log", db_url)
    pool = PlayerPool(players, smtp_host=stack.smtp_host, smtp_port=stack.smtp_port, threads=2)
    stack.route(svc_domain, f"127.0.0.1:{port}")
    caught: list[tuple[str, str]] = []  # (stage, Message-ID) of each mail a kill caught
    pool.start()
    try:
        for stage in STAGES:
            marker.unlink(missing_ok=True)
            daemon.env = {
                "LMTP_STALL": stage,
                "LMTP_STALL_MARKER": str(marker),
                "PYTHONPATH": f"{hooks}:{REPO}",
            }
            daemon.start()
            daemon.wait_up(ready=lambda: listening(port))
            flush_postfix_queue()  # what the last kill left deferred, now
            wait_for(f"the daemon to stall at {stage}", marker.exists, 60.0, daemon)
            time.sleep(0.05)  # the marker is written whole
            daemon.kill()
            name, _, msg_id = marker.read_text().partition(" ")
            caught.append((name, msg_id))
        daemon.env = {}
        daemon.start()
        daemon.wait_up(ready=lambda: listening(port))
        flush_postfix_queue()
        wait_for(
            "the game to finish and both players to see it",
            lambda: all(game_id in p.games_over for p in players),
            FINISH_TIMEOUT,
            daemon,
        )
        wait_for(
            "the outbox to empty", lambda: all(r.status == "sent" for r in outbox_rows(db)), 30
        )
        assert daemon.stop() == 0, daemon.tail()
    finally:
        pool.stop()
        daemon.close()
        stack.unroute(svc_domain)

    assert daemon.kills == len(STAGES)
    assert [stage for stage, _ in caught] == ["data", "commit", "answer"]
    assert action_logs(db, [game_id])[game_id] == expected
    moves_applied_once(db)
    statuses = inbound_statuses(db)
    assert set(statuses.values()) <= {"applied", "rejected", "ignored"}, statuses
    replies = {move.message_id for p in players for move in p.moves}
    assert {message_key(b"", r) for r in replies} <= set(statuses)
    for stage, msg_id in caught:
        # Postfix delivered it again, and it was stored once and applied.
        assert msg_id, stage
        assert statuses[message_key(b"", msg_id)] == "applied", (stage, msg_id)
    print(f"\nkills caught these mails, each delivered again by Postfix: {caught}")


@pytest.mark.parametrize(
    ("domain", "nexthop", "message"),
    [
        ("example.org", "127.0.0.1:8024", "subdomain of"),
        ("svc.pbem.test.evil.example", "127.0.0.1:8024", "subdomain of"),
        ("svc.pbem.test", "10.0.0.1:8024", "bad next hop"),
        ("svc.pbem.test", "relative.sock", "bad next hop"),
    ],
)
def test_the_stack_routes_only_its_own_subdomains_to_local_listeners(
    mailstack: MailStack, domain: str, nexthop: str, message: str
) -> None:
    with pytest.raises(MailStackError, match=message):
        mailstack.route(domain.replace("pbem.test", mailstack.domain), nexthop)
