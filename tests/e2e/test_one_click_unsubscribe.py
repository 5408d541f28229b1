"""RFC 8058 one-click unsubscribe (both backends): the headers when ``unsubscribe_url`` is
set, and the listener of `pbem.listen.web` on 127.0.0.1 (any free port), driven by urllib
and, for what urllib would not send (the attacks on the listener), by raw sockets."""

from __future__ import annotations

import contextlib
import logging
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from engine import computer
from pbem.config import ConfigError, load_settings
from pbem.listen import web
from pbem.listen.web import UnsubscribeServer, start_listener
from tests.cli_process import start_pbem
from tests.e2e.helpers import ALICE, BOB, Harness, fresh_env
from tests.fixtures.realmail import SQLITE_ONLY

A, B = ALICE[0], BOB[0]
URL = "https://pbem.example.org/unsubscribe"
ONE_CLICK = b"List-Unsubscribe=One-Click"


@pytest.fixture
def one_click(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    h = Harness.build(tmp_path, db_url, db_engine, unsubscribe_url=URL + "/")
    yield h
    h.close()


@pytest.fixture
def listener(one_click: Harness) -> Iterator[UnsubscribeServer]:
    server = start_listener(one_click.service, "127.0.0.1:0", one_click.settings.unsubscribe_url)
    yield server
    server.stop()


def request(
    server: UnsubscribeServer, path: str, data: bytes | None = None, method: str | None = None
) -> tuple[int, str]:
    req = urllib.request.Request(f"http://127.0.0.1:{server.port}{path}", data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def move_for(h: Harness, game_id: int, seat: int) -> None:
    game = h.game(game_id)
    h.move(game_id, computer.choose_action(game, seat, random.Random(seat)))
    assert h.last_inbound().status == "applied", h.last_inbound().reason


def test_game_mails_carry_the_https_uri_first_and_list_unsubscribe_post(
    one_click: Harness,
) -> None:
    h = one_click
    game_id = h.new_game((ALICE, BOB))
    move_for(h, game_id, 0)
    h.answer(A, "history")
    mails = h.received(A) + h.received(B)
    assert len(mails) >= 3
    for msg in mails:
        reply_to = str(msg["Reply-To"]).split("<")[-1].strip(">")
        token = reply_to.split("+", 1)[1].split("@", 1)[0]
        header = " ".join(str(msg["List-Unsubscribe"]).split())
        assert header == f"<{URL}/{token}>, <mailto:{reply_to}?subject=stop>"
        assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        assert A not in header and B not in header


def test_settings_check_the_url_and_the_listen_address() -> None:
    assert load_settings(None, unsubscribe_url="").unsubscribe_url == ""
    for bad in ("http://x.test/u", "https://x.test/u?a=1", "mailto:a@b", "https://"):
        with pytest.raises(ConfigError, match="unsubscribe_url"):
            load_settings(None, unsubscribe_url=bad)
    assert load_settings(None, http_listen="[::1]:8025").http_listen == "[::1]:8025"
    for bad in ("8025", "localhost", "host:99999", "host:", ":80", "::1:80", "a b:80"):
        with pytest.raises(ConfigError, match="http_listen"):
            load_settings(None, http_listen=bad)


def test_post_stops_the_player_and_get_does_not(
    one_click: Harness, listener: UnsubscribeServer, caplog: pytest.LogCaptureFixture
) -> None:
    h = one_click
    game_id = h.new_game((ALICE, BOB))
    h.mail_all(B)  # every move of Alice's would tell him
    token = h.token(game_id, 1)
    # GET (a link scanner, a person): a page with a button, and nothing changes.
    status, page = request(listener, f"/unsubscribe/{token}")
    assert status == 200 and 'method="post"' in page
    player = h.player(B)
    assert player is not None and not player.stopped
    # The one-click POST stops him, as 'stop' by mail does.
    with caplog.at_level(logging.INFO, logger="pbem.web"):
        status, page = request(listener, f"/unsubscribe/{token}", ONE_CLICK)
    assert status == 200 and "unsubscribed" in page
    player = h.player(B)
    assert player is not None and player.stopped
    other = h.player(A)
    assert other is not None and not other.stopped
    logged = [r.getMessage() for r in caplog.records if r.name == "pbem.web"]
    assert len(logged) == 1 and token not in logged[0] and token[:4] + "…" in logged[0]
    # Alice's move would tell Bob: nothing is queued for him.
    before = sum(r.recipient == B for r in h.outbox())
    move_for(h, game_id, 0)
    assert sum(r.recipient == B for r in h.outbox()) == before
    # Again: still 200, still stopped.
    assert request(listener, f"/unsubscribe/{token}", ONE_CLICK)[0] == 200


def test_bad_requests_change_nothing(one_click: Harness, listener: UnsubscribeServer) -> None:
    h = one_click
    game_id = h.new_game((ALICE, BOB))
    token = h.token(game_id, 1)
    unknown = "a" * 20
    assert request(listener, f"/unsubscribe/{unknown}", ONE_CLICK) == (404, "Not found\n")
    assert request(listener, f"/unsubscribe/{unknown}")[0] == 404
    for path in ("/", "/unsubscribe", "/unsubscribe/", f"/other/{token}", "/unsubscribe/A%00"):
        assert request(listener, path, ONE_CLICK)[0] == 404, path
        assert request(listener, path)[0] == 404, path
    path = f"/unsubscribe/{token}"
    assert request(listener, path, ONE_CLICK + b"&x=" + b"y" * 2000)[0] == 413
    assert request(listener, path, b"")[0] == 400
    assert request(listener, path, b"\xff\xfe=\x00")[0] == 400
    assert request(listener, path, b"List-Unsubscribe=Other")[0] == 400
    assert request(listener, path, ONE_CLICK, method="PUT")[0] == 405
    assert request(listener, path, method="DELETE")[0] == 405
    player = h.player(B)
    assert player is not None and not player.stopped
    # Raw garbage on the socket: answered, and the listener goes on.
    with socket.create_connection(("127.0.0.1", listener.port), timeout=10) as sock:
        sock.sendall(b"\xff\x00 nonsense\r\n\r\n")
        assert sock.recv(100).startswith(b"HTTP/1.1 400 Bad Request\r\n")
    with socket.create_connection(("127.0.0.1", listener.port), timeout=10) as sock:
        try:  # a request line too long: 431, or the connection reset while sending
            sock.sendall(b"GET /" + b"x" * 70000 + b" HTTP/1.0\r\n\r\n")
            assert sock.recv(100).startswith(b"HTTP/1.1 431")
        except ConnectionError:
            pass
    post = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n".encode()
    with socket.create_connection(("127.0.0.1", listener.port), timeout=10) as sock:
        sock.sendall(post)
        assert sock.recv(100).startswith(b"HTTP/1.1 400")
    for length in (b"9" * 5000, b"-1", b"1e3", b"99999"):
        post = f"POST {path} HTTP/1.0\r\nContent-Length: ".encode() + length + b"\r\n\r\n"
        with socket.create_connection(("127.0.0.1", listener.port), timeout=10) as sock:
            sock.sendall(post)
            assert sock.recv(100)[:12] in (b"HTTP/1.1 400", b"HTTP/1.1 413"), length
    for odd in ("//[/x", "/unsubscribe/%ff", "/unsubscribe/" + "a" * 100):
        assert request(listener, odd, ONE_CLICK)[0] == 404, odd
    assert request(listener, path, ONE_CLICK)[0] == 200
    player = h.player(B)
    assert player is not None and player.stopped


# -- attacks on the listener -------------------------------------------------------------


def exchange(
    server: UnsubscribeServer, data: bytes, *, half_close: bool = False, wait: float = 5.0
) -> tuple[bytes, float]:
    """Send ``data`` on a raw connection (then shut its sending side when ``half_close``),
    and read until the listener closes: what came back and how long it took."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=wait) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        got = b""
        while chunk := sock.recv(4096):
            got += chunk
    return got, time.monotonic() - start


def status_of(answer: bytes) -> int:
    assert answer.startswith(b"HTTP/1.1 "), answer[:100]
    return int(answer[9:12])


def no_tracebacks(caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> None:
    """Nothing logged as an error, no traceback anywhere on stderr."""
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert "Traceback" not in capfd.readouterr().err


def post_head(path: str, *headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: pbem.example.org", *headers, "", ""]
    return "\r\n".join(lines).encode()


def test_the_body_length_must_be_told_once_and_plainly(
    one_click: Harness,
    listener: UnsubscribeServer,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    h = one_click
    game_id = h.new_game((ALICE, BOB))
    path = f"/unsubscribe/{h.token(game_id, 1)}"
    n = len(ONE_CLICK)
    framings = [
        (f"Content-Length: {n}", "Content-Length: 0"),  # the first would unsubscribe
        ("Content-Length: 0", f"Content-Length: {n}"),
        (f"Content-Length: {n}", f"Content-Length: {n}"),  # the same twice: still two
        (f"Content-Length: {n}, {n}",),
        (f"Content-Length: {n}", "Transfer-Encoding: chunked"),
        ("Transfer-Encoding: chunked", "Transfer-Encoding: chunked"),
        ("Transfer-Encoding: chunked", "Transfer-Encoding: identity"),
        ("Transfer-Encoding: gzip, chunked",),
    ]
    chunked = f"{n:x}\r\n".encode() + ONE_CLICK + b"\r\n0\r\n\r\n"
    with caplog.at_level(logging.DEBUG, logger="pbem.web"):
        for headers in framings:
            body = chunked if "chunked" in " ".join(headers) else ONE_CLICK
            answer, _ = exchange(listener, post_head(path, *headers) + body)
            assert status_of(answer) == 400, headers
            player = h.player(B)
            assert player is not None and not player.stopped, headers
        # Told once, either way, it is read.
        answer, _ = exchange(listener, post_head(path, "Transfer-Encoding: chunked") + chunked)
        assert status_of(answer) == 200 and answer.endswith(b"\n")
        player = h.player(B)
        assert player is not None and player.stopped
        answer, _ = exchange(listener, post_head(path, f"Content-Length: {n}") + ONE_CLICK)
        assert status_of(answer) == 200
        # A chunked body over MAX_BODY: 413 once it is past.
        big = b"".join(b"100\r\n" + b"x" * 256 + b"\r\n" for _ in range(5)) + b"0\r\n\r\n"
        answer, _ = exchange(listener, post_head(path, "Transfer-Encoding: chunked") + big)
        assert status_of(answer) == 413
    no_tracebacks(caplog, capfd)


def test_a_body_shorter_than_its_length_is_a_4xx_within_the_deadline(
    one_click: Harness,
    listener: UnsubscribeServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    h = one_click
    game_id = h.new_game((ALICE, BOB))
    path = f"/unsubscribe/{h.token(game_id, 1)}"
    short = post_head(path, f"Content-Length: {len(ONE_CLICK)}") + ONE_CLICK[:10]
    monkeypatch.setattr(web, "REQUEST_DEADLINE", 1.0)
    with caplog.at_level(logging.DEBUG, logger="pbem.web"):
        # The client says it has sent all: 400 at once.
        answer, took = exchange(listener, short, half_close=True)
        assert status_of(answer) == 400 and took < 0.9
        assert b"Traceback" not in answer and answer.endswith(b"Bad request\n")
        # The client falls silent: 408 at the deadline.
        answer, took = exchange(listener, short)
        assert status_of(answer) == 408 and 0.9 < took < 3
        assert b"Traceback" not in answer
        # So is a head that never ends.
        answer, took = exchange(listener, short.split(b"\r\n", 1)[0] + b"\r\n")
        assert status_of(answer) == 408 and took < 3
        answer, took = exchange(listener, short.split(b"\r\n", 1)[0], half_close=True)
        assert status_of(answer) == 400 and took < 0.9
    player = h.player(B)
    assert player is not None and not player.stopped
    no_tracebacks(caplog, capfd)


def test_a_trickling_client_is_closed_by_the_deadline(
    one_click: Harness,
    listener: UnsubscribeServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    h = one_click
    game_id = h.new_game((ALICE, BOB))
    path = f"/unsubscribe/{h.token(game_id, 1)}"
    monkeypatch.setattr(web, "REQUEST_DEADLINE", 1.0)
    start = time.monotonic()
    got = b""
    with socket.create_connection(("127.0.0.1", listener.port), timeout=5) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\n".encode())
        sock.settimeout(0.3)
        line = 0
        while time.monotonic() - start < 5:
            try:
                chunk = sock.recv(4096)
            except TimeoutError:  # nothing yet: one more header line, as slowly
                line += 1
                with contextlib.suppress(OSError):  # the listener may have closed
                    sock.sendall(f"X-Line-{line}: {line}\r\n".encode())
                continue
            if not chunk:
                break
            got += chunk
    took = time.monotonic() - start
    assert status_of(got) == 408 and 0.9 < took < 3, (got, took)
    assert line >= 2  # it did trickle past a read's worth of time
    player = h.player(B)
    assert player is not None and not player.stopped
    no_tracebacks(caplog, capfd)


def test_connections_beyond_the_cap_are_refused_at_once(
    one_click: Harness,
    listener: UnsubscribeServer,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    h = one_click
    game_id = h.new_game((ALICE, BOB))
    path = f"/unsubscribe/{h.token(game_id, 1)}"

    idle: list[socket.socket] = []
    try:
        # Every slot held, by several clients (each under its own cap).
        for k in range(web.MAX_CONNECTIONS):
            idle.append(connect_from(f"127.0.1.{k % 8 + 1}", listener.port))
        until(lambda: listener.active == web.MAX_CONNECTIONS)
        for _ in range(5):
            start = time.monotonic()
            with socket.create_connection(("127.0.0.1", listener.port), timeout=5) as sock:
                got = b""
                while chunk := sock.recv(4096):
                    got += chunk
            assert status_of(got) == 503 and time.monotonic() - start < 1
        assert listener.active == web.MAX_CONNECTIONS
    finally:
        for sock in idle:
            sock.close()
    until(lambda: listener.active == 0)
    assert request(listener, path)[0] == 200
    assert request(listener, path, ONE_CLICK)[0] == 200
    no_tracebacks(caplog, capfd)


def connect_from(source: str, port: int) -> socket.socket:
    """A connection to the listener from the loopback address ``source`` (every
    127.x.y.z is this host: a client address of its own)."""
    return socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))


def until(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 5
    while not check():
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_one_client_holding_sockets_starves_no_one(
    one_click: Harness, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    """70 idle sockets from one client hold `MAX_PER_CLIENT` slots; the rest are refused
    at once, and every other client's one-click unsubscribe is served meanwhile. With
    every slot held by many clients, ``/metrics`` still gets through on a slot of its
    own, and nothing else does."""
    h = one_click
    server = start_listener(h.service, "127.0.0.1:0", h.settings.unsubscribe_url, metrics=True)
    games = [h.new_game((ALICE, BOB)) for _ in range(3)]
    hostile: list[socket.socket] = []
    try:
        for _ in range(70):
            hostile.append(connect_from("127.0.0.2", server.port))
        until(lambda: server.active == web.MAX_PER_CLIENT)
        served = [request(server, f"/unsubscribe/{h.token(g, 1)}", ONE_CLICK) for g in games]
        assert [status for status, _ in served] == [200, 200, 200]
        assert h.player(BOB[0]).stopped  # type: ignore[union-attr]
        assert request(server, "/metrics")[0] == 200
        # Now every slot, from many clients.
        for k in range(web.MAX_CONNECTIONS - web.MAX_PER_CLIENT):
            hostile.append(connect_from(f"127.0.2.{k % 8 + 1}", server.port))
        until(lambda: server.active == web.MAX_CONNECTIONS)
        status, text = request(server, "/metrics")
        assert status == 200 and "pbem_" in text
        assert request(server, f"/unsubscribe/{h.token(games[0], 0)}")[0] == 503
        until(lambda: server.active == web.MAX_CONNECTIONS and server.reserved == 0)
    finally:
        for sock in hostile:
            sock.close()
        until(lambda: server.active == 0)
        server.stop()
    assert server.by_client == {} and server.reserved == 0
    no_tracebacks(caplog, capfd)


def test_head_answers_as_get_without_the_page(
    one_click: Harness, listener: UnsubscribeServer
) -> None:
    h = one_click
    game_id = h.new_game((ALICE, BOB))
    path = f"/unsubscribe/{h.token(game_id, 1)}"
    head = f"HEAD {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    answer, _ = exchange(listener, head)
    assert status_of(answer) == 200 and answer.endswith(b"\r\n\r\n")
    length = int(answer.split(b"Content-Length: ")[1].split(b"\r\n")[0])
    assert length == len(request(listener, path)[1].encode())
    answer, _ = exchange(listener, head.replace(path.encode(), b"/unsubscribe/" + b"a" * 20))
    assert status_of(answer) == 404 and answer.endswith(b"\r\n\r\n")
    player = h.player(B)
    assert player is not None and not player.stopped


def test_a_server_error_is_logged_once_and_answered_without_detail(
    one_click: Harness,
    listener: UnsubscribeServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    h = one_click
    game_id = h.new_game((ALICE, BOB))
    path = f"/unsubscribe/{h.token(game_id, 1)}"

    def broken(token: str) -> bool:
        raise RuntimeError("the database is gone")

    monkeypatch.setattr(h.service, "unsubscribe", broken)
    with caplog.at_level(logging.DEBUG, logger="pbem.web"):
        assert request(listener, path, ONE_CLICK) == (500, "Server error\n")
    failed = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(failed) == 1 and failed[0].exc_info is not None
    assert request(listener, path)[0] == 200  # and the listener goes on


# -- through the real pbem serve ---------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_pbem_serve_answers_the_one_click_and_stops_on_sigterm(one_click: Harness) -> None:
    h = one_click
    game_id = h.new_game((ALICE, BOB))
    token = h.token(game_id, 0)
    h.close()
    port = free_port()
    env = fresh_env()
    for key in ("data_dir", "database_url", "inbound_url", "outbound_url", "domain"):
        env[f"PBEM_{key.upper()}"] = str(getattr(h.settings, key))
    env["PBEM_UNSUBSCRIBE_URL"] = URL
    env["PBEM_HTTP_LISTEN"] = f"127.0.0.1:{port}"
    env["PBEM_POLL_SECONDS"] = "0.2"
    proc = start_pbem("serve", env=env, cwd=h.tmp_path)
    try:
        url = f"http://127.0.0.1:{port}/unsubscribe/{token}"
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, proc.communicate()
            try:
                with urllib.request.urlopen(url, timeout=5) as resp:  # GET: the page
                    assert resp.status == 200
                break
            except OSError:
                assert time.monotonic() < deadline, (
                    f"the listener never answered: {sys.exc_info()[1]!r}"
                )
                time.sleep(0.1)
        player = h.player(A)
        assert player is not None and not player.stopped
        with urllib.request.urlopen(url, ONE_CLICK, timeout=10) as resp:
            assert resp.status == 200
        player = h.player(A)
        assert player is not None and player.stopped
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            _out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _out, err = proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "INFO pbem.serve: stopped" in err
    assert "one-click unsubscribe on 127.0.0.1" in err
    assert token not in err and f"unsubscribed seat {token[:4]}…" in err
    with pytest.raises(OSError):  # the listener is gone
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def _accepted_nodelay(port: int, peer: tuple[str, int]) -> int:
    """TCP_NODELAY of the listener's end of the connection from ``peer`` (found among
    this process's descriptors: the listener serves in a thread of it)."""
    for name in os.listdir("/proc/self/fd"):
        try:
            sock = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue
        with sock:
            if sock.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            try:
                if sock.getsockname()[1] == port and sock.getpeername()[:2] == peer:
                    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            except OSError:
                continue
    raise AssertionError(f"no accepted connection from {peer}")


@SQLITE_ONLY
def test_accepted_connections_have_nagle_off(listener: UnsubscribeServer) -> None:
    with socket.create_connection(("127.0.0.1", listener.port), timeout=5) as client:
        peer = client.getsockname()[:2]
        deadline = time.monotonic() + 5
        while True:
            try:
                assert _accepted_nodelay(listener.port, peer) == 1
                break
            except AssertionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
