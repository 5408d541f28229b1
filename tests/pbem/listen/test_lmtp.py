"""The LMTP listener, spoken to by a real LMTP client (``smtplib.LMTP``), on both
databases: every answer it gives, and what it stores.

- a move sent over LMTP is stored (with the envelope in front), wakes the loop at once,
  and is applied by the next step as mail read from a mailbox would be;
- 550 for a recipient that is not the service's, 552 for mail over
  ``max_message_bytes`` (at MAIL by SIZE, at DATA once per recipient), 451 when the
  database cannot take the mail, 5xx for commands out of order or malformed;
- several recipients in one transaction with mixed answers; pipelined commands; the same
  mail delivered twice (the mail server retrying) is stored once; a Unix socket.
"""

from __future__ import annotations

import asyncio
import signal
import smtplib
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from engine import Action
from pbem.demo.bots import command_for
from pbem.listen.lmtp import LmtpListener, start_listener, with_envelope
from pbem.listen.lmtp_protocol import _stream_protocol, plain_address, protocol_class
from pbem.run.daemon import StepStats
from pbem.run.runtime import build_daemon
from pbem.store import models as m
from pbem.store.db import make_engine
from pbem.transport.woken import LmtpInbound
from tests.cli_process import PBEM, start_pbem
from tests.e2e.helpers import ALICE, BOB, DOMAIN, Harness, fresh_env, make_settings, reply
from tests.fixtures.realmail import POSTGRES_ONLY, SQLITE_ONLY

SERVICE = f"cribbage@{DOMAIN}"
LIMIT = 20_000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[tuple[Harness, int]]:
    """The service fed over LMTP on a free port (its listener started), and that port."""
    port = free_port()
    h = Harness.build(
        tmp_path,
        db_url,
        db_engine,
        inbound_url=f"lmtp://127.0.0.1:{port}",
        max_message_bytes=LIMIT,
    )
    assert isinstance(h.daemon.inbox, LmtpInbound)
    listener = start_listener(h.service, h.daemon.inbox)
    try:
        yield h, port
    finally:
        listener.stop()
        h.close()


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def lmtp(port: int) -> smtplib.LMTP:
    client = smtplib.LMTP("127.0.0.1", port, timeout=30)
    client.ehlo("mx.test")  # LHLO
    return client


def data_replies(client: smtplib.LMTP, raw: bytes, count: int) -> list[tuple[int, bytes]]:
    """DATA, then the one answer per accepted recipient that LMTP gives."""
    first = client.data(raw)
    return [first, *(client.getreply() for _ in range(count - 1))]


def inbound_rows(db: Engine) -> list[m.Inbound]:
    with Session(db) as session:
        return list(session.exec(select(m.Inbound).order_by(m.Inbound.id)).all())  # type: ignore[arg-type]


def first_move(h: Harness, game_id: int) -> tuple[str, bytes]:
    """The recipient and bytes of the reply that makes the first move of ``game_id``."""
    game = h.game(game_id)
    action: Action = game.legal_actions()[0]
    address = h.address_of(game_id, action.seat)
    name = next(n for a, n in (ALICE, BOB) if a == address)
    token = h.token(game_id, action.seat)
    mail = next(m for m in reversed(h.received(address)) if token in str(m["Reply-To"]))
    return f"cribbage+{token}@{DOMAIN}", reply(mail, address, name, command_for(action))


def test_a_move_over_lmtp_is_stored_wakes_the_loop_and_is_applied(
    served: tuple[Harness, int],
) -> None:
    h, port = served
    game_id = h.new_game()
    recipient, raw = first_move(h, game_id)
    with lmtp(port) as client:
        assert client.ehlo_resp is not None
        assert b"PIPELINING" in client.ehlo_resp and b"ENHANCEDSTATUSCODES" in client.ehlo_resp
        assert client.mail(ALICE[0])[0] == 250
        assert client.rcpt(recipient.upper())[0] == 250  # any case
        code, text = client.data(raw)
    assert code == 250 and b"stored as inbound" in text
    [row] = inbound_rows(h.db)
    assert row.status == "pending" and row.source == "lmtp"
    assert row.raw.startswith(
        f"Return-Path: <{ALICE[0]}>\r\nDelivered-To: {recipient.upper()}\r\n".encode()
    )
    started = time.monotonic()
    assert h.daemon.inbox.wait(10)  # woken by the store, not by a poll
    assert time.monotonic() - started < 1
    moves = len(h.log(game_id))
    stats = h.step()
    assert stats.processed == 1 and stats.fetched == 0
    [row] = inbound_rows(h.db)
    assert row.status == "applied", row.reason
    assert len(h.log(game_id)) == moves + 1


