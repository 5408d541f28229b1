"""``/metrics``: what the daemon counts (messages by outcome, moves, deliveries by
result, transport errors, the wait before processing) and the queues it reads, by name
and value; who may read it; and the real ``pbem serve`` answering a scrape."""

from __future__ import annotations

import signal
import socket
import subprocess
import time
import urllib.request
from datetime import timedelta
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from pbem.listen.metrics import metrics_allowed, metrics_text
from pbem.listen.wire import Request
from pbem.service import Service
from tests.cli_process import start_pbem
from tests.e2e.helpers import (
    ALICE,
    BOB,
    STRANGER,
    Harness,
    cli_env,
    fresh_env,
    plain_mail,
    reply,
    run_cli,
)
from tests.e2e.test_outbox_delivery import install
from tests.pbem.ops_helpers import sqlite_harness

A, B = ALICE[0], BOB[0]

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]

NAMES = {
    "pbem_messages_total",
    "pbem_moves_total",
    "pbem_deliveries_total",
    "pbem_transport_errors_total",
    "pbem_message_wait_seconds_bucket",
    "pbem_message_wait_seconds_sum",
    "pbem_message_wait_seconds_count",
    "pbem_outbox_queue_depth",
    "pbem_outbox_oldest_due_seconds",
    "pbem_inbound_pending",
    "pbem_outbox_oldest_queued_seconds",
    "pbem_transport_failing",
    "pbem_delivery_failures_total",
    "pbem_reminders_total",
    "pbem_timeouts_total",
    "pbem_games_aborted_total",
    "pbem_build_info",
    "pbem_start_time_seconds",
}


def parse(text: str) -> Samples:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if not sample.name.endswith("_created")
    }


def scrape(service: Service) -> Samples:
    return parse(metrics_text(service))


def delta(after: Samples, before: Samples, name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after[key] - before.get(key, 0.0)


def discard_two(h: Harness, game_id: int, seat: int) -> bytes:
    cards = sorted(h.game(game_id).holding(seat))[:2]
    address = h.address_of(game_id, seat)
    return reply(h.latest(address), address, "x", "discard " + " ".join(c.ascii for c in cards))


def test_the_metrics_count_what_the_daemon_does(harness: Harness) -> None:
    h = harness
    first = scrape(h.service)
    assert {name for name, _ in first} == NAMES
    for outcome in ("applied", "rejected", "ignored", "failed"):  # every series from the start
        assert ("pbem_messages_total", (("outcome", outcome),)) in first

    # The game's first mails are deferred once (the transport fails), then sent.
    install(h, ["temporary"])
    game_id = h.new_game(seed="metrics")
    now = scrape(h.service)
    assert delta(now, first, "pbem_deliveries_total", result="deferred") == 2
    assert delta(now, first, "pbem_transport_errors_total", transport="outbox") == 1
    assert now[("pbem_outbox_queue_depth", ())] == 2
    assert now[("pbem_outbox_oldest_due_seconds", ())] == 0  # not due yet
    h.clock.advance(timedelta(minutes=10))
    due = {r.next_attempt_at for r in h.outbox()}
    waited = (h.clock.now - min(due)).total_seconds()
    assert 0 < scrape(h.service)[("pbem_outbox_oldest_due_seconds", ())] - waited < 1
    h.step()
    now = scrape(h.service)
    assert delta(now, first, "pbem_deliveries_total", result="sent") == 2
    assert now[("pbem_outbox_queue_depth", ())] == 0
    assert now[("pbem_outbox_oldest_due_seconds", ())] == 0

    # A move stored (as LMTP stores it) that waits 7 s, a refused one, a stranger's mail.
    before = now
    h.service.receive(discard_two(h, game_id, 0), "lmtp")
    h.clock.advance(timedelta(seconds=7))
    assert scrape(h.service)[("pbem_inbound_pending", ())] == 1
    h.step()
    h.answer(A, "play 5h")  # not the time to play
    h.deliver(plain_mail(STRANGER, "cribbage@pbem.test", "play 5h", subject="hello"))
    after = scrape(h.service)
    assert delta(after, before, "pbem_messages_total", outcome="applied") == 1
    assert delta(after, before, "pbem_messages_total", outcome="rejected") == 1
    assert delta(after, before, "pbem_messages_total", outcome="ignored") == 1
    assert delta(after, before, "pbem_messages_total", outcome="failed") == 0
    assert delta(after, before, "pbem_moves_total") == 1
    assert delta(after, before, "pbem_message_wait_seconds_count") == 3
    assert delta(after, before, "pbem_message_wait_seconds_bucket", le="5.0") == 2
    assert delta(after, before, "pbem_message_wait_seconds_bucket", le="10.0") == 3
    assert 7 <= delta(after, before, "pbem_message_wait_seconds_sum") < 8

    # Mail that fails for good.
    before = after
    install(h, ["permanent"])
    h.deliver(discard_two(h, game_id, 1))
    after = scrape(h.service)
    failed = [r for r in h.outbox() if r.status == "failed"]
    assert failed and delta(after, before, "pbem_deliveries_total", result="failed") == len(failed)
    # The one mail sent: the other player told that the game waits for the failed one.
    assert delta(after, before, "pbem_deliveries_total", result="sent") == 1


def request(port: int, path: str = "/metrics", **headers: str) -> tuple[int, str, str]:
    named = {name.replace("_", "-"): value for name, value in headers.items()}
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=named)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read().decode()


