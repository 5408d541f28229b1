"""What ``pbem serve`` tells the operator: its start, each message, each delivery, its stop.

The real program in a subprocess, on Maildir folders and both databases; its stderr is
read as an operator (or a log shipper, with ``--log-format json``) would read it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from email import message_from_bytes
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from pbem.logsetup import mask_secrets
from pbem.store.db import make_engine
from tests.cli_process import PBEM, start_pbem
from tests.e2e.helpers import fresh_env, plain_mail, read_maildir, reply

PASSWORD = "s3cret-pw"
DOMAIN = "pbem.test"


def _env(tmp_path: Path, db_url: str, **settings: str) -> dict[str, str]:
    env = {**fresh_env(), "PBEM_DATA_DIR": str(tmp_path / "data"), "PBEM_DOMAIN": DOMAIN}
    env["PBEM_DATABASE_URL"] = db_url
    env.update({f"PBEM_{k.upper()}": v for k, v in settings.items()})
    return env


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PBEM, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=env["PBEM_DATA_DIR"].rsplit("/", 1)[0],
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _url_with_password(db_url: str) -> str:
    """On PostgreSQL (trust authentication: any password does) the URL gets a password,
    so the test can look for it in the logs; a SQLite URL has none to give."""
    url = make_url(db_url)
    if url.get_backend_name() != "postgresql":
        return db_url
    return url.set(password=PASSWORD).render_as_string(hide_password=False)


def _tokens(db_url: str) -> list[str]:
    engine = make_engine(db_url)
    try:
        with engine.connect() as connection:
            return [row[0] for row in connection.execute(text("SELECT token FROM seat"))]
    finally:
        engine.dispose()


def _deliver(data: Path, raw: bytes, name: str) -> None:
    for sub in ("new", "cur", "tmp"):
        (data / "inbox" / sub).mkdir(parents=True, exist_ok=True)
    (data / "inbox" / "new" / name).write_bytes(raw)


def _json_lines(stderr: str) -> list[dict[str, Any]]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines, "no log lines"
    return [json.loads(line) for line in lines]  # every line is one JSON object


def test_serve_logs_its_start_every_message_and_delivery_without_secrets(
    tmp_path: Path, db_url: str
) -> None:
    env = _env(tmp_path, _url_with_password(db_url))
    data = tmp_path / "data"
    assert _run(env, "init").returncode == 0
    started = _run(env, "game", "new", "alice@example.com", "bob@example.com", "--seed", "log")
    assert started.returncode == 0, started.stderr

    first = _run(env, "serve", "--once")
    assert first.returncode == 0, first.stderr
    lines = first.stderr.splitlines()
    assert " INFO pbem.serve: pbem " in lines[0] and f"for {DOMAIN}" in lines[0]
    assert "database " in lines[0] and "inbox maildir:" in lines[0]
    assert "outbox maildir:" in lines[0]
    sent = [line for line in lines if "pbem.outbox: outbox" in line]
    assert sent == [line for line in lines if "INFO pbem.outbox: outbox: 2 sent" in line]
    assert len(sent) == 1, first.stderr  # one line for the drain, the mails at debug level

    # Alice asks for her hand; a stranger writes too.
    ((_, alice_mail),) = read_maildir(data / "outbox" / "alice@example.com")
    original = message_from_bytes(alice_mail)
    _deliver(data, reply(original, "alice@example.com", "Alice", "hand"), "1.alice")
    stranger = plain_mail("eve@evil.test", f"cribbage@{DOMAIN}", "play 5h")
    _deliver(data, stranger, "2.eve")

    second = _run(env, "-v", "serve", "--once", "--log-format", "json")
    assert second.returncode == 0, second.stderr
    records = _json_lines(second.stderr)
    for record in records:
        assert {"ts", "level", "logger", "msg"} <= set(record)
        assert record["logger"].startswith("pbem"), record  # no library noise under -v
    start = records[0]
    assert start["logger"] == "pbem.serve" and start["domain"] == DOMAIN and start["version"]
    inbound = {r["sender"]: r for r in records if "outcome" in r}
    assert set(inbound) == {"alice@example.com", "eve@evil.test"}, records
    assert inbound["alice@example.com"]["outcome"] == "applied"
    assert inbound["alice@example.com"]["game"] == 1
    assert inbound["eve@evil.test"]["outcome"] == "ignored"
    assert "unknown sender" in inbound["eve@evil.test"]["reason"]
    assert inbound["alice@example.com"]["inbound"] != inbound["eve@evil.test"]["inbound"]
    deliveries = [r for r in records if "result" in r]
    assert deliveries and all(r["result"] == "sent" and r["attempt"] == 1 for r in deliveries)
    assert {r["level"] for r in deliveries} == {"DEBUG"}
    drains = [r for r in records if "deliveries" in r]
    assert [r["deliveries"] for r in drains] == [{"sent": len(deliveries)}]
    assert deliveries[0]["recipient"] == "alice@example.com" and deliveries[0]["game"] == 1
    assert any(r["level"] == "DEBUG" for r in records)  # -v: our own DEBUG lines

    everything = first.stderr + second.stderr
    tokens = _tokens(db_url)
    assert len(tokens) == 2
    for token in tokens:
        assert token not in everything
    assert PASSWORD not in everything
    if make_url(db_url).get_backend_name() == "postgresql":
        assert ":***@" in start["database"]


def test_secrets_are_masked_in_any_line() -> None:
    line = "to cribbage+abcdefgh23456789wxyz@pbem.test <g1.s2.abcdefgh23456789wxyz@pbem.test>"
    assert mask_secrets(line) == "to cribbage+…@pbem.test <g1.s2.…@pbem.test>"
    assert mask_secrets("imap://bob:pa55@host:993/INBOX") == "imap://bob:***@host:993/INBOX"
    assert mask_secrets("alice@example.com, game 3") == "alice@example.com, game 3"


@pytest.mark.parametrize(
    ("args", "settings", "shown", "hidden"),
    [
        pytest.param((), {}, " INFO pbem.", " DEBUG ", id="default-info"),
        pytest.param((), {"log_level": "warning"}, None, " INFO ", id="setting"),
        pytest.param(("-v",), {"log_level": "ERROR"}, " DEBUG pbem.", " DEBUG sqlalchemy", id="v"),
    ],
)
def test_the_log_level_setting_and_v(
    tmp_path: Path, args: tuple[str, ...], settings: dict[str, str], shown: str | None, hidden: str
) -> None:
    env = _env(tmp_path, f"sqlite:///{tmp_path / 'pbem.sqlite'}", **settings)
    (tmp_path / "data").mkdir()
    assert _run(env, "init").returncode == 0
    assert _run(env, "game", "new", "a@example.com", "b@example.com").returncode == 0
    done = _run(env, *args, "serve", "--once")
    assert done.returncode == 0, done.stderr
    if shown is None:
        assert done.stderr == ""
    else:
        assert shown in done.stderr
    assert hidden not in done.stderr


def test_a_bad_log_level_is_one_clear_line(tmp_path: Path) -> None:
    env = _env(tmp_path, f"sqlite:///{tmp_path / 'pbem.sqlite'}", log_level="LOUD")
    (tmp_path / "data").mkdir()
    done = _run(env, "serve", "--once")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "log_level" in done.stderr
    assert "DEBUG, INFO, WARNING, ERROR or CRITICAL" in done.stderr


def test_sigterm_stops_a_running_serve_with_an_info_line_and_exit_0(
    tmp_path: Path, db_url: str
) -> None:
    env = _env(tmp_path, db_url, poll_seconds="60")
    (tmp_path / "data").mkdir()
    assert _run(env, "init").returncode == 0
    daemon = start_pbem("serve", env=env, cwd=tmp_path)
    try:
        assert daemon.stderr is not None
        first = daemon.stderr.readline()  # the start line: the daemon is up
        assert " INFO pbem.serve: pbem " in first, first
        time.sleep(0.5)  # now waiting for mail
        os.kill(daemon.pid, signal.SIGTERM)
        _, rest = daemon.communicate(timeout=20)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.communicate()
    assert daemon.returncode == 0, rest
    assert "INFO pbem.serve: SIGTERM: stopping after the current step" in rest
    assert rest.rstrip().endswith("INFO pbem.serve: stopped"), rest
    assert " WARNING " not in rest and " ERROR " not in rest and "Traceback" not in rest