def test_the_running_loop_takes_each_move_in_one_step(served: tuple[Harness, int]) -> None:
    """``pbem serve``'s loop fed over LMTP: each stored move wakes it, is applied, and the
    loop waits again at once, without a second step to look for more (anything stored
    meanwhile wakes the wait)."""
    h, port = served
    game_id = h.new_game()
    steps: list[StepStats] = []
    step = h.daemon._step  # (the loop's step: ``step`` is for a caller outside the loop)

    def counted(fetch: bool) -> StepStats:
        steps.append(step(fetch))
        return steps[-1]

    h.daemon._step = counted  # type: ignore[method-assign]
    loop = threading.Thread(target=h.daemon.run, daemon=True)
    loop.start()
    try:
        for n in range(1, 4):
            recipient, raw = first_move(h, game_id)
            with lmtp(port) as client:
                client.mail(ALICE[0])
                client.rcpt(recipient)
                assert client.data(raw)[0] == 250
            deadline = time.monotonic() + 20
            while [r.status for r in inbound_rows(h.db)] != ["applied"] * n:
                assert time.monotonic() < deadline, [r.status for r in inbound_rows(h.db)]
                time.sleep(0.01)
            time.sleep(0.2)  # a step that would follow comes now
    finally:
        h.daemon.stop()
        loop.join(30)
    processed = [s.processed for s in steps]
    if h.db.dialect.name == "sqlite":
        assert processed == [0, 1, 1, 1]  # the first look at start, then one step a move
    else:
        # On PostgreSQL the mail a move queues also NOTIFYs every worker (this one too),
        # which wakes it for one more look.
        assert [n for n in processed if n] == [1, 1, 1] and len(processed) <= 1 + 2 * 3


def test_the_same_mail_delivered_again_is_stored_once(served: tuple[Harness, int]) -> None:
    """The mail server retries when it did not see the 250 (a lost connection)."""
    h, port = served
    game_id = h.new_game()
    recipient, raw = first_move(h, game_id)
    answers = []
    for _ in range(2):
        with lmtp(port) as client:
            client.mail(ALICE[0])
            client.rcpt(recipient)
            answers.append(client.data(raw))
    assert [code for code, _ in answers] == [250, 250]
    assert b"stored already" in answers[1][1]
    assert len(inbound_rows(h.db)) == 1
    moves = len(h.log(game_id))
    h.step()
    assert len(h.log(game_id)) == moves + 1


def test_mails_over_many_connections_at_once_are_each_stored_once(
    served: tuple[Harness, int],
) -> None:
    """Many connections deliver at once (the mail server under load, or retrying one
    mail twice): stored together, each answered 250, each Message-ID stored once."""
    h, port = served
    mails = [
        b"From: Alice <alice@example.com>\r\nMessage-ID: <c%d@x>\r\nSubject: s\r\n\r\nhelp\r\n"
        % (n % 6)
        for n in range(12)
    ]
    codes: list[int] = []

    def send(raw: bytes) -> None:
        with lmtp(port) as client:
            client.mail(ALICE[0])
            client.rcpt(SERVICE)
            codes.append(client.data(raw)[0])

    senders = [threading.Thread(target=send, args=(raw,)) for raw in mails]
    for thread in senders:
        thread.start()
    for thread in senders:
        thread.join(30)
    assert codes == [250] * len(mails)
    assert sorted(row.message_key for row in inbound_rows(h.db)) == [f"<c{n}@x>" for n in range(6)]