def test_who_may_read_the_metrics() -> None:
    def allowed(peer: str, token: str = "", **headers: str) -> bool:
        given = tuple((k.lower().replace("_", "-"), v) for k, v in headers.items())
        return metrics_allowed(Request("GET", "/metrics", b"", given, peer), token)

    assert allowed("127.0.0.1") and allowed("::1") and allowed("::ffff:127.0.0.1")
    assert not allowed("192.0.2.7") and not allowed("")
    # A reverse proxy on this host makes every client look local: not enough.
    assert not allowed("127.0.0.1", x_forwarded_for="192.0.2.7")
    assert not allowed("127.0.0.1", forwarded="for=192.0.2.7")
    assert allowed("192.0.2.7", "s3cret", authorization="Bearer s3cret")
    assert allowed("127.0.0.1", "s3cret", x_forwarded_for="x", authorization="Bearer s3cret")
    assert not allowed("192.0.2.7", "s3cret", authorization="Bearer wrong")
    assert not allowed("127.0.0.1", "s3cret", authorization="Bearer wrong")
    assert not allowed("192.0.2.7", "", authorization="Bearer ")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_pbem_serve_answers_a_scrape(tmp_path: Path, _sqlite_template: Path) -> None:
    h = sqlite_harness(tmp_path, _sqlite_template, fair_deals=False)  # one backend will do
    game_id = h.new_game(seed="metrics-serve")
    h.send(discard_two(h, game_id, 0))  # waiting in the inbox when serve starts
    h.close()
    port = free_port()
    env = fresh_env()
    for key in ("data_dir", "database_url", "inbound_url", "outbound_url", "domain"):
        env[f"PBEM_{key.upper()}"] = str(getattr(h.settings, key))
    env.update(
        PBEM_METRICS="true",
        PBEM_METRICS_TOKEN="s3cret",
        PBEM_HTTP_LISTEN=f"127.0.0.1:{port}",
        PBEM_POLL_SECONDS="0.2",
    )
    proc = start_pbem("serve", env=env, cwd=h.tmp_path)
    samples: Samples = {}
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.communicate()
            try:
                status, kind, text = request(port)
                samples = parse(text)
                if samples[("pbem_messages_total", (("outcome", "applied"),))] == 1:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"no scrape counted the move: {samples}"
            time.sleep(0.2)
        assert status == 200 and kind == "text/plain; version=0.0.4; charset=utf-8"
        assert {name for name, _ in samples} == NAMES
        assert samples[("pbem_moves_total", ())] == 1
        assert samples[("pbem_message_wait_seconds_count", ())] == 1
        assert samples[("pbem_inbound_pending", ())] == 0
        # Through a proxy, only with the token; the unsubscribe is off.
        assert request(port, x_forwarded_for="192.0.2.7")[0] == 403
        assert request(port, x_forwarded_for="192.0.2.7", authorization="Bearer s3cret")[0] == 200
        assert request(port, "/unsubscribe/abcdefgh12345678")[0] == 404
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            _out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _out, err = proc.communicate()
    h.db.dispose()
    assert proc.returncode == 0, err
    assert f"metrics on http://127.0.0.1:{port}/metrics (loopback, or the metrics_token)" in err
    assert "s3cret" not in err


def test_pbem_config_masks_the_metrics_token(tmp_path: Path) -> None:
    env = cli_env(tmp_path, None, metrics="true", metrics_token="s3cret")
    result = run_cli(env, "config")
    assert result.exit_code == 0 and "s3cret" not in result.stdout
    assert "metrics_token" in result.stdout
