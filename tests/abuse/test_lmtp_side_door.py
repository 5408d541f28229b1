"""LMTP is no side door: with a trusted server named, only the mail server may hand
mail over, so nobody can write their own Authentication-Results past it."""

from __future__ import annotations

import smtplib
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from pbem.config import ConfigError, load_settings
from pbem.listen.lmtp import start_listener
from pbem.service import policy
from pbem.store import models as m
from pbem.transport.woken import LmtpInbound
from tests.e2e.helpers import ALICE, DOMAIN, Harness

SERVICE = f"cribbage@{DOMAIN}"
TRUSTED = "mx.pbem.test"
FORGED = (
    f"Authentication-Results: {TRUSTED}; dmarc=pass header.from=example.com\r\n"
    f"From: {ALICE[0]}\r\nTo: {SERVICE}\r\nSubject: resign\r\nMessage-ID: <side@door>\r\n"
    "\r\nresign\r\n"
).encode()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(
    tmp_path: Path, db_url: str, db_engine: Engine, **settings: object
) -> Iterator[tuple[Harness, int]]:
    port = free_port()
    h = Harness.build(
        tmp_path, db_url, db_engine, inbound_url=f"lmtp://127.0.0.1:{port}", **settings
    )
    assert isinstance(h.daemon.inbox, LmtpInbound)
    listener = start_listener(h.service, h.daemon.inbox)
    try:
        yield h, port
    finally:
        listener.stop()
        h.close()


def hand_over(port: int, times: int) -> list[int]:
    """``times`` forged mails handed over LMTP from 127.0.0.1; each RCPT's code."""
    codes = []
    with smtplib.LMTP("127.0.0.1", port, timeout=30) as client:
        client.ehlo("anyone.local")
        for _ in range(times):
            client.mail(ALICE[0])
            code = client.rcpt(SERVICE)[0]
            codes.append(code)
            if code == 250:
                client.data(FORGED)
            else:
                client.rset()
    return codes


def stored(db: Engine) -> int:
    with Session(db) as session:
        return len(session.exec(select(m.Inbound)).all())


@pytest.fixture
def guarded(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[tuple[Harness, int]]:
    """A trusted server named, and the mail server elsewhere (not loopback)."""
    yield from serve(
        tmp_path, db_url, db_engine, trusted_authserv_id=TRUSTED, lmtp_peers=["192.0.2.25"]
    )


def test_a_client_not_named_in_lmtp_peers_hands_nothing_over(
    guarded: tuple[Harness, int],
) -> None:
    h, port = guarded
    game_id = h.new_game()
    before = h.log(game_id)
    assert hand_over(port, 20) == [550] * 20
    assert stored(h.db) == 0
    h.step()
    assert h.log(game_id) == before  # nothing applied: no forged resign


def test_by_default_only_loopback_may(tmp_path: Path, db_url: str, db_engine: Engine) -> None:
    for h, port in serve(tmp_path, db_url, db_engine, trusted_authserv_id=TRUSTED):
        assert hand_over(port, 1) == [250]
        assert stored(h.db) == 1


def test_the_rule_itself() -> None:
    settings = load_settings(trusted_authserv_id=TRUSTED, lmtp_peers=["10.0.0.0/24", "2001:db8::1"])
    assert policy.may_hand_over(settings, "10.0.0.7")
    assert policy.may_hand_over(settings, "::ffff:10.0.0.7")
    assert policy.may_hand_over(settings, "2001:db8::1")
    assert not policy.may_hand_over(settings, "127.0.0.1")  # named peers replace loopback
    assert not policy.may_hand_over(settings, "10.0.1.7")
    assert not policy.may_hand_over(settings, "not an address")
    assert policy.may_hand_over(settings, None)  # a Unix socket: its mode and folder decide
    loopback = load_settings(trusted_authserv_id=TRUSTED)
    assert policy.may_hand_over(loopback, "127.0.0.1") and policy.may_hand_over(loopback, "::1")
    assert not policy.may_hand_over(loopback, "192.0.2.25")
    untrusted = load_settings()
    assert policy.may_hand_over(untrusted, "192.0.2.25")  # nothing to forge past it


def test_a_bad_peer_in_the_configuration_is_a_clean_error() -> None:
    with pytest.raises(ConfigError, match="lmtp_peers"):
        load_settings(lmtp_peers=["mail.example.com"])