@pytest.mark.parametrize(
    "recipient",
    [
        f"alice@{DOMAIN}",
        "cribbage@other.test",
        f"cribbagex@{DOMAIN}",
        f"computer@{DOMAIN}",
        f"x+cribbage@{DOMAIN}",
        "cribbage",
    ],
)
def test_a_recipient_not_the_services_is_refused_with_550(
    served: tuple[Harness, int], recipient: str
) -> None:
    h, port = served
    with lmtp(port) as client:
        client.mail(ALICE[0])
        code, _ = client.rcpt(recipient)
        assert code in (550, 553) if recipient == "cribbage" else code == 550
        assert client.docmd("DATA")[0] == 503  # no recipient taken: no data
    assert inbound_rows(h.db) == []


def test_several_recipients_in_one_transaction_with_mixed_answers(
    served: tuple[Harness, int],
) -> None:
    h, port = served
    plain = (
        b"From: Alice <alice@example.com>\r\nSubject: hello\r\nMessage-ID: <m1@x>\r\n\r\nhelp\r\n"
    )
    with lmtp(port) as client:
        client.mail(ALICE[0])
        assert client.rcpt(f"stranger@{DOMAIN}")[0] == 550
        assert client.rcpt(f"Cribbage+Lobby@{DOMAIN}")[0] == 250
        assert client.rcpt(SERVICE)[0] == 250
        assert client.rcpt("cribbage@elsewhere.test")[0] == 550
        replies = data_replies(client, plain, 2)
        assert [code for code, _ in replies] == [250, 250]
        assert f"Cribbage+Lobby@{DOMAIN}".encode() in replies[0][1]
        assert SERVICE.encode() in replies[1][1]
        assert client.noop()[0] == 250  # nothing left unread: one answer per recipient
    [row] = inbound_rows(h.db)
    assert row.raw.startswith(
        b"Return-Path: <alice@example.com>\r\nDelivered-To: Cribbage+Lobby@pbem.test\r\n"
        b"Delivered-To: cribbage@pbem.test\r\nFrom: Alice"
    )


def test_mail_over_the_size_limit_is_refused_with_552(served: tuple[Harness, int]) -> None:
    h, port = served
    big = b"From: alice@example.com\r\nSubject: big\r\n\r\n" + b"x" * 70 + b"\r\n"
    big = big * (LIMIT // 60)
    with lmtp(port) as client:
        # Said in advance (SIZE): refused at MAIL, before any data.
        code, _ = client.mail(ALICE[0], [f"SIZE={LIMIT + 1}"])
        assert code == 552
        client.rset()
        # Found out at DATA: once per recipient, and the session goes on.
        client.mail(ALICE[0])
        client.rcpt(SERVICE)
        client.rcpt(f"cribbage+x@{DOMAIN}")
        replies = data_replies(client, big, 2)
        assert [code for code, _ in replies] == [552, 552]
        assert client.noop()[0] == 250
        client.mail(ALICE[0])
        client.rcpt(SERVICE)
        assert client.data(b"From: alice@example.com\r\nSubject: small\r\n\r\nhi\r\n")[0] == 250
    [row] = inbound_rows(h.db)
    assert b"Subject: small" in row.raw


def test_malformed_commands_and_mail(served: tuple[Harness, int]) -> None:
    h, port = served
    with smtplib.LMTP("127.0.0.1", port, timeout=30) as client:
        assert client.docmd("HELO", "mx.test")[0] == 500  # LMTP greets with LHLO
        assert client.docmd("MAIL", f"FROM:<{ALICE[0]}>")[0] == 503  # no LHLO yet
        client.ehlo("mx.test")
        assert client.docmd("RCPT", f"TO:<{SERVICE}>")[0] == 503  # no MAIL yet
        assert client.docmd("MAIL", "TO:<alice@example.com>")[0] == 501
        assert client.docmd("DATA")[0] == 503
        assert client.docmd("BOGUS")[0] == 500
        # Bytes that are no mail at all are still stored (and answered as any mail is).
        client.mail("")
        client.rcpt(SERVICE)
        assert client.data(b"\x00\xff\xfe not a header\r\n\r\n\x80\x81")[0] == 250
    [row] = inbound_rows(h.db)
    assert row.raw.startswith(b"Return-Path: <>\r\n")
    h.step()
    [row] = inbound_rows(h.db)
    assert row.status in ("ignored", "rejected"), (row.status, row.reason)


def test_pipelined_commands_are_answered_in_order(served: tuple[Harness, int]) -> None:
    h, port = served
    mail = b"From: Bob <bob@example.org>\r\nSubject: hi\r\nMessage-ID: <p%d@x>\r\n\r\nhelp\r\n"
    with lmtp(port) as client:
        # Two whole transactions in one write, as a pipelining mail server sends them.
        burst = b""
        for n in (1, 2):
            burst += (
                f"MAIL FROM:<{BOB[0]}>\r\nRCPT TO:<nobody@{DOMAIN}>\r\n"
                f"RCPT TO:<{SERVICE}>\r\nDATA\r\n"
            ).encode()
            burst += (mail % n) + b".\r\n"
        client.send(burst)
        codes = [client.getreply()[0] for _ in range(2 * 5)]
    assert codes == [250, 550, 250, 354, 250] * 2
    assert len(inbound_rows(h.db)) == 2


def test_451_when_the_database_cannot_take_the_mail(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    """A database that does not answer: 451 for each recipient, nothing half stored; the
    mail server's retry, once the database is back, is taken."""
    port = free_port()
    down = make_engine("postgresql+psycopg://postgres@127.0.0.1:1/nowhere")
    settings = make_settings(tmp_path, db_url, inbound_url=f"lmtp://127.0.0.1:{port}")
    daemon = build_daemon(settings, down)
    assert isinstance(daemon.inbox, LmtpInbound)
    listener = start_listener(daemon.service, daemon.inbox)
    mail = b"From: alice@example.com\r\nMessage-ID: <down@x>\r\nSubject: s\r\n\r\nhelp\r\n"
    try:
        with lmtp(port) as client:
            client.mail(ALICE[0])
            client.rcpt(SERVICE)
            client.rcpt(f"cribbage+abc@{DOMAIN}")
            replies = data_replies(client, mail, 2)
        assert [code for code, _ in replies] == [451, 451]
        assert all(b"4.3.0" in text for _, text in replies)
        assert not daemon.inbox.wait(0)  # nothing stored: the loop is not woken
    finally:
        listener.stop()
        daemon.inbox.close()
        down.dispose()
    # The database is back (the service on the working one): the retry is stored.
    port = free_port()
    h = Harness.build(tmp_path, db_url, db_engine, inbound_url=f"lmtp://127.0.0.1:{port}")
    assert isinstance(h.daemon.inbox, LmtpInbound)
    listener = start_listener(h.service, h.daemon.inbox)
    try:
        with lmtp(port) as client:
            client.mail(ALICE[0])
            client.rcpt(SERVICE)
            client.rcpt(f"cribbage+abc@{DOMAIN}")
            assert [c for c, _ in data_replies(client, mail, 2)] == [250, 250]
        assert len(inbound_rows(db_engine)) == 1
    finally:
        listener.stop()
        h.close()


def test_a_unix_socket(tmp_path: Path, db_url: str, db_engine: Engine) -> None:
    path = tmp_path / "lmtp.sock"
    h = Harness.build(tmp_path, db_url, db_engine, inbound_url=f"lmtp:{path}")
    assert isinstance(h.daemon.inbox, LmtpInbound)
    path.touch()  # not a socket: never removed to make room
    with pytest.raises(OSError):
        start_listener(h.service, h.daemon.inbox)
    path.unlink()
    listener = start_listener(h.service, h.daemon.inbox)
    # Reached by its owner and its group (the mail server's) only.
    assert stat.S_IMODE(path.stat().st_mode) == 0o660
    try:
        with pytest.raises(OSError, match="another listener"):
            LmtpListener(h.service, h.daemon.inbox).start()
        with smtplib.LMTP(str(path), timeout=30) as client:
            client.ehlo("mx.test")
            client.mail(ALICE[0])
            client.rcpt(SERVICE)
            assert client.data(b"From: alice@example.com\r\nSubject: s\r\n\r\nhelp\r\n")[0] == 250
    finally:
        listener.stop()
    assert not path.exists()  # removed on stop
    # A socket a dead listener left behind is replaced.
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()
    listener = start_listener(h.service, h.daemon.inbox)
    listener.stop()
    h.close()
    assert len(inbound_rows(db_engine)) == 1


def test_the_envelope_in_front_is_the_same_for_the_same_delivery() -> None:
    one = with_envelope(b"Subject: x\r\n\r\nbody", "", ["a@x", "b@x"])
    assert one == with_envelope(b"Subject: x\r\n\r\nbody", None, ["a@x", "b@x"])
    assert one == with_envelope(b"Subject: x\r\n\r\nbody", "<>", ["a@x", "b@x"])
    assert one.startswith(b"Return-Path: <>\r\nDelivered-To: a@x\r\nDelivered-To: b@x\r\n")


@pytest.mark.parametrize(
    "arg",
    [
        "<alice@example.org>",
        "<cribbage+Tok3n@pbem.test> SIZE=1234 BODY=8BITMIME",
        "<>",
        " <MixedCase@Example.ORG>",
        "<pläyer@example.org> SMTPUTF8",
        '<"quoted local"@example.org>',
        "<@route:alice@example.org>",
        "<alice@[127.0.0.1]>",
        "<a(comment)@example.org>",
        "alice@example.org",
        "<alice@example.org",
        "<no-at-sign>",
    ],
)
def test_envelope_addresses_read_as_aiosmtpds_parser_reads_them(arg: str) -> None:
    """The plain addresses are read without the header parser, the rest by it: both give
    what aiosmtpd's own parser gives."""
    from aiosmtpd.lmtp import LMTP

    listener_class = protocol_class()
    ours: Any = object.__new__(listener_class)
    theirs = LMTP.__new__(LMTP)
    for protocol in (ours, theirs):
        protocol.local_part_limit = 0
    address, rest = ours._getaddr(arg)
    expected_address, expected_rest = theirs._getaddr(arg)
    assert address == expected_address
    assert (rest or "").split() == (expected_rest or "").split()
    if arg in ("<alice@example.org>", "<>") or "SIZE" in arg:
        assert plain_address(arg) is not None  # the usual ones: no header parser


def test_each_connection_starts_as_aiosmtpd_would_build_it() -> None:
    """The protocol of a later connection, started from the state the first one was
    built with, is what aiosmtpd's own look over every attribute gives: the same state,
    its commands and mechanisms bound to itself, a table of size limits of its own."""
    from aiosmtpd.lmtp import LMTP

    class Handler:
        async def handle_RCPT(self, *args: Any) -> str:
            return "250 OK"

    loop = asyncio.new_event_loop()
    try:
        handler = Handler()
        options: dict[str, Any] = {"data_size_limit": 1000, "hostname": "h", "loop": loop}
        ours = protocol_class()
        first, later = ours(handler, **options), ours(handler, **options)
        built = LMTP(handler, **options)  # aiosmtpd's way, for every connection
        assert set(vars(later)) == set(vars(built)) | {"command_size_limits"}
        stream = set(vars(_stream_protocol(loop)))
        for key, value in vars(built).items():
            if key in stream or key in ("_smtp_methods", "_auth_methods"):
                continue  # the stream's own, new for each connection; bound: below
            assert vars(later)[key] == value, key
        assert set(later._smtp_methods) == set(built._smtp_methods)
        assert all(m.__self__ is later for m in later._smtp_methods.values())
        assert set(later._auth_methods) == set(built._auth_methods)
        assert all(a.method.__self__ is later for a in later._auth_methods.values() if a.is_builtin)
        assert later._handle_hooks == first._handle_hooks  # the handler's, shared
        assert later.command_size_limits is not first.command_size_limits
        assert later._stream_reader is not first._stream_reader
    finally:
        loop.close()


@POSTGRES_ONLY
def test_workers_share_one_port_and_each_mail_is_applied_once_by_a_free_one(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    """Two workers on PostgreSQL, each with a listener on the same port (the kernel
    spreads the connections): a mail that a busy worker's listener takes is applied by
    the free one at once, and many mails at once are each applied exactly once."""
    port = free_port()
    url = f"lmtp://127.0.0.1:{port}"
    busy = Harness.build(tmp_path / "a", db_url, db_engine, inbound_url=url)
    free = Harness.build(tmp_path / "b", db_url, db_engine, inbound_url=url)
    assert isinstance(busy.daemon.inbox, LmtpInbound)
    assert isinstance(free.daemon.inbox, LmtpInbound)
    listeners = [start_listener(busy.service, busy.daemon.inbox)]
    threads: list[threading.Thread] = []
    try:
        games = [busy.new_game(seed=f"w{n}") for n in range(6)]
        busy.step()
        moves = {g: first_move(busy, g) for g in games}
        # Only the free worker runs its loop; the busy one only has its listener up.
        threads.append(threading.Thread(target=free.daemon.run, daemon=True))
        threads[-1].start()
        recipient, raw = moves[games[0]]
        with lmtp(port) as client:  # only the busy worker listens yet
            client.mail(ALICE[0])
            client.rcpt(recipient)
            assert client.data(raw)[0] == 250
        deadline = time.monotonic() + 10
        while inbound_rows(db_engine)[0].status == "pending" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [row.status for row in inbound_rows(db_engine)] == ["applied"]
        # Both listeners on the one port and both loops now, and the other moves all at
        # once over several connections.
        listeners.append(start_listener(free.service, free.daemon.inbox))
        threads.append(threading.Thread(target=busy.daemon.run, daemon=True))
        threads[-1].start()

        def send(game_id: int) -> None:
            recipient, raw = moves[game_id]
            with lmtp(port) as client:
                client.mail(ALICE[0])
                client.rcpt(recipient)
                assert client.data(raw)[0] == 250

        senders = [threading.Thread(target=send, args=(g,)) for g in games[1:]]
        for thread in senders:
            thread.start()
        for thread in senders:
            thread.join(30)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if all(row.status != "pending" for row in inbound_rows(db_engine)):
                break
            time.sleep(0.02)
    finally:
        for h in (busy, free):
            h.daemon.stop()
        for thread in threads:
            thread.join(30)
        for listener in listeners:
            listener.stop()
        busy.close()
        free.close()
    rows = inbound_rows(db_engine)
    assert len(rows) == len(games) and {row.status for row in rows} == {"applied"}
    for game_id in games:
        players_moves = [entry for entry in busy.log(game_id) if not entry[3]]
        assert len(players_moves) == 1, (game_id, players_moves)


@SQLITE_ONLY
def test_pbem_serve_listens_for_lmtp_and_says_when_it_cannot(tmp_path: Path, db_url: str) -> None:
    """The real program: it says where it listens, takes a mail, and stops on SIGTERM with
    the port let go; an address it cannot bind is a clear error, exit status 1."""
    port = free_port()
    env = {
        **fresh_env(),
        "PBEM_DATA_DIR": str(tmp_path / "data"),
        "PBEM_DOMAIN": DOMAIN,
        "PBEM_DATABASE_URL": db_url,
        "PBEM_INBOUND_URL": f"lmtp://127.0.0.1:{port}",
    }
    init = subprocess.run(
        [*PBEM, "init"], env=env, cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert init.returncode == 0, init.stderr
    with socket.create_server(("127.0.0.1", port)):  # someone else has the port
        taken = subprocess.run(
            [*PBEM, "serve"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
    assert taken.returncode == 1
    assert f"cannot listen on lmtp://127.0.0.1:{port} for LMTP" in taken.stderr
    assert "Traceback" not in taken.stderr

    proc = start_pbem("serve", env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                client = lmtp(port)
                break
            except OSError:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "pbem serve never listened"
                time.sleep(0.05)
        with client:
            client.mail(ALICE[0])
            client.rcpt(SERVICE)
            mail = b"From: alice@example.com\r\nSubject: hi\r\n\r\nhelp\r\n"
            assert client.data(mail)[0] == 250
        db = make_engine(db_url)
        try:
            while [row.status for row in inbound_rows(db)] == ["pending"]:
                assert time.monotonic() < deadline + 30, "the mail was never processed"
                time.sleep(0.05)
        finally:
            db.dispose()
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert f"listening for LMTP on 127.0.0.1:{port}" in err
    assert "inbound 1 from " in err  # stored, then processed
    assert not listening(port)
