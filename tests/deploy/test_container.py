"""The image built from deploy/Dockerfile and run as deploy/compose.yaml defines its
services, with podman (deploy/image.sh installs it and makes the Debian base image).

One run covers every behaviour, because a container start is the expensive part: the
image is built (podman's layer cache makes a rebuild of unchanged sources take seconds);
compose's `db` service is the host's PostgreSQL (a database and role of the test's own,
reached as `db` by ``--add-host``); the other services are started with ``podman run``
exactly as compose.yaml defines them — environment, env file, volumes, command,
healthcheck, restart policy, `migrate` to completion first, then both `pbem` replicas —
on the host's network, where the real Postfix and Dovecot listen on loopback. A player
then plays a game to 61 against the computer by mail through the running containers; the
healthcheck fails before the schema exists and passes after; SIGTERM stops each worker
with exit status 0.
"""

from __future__ import annotations

import copy
import json
import re
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy.engine import URL, make_url
from sqlmodel import Session, col, select

from pbem.store import models as m
from pbem.store.db import make_engine
from tests.fixtures.db import _pg_admin
from tests.fixtures.mailstack import MailStack
from tests.fixtures.realmail import RealPlayer, new_player

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
IMAGE = "localhost/" + COMPOSE["services"]["pbem"]["image"]
"""The image as compose names it (podman qualifies a bare name with localhost/)."""
STOP_WITHIN = 15.0

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def _podman(*args: str, timeout: float = 120.0, check: bool = True) -> str:
    done = subprocess.run(
        ["podman", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"podman {args[0]} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


@pytest.fixture(scope="module")
def image() -> str:
    """The image of this checkout, built on the Debian base by deploy/image.sh and tagged
    as compose.yaml's services name it."""
    bash = shutil.which("bash") or "/bin/bash"
    done = subprocess.run(
        [bash, str(DEPLOY / "image.sh"), "build", IMAGE],
        capture_output=True,
        text=True,
        timeout=560,  # within pytest's 600 s: tools, base image and a first build
        check=False,
        stdin=subprocess.DEVNULL,
    )
    tail = "\n".join(done.stderr.strip().splitlines()[-20:])
    assert done.returncode == 0, f"deploy/image.sh build failed:\n{tail}"
    return IMAGE


# -- compose.yaml, as a compose implementation reads it ---------------------------------

_VARIABLE = re.compile(r"\$\{(\w+)(?::\?([^}]*))?\}")


def interpolate(value: str, env: Mapping[str, str]) -> str:
    """Compose's ``${VAR}`` and ``${VAR:?message}`` (set and non-empty, or the message)."""

    def one(match: re.Match[str]) -> str:
        name, message = match.group(1), match.group(2)
        found = env.get(name, "")
        if message is not None and not found:
            raise ValueError(f"{name}: {message}")
        return found

    return _VARIABLE.sub(one, value)


def read_env_file(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


@dataclass(frozen=True)
class Project:
    """A compose project: its folder (compose.yaml's relative paths start there), its name
    (prefix of containers and named volumes) and the variables of its .env."""

    folder: Path
    name: str
    env: dict[str, str]


def run_args(
    project: Project, service: dict[str, Any], *, replica: int = 1
) -> tuple[str, list[str]]:
    """The container's name and the ``podman run`` arguments for one replica of a compose
    service: everything compose.yaml says of it, on this machine's run flags."""
    name = f"{project.name}-{service['__name__']}-{replica}"
    args = ["--name", name, *_run_flags(), "--add-host", "db:127.0.0.1"]
    for env_file in service.get("env_file", []):
        args += ["--env-file", str(project.folder / env_file)]
    for key, value in service.get("environment", {}).items():
        args += ["--env", f"{key}={interpolate(str(value), project.env)}"]
    for volume in service.get("volumes", []):
        source, _, target = volume.partition(":")
        if source.startswith("."):
            source = str((project.folder / source).resolve())
        else:  # a named volume, per project
            source = f"{project.name}_{source}"
        args += ["--volume", f"{source}:{target}"]
    health = service.get("healthcheck")
    if health:
        test = health["test"]
        assert test[0] == "CMD", test
        # The interval runs on systemd timers, which a machine without systemd lacks:
        # the check is run by `podman healthcheck run` instead.
        args += ["--health-cmd", json.dumps(test[1:]), "--health-interval", "disable"]
        args += ["--health-retries", str(health["retries"])]
        args += ["--health-timeout", health["timeout"]]
        args += ["--health-start-period", health["start_period"]]
    if service.get("restart"):
        args += ["--restart", service["restart"]]
    return name, [*args, "localhost/" + service["image"], *service["command"]]


def _run_flags() -> list[str]:
    done = subprocess.run(
        ["bash", str(DEPLOY / "image.sh"), "run-flags"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


# -- the fixtures of one run ----------------------------------------------------------


@dataclass
class Stack:
    """The compose project on this machine: services, database, service mailbox."""

    project: Project
    services: dict[str, dict[str, Any]]
    db_url: str
    mailstack: MailStack


@pytest.fixture
def stack(image: str, pg_admin_url: URL, mailstack: MailStack, tmp_path: Path) -> Iterator[Stack]:
    """The compose project in ``tmp_path`` with its .env and pbem.toml, its database and
    the service's mailbox; afterwards its containers, volumes, database and role are gone."""
    # The services share their x-pbem anchor's mappings: a copy each.
    services: dict[str, dict[str, Any]] = {
        name: copy.deepcopy(service) for name, service in COMPOSE["services"].items()
    }
    for name, service in services.items():
        service["__name__"] = name
        if "build" in service:
            assert "localhost/" + service["image"] == image
    token = secrets.token_hex(4)
    # deploy/.env and deploy/pbem.toml, as the README has the admin copy and fill them.
    password = "Pw" + secrets.token_hex(8)
    example = (DEPLOY / ".env.example").read_text(encoding="utf-8")
    (tmp_path / ".env").write_text(
        re.sub(r"^POSTGRES_PASSWORD=.*$", f"POSTGRES_PASSWORD={password}", example, flags=re.M),
        encoding="utf-8",
    )
    env = read_env_file(tmp_path / ".env")
    project = Project(tmp_path, f"pbem-test-{token}", env)
    address, secret = mailstack.new_user("svc")
    local, _, domain = address.partition("@")
    (tmp_path / "pbem.toml").write_text(
        "[pbem]\n"
        f'inbound_url = "{mailstack.imap_url(address, secret)}"\n'
        f'outbound_url = "{mailstack.smtp_url(address, secret)}"\n'
        f'domain = "{domain}"\nlocal_part = "{local}"\n'
        "outbox_backoff_seconds = 1\n",
        encoding="utf-8",
    )
    (tmp_path / "pbem.toml").chmod(0o644)  # read by the container's user pbem
    # Compose's `db` service: a role and a database named as the compose URL names them,
    # made unique for this test, with the password of .env.
    role = database = f"pbem_ctr_{token}"
    try:
        _pg_admin(pg_admin_url, f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'")
        _pg_admin(pg_admin_url, f'CREATE DATABASE "{database}" OWNER "{role}"')
        host_url = ""
        for name in ("migrate", "pbem"):
            environment = services[name]["environment"]
            url = make_url(interpolate(environment["PBEM_DATABASE_URL"], env))
            assert (url.username, url.host, url.database) == ("pbem", "db", "pbem")
            url = url.set(username=role, database=database)
            environment["PBEM_DATABASE_URL"] = url.render_as_string(False)
            host_url = url.set(host="127.0.0.1").render_as_string(False)
        yield Stack(project, services, host_url, mailstack)
    finally:
        for line in _podman("ps", "-a", "--format", "{{.Names}}").split():
            if line.startswith(project.name + "-"):
                _podman("rm", "--force", "--time", "0", line, check=False)
        for line in _podman("volume", "ls", "--format", "{{.Name}}").split():
            if line.startswith(project.name + "_"):
                _podman("volume", "rm", "--force", line, check=False)
        _pg_admin(pg_admin_url, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        _pg_admin(pg_admin_url, f'DROP ROLE IF EXISTS "{role}"')


def _health(name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", "healthcheck", "run", name],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _play(player: RealPlayer, stack: Stack, game_id: int, timeout: float = 120.0) -> None:
    """The player reads and answers its mail until the game is finished and every mail
    is sent (AssertionError after ``timeout``)."""
    db = make_engine(stack.db_url)
    deadline = time.monotonic() + timeout
    try:
        while True:
            with Session(db) as session:
                row = session.get(m.Game, game_id)
                assert row is not None
                status = row.status
                pending = session.exec(select(m.Outbox).where(col(m.Outbox.status) != "sent")).all()
            if status == "finished" and not pending:
                return
            assert time.monotonic() < deadline, f"game {game_id} still {status} by mail"
            if not player.play():
                time.sleep(0.2)
    finally:
        db.dispose()


def test_the_image_serves_a_game_by_mail_as_compose_runs_it(stack: Stack) -> None:
    services, project = stack.services, stack.project
    # The image keeps what the Dockerfile says of running it (podman builds it in the
    # docker format: the OCI format has no healthcheck).
    (built,) = json.loads(_podman("image", "inspect", IMAGE))
    assert built["Healthcheck"]["Test"] == services["pbem"]["healthcheck"]["test"]
    assert built["Config"]["User"] == "pbem:pbem"
    assert built["Config"]["Cmd"] == ["pbem", "serve"]
    assert "/var/lib/pbem" in built["Config"]["Volumes"]
    assert built["Config"]["StopSignal"] == "SIGTERM"
    migrate, pbem = services["migrate"], services["pbem"]
    assert migrate["depends_on"]["db"] == {"condition": "service_healthy"}
    assert pbem["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}

    # Before `migrate`, the pbem service's healthcheck fails: the schema is missing.
    name, args = run_args(project, pbem, replica=0)
    _podman("run", "--detach", *args)
    early = _health(name)
    assert early.returncode != 0, early.stdout + early.stderr
    _podman("rm", "--force", "--time", "0", name)

    # `migrate` runs to completion (service_completed_successfully: exit status 0).
    name, args = run_args(project, migrate)
    _podman("run", *args, timeout=180)
    state = json.loads(_podman("inspect", name))[0]["State"]
    assert state["ExitCode"] == 0
    _podman("rm", name)

    # Then every replica of the pbem service, each healthy.
    replicas = pbem["deploy"]["replicas"]
    assert replicas == 2
    names = []
    for replica in range(1, replicas + 1):
        name, args = run_args(project, pbem, replica=replica)
        _podman("run", "--detach", *args)
        names.append(name)
    for name in names:
        assert _podman("exec", name, "id", "-un").strip() == "pbem"
        done = _health(name)
        assert done.returncode == 0, done.stdout + done.stderr

    # The admin starts a game in a worker; a player plays it to the end by mail.
    alice = new_player(stack.mailstack, "alice", "Alice")
    try:
        new = ["pbem", "game", "new", f"Alice={alice.address}", "--computer", "--to", "61"]
        made = re.match(r"game (\d+) started", _podman("exec", names[0], *new))
        assert made, "no game started"
        game_id = int(made.group(1))
        _play(alice, stack, game_id)
    finally:
        alice.close()
    verified = _podman("exec", names[1], "pbem", "verify", "--game", str(game_id))
    assert "deals verified" in verified, verified

    # SIGTERM (podman stop, as compose down) stops each worker cleanly, at once.
    for name in names:
        started = time.monotonic()
        _podman("stop", "--time", str(int(STOP_WITHIN) + 15), name, timeout=60)
        seconds = time.monotonic() - started
        state = json.loads(_podman("inspect", name))[0]["State"]
        logs = subprocess.run(
            ["podman", "logs", name], capture_output=True, text=True, check=True
        ).stderr
        assert state["ExitCode"] == 0, logs
        assert seconds < STOP_WITHIN, seconds
        assert "INFO pbem.serve: stopped" in logs and "Traceback" not in logs, logs
        _podman("rm", name)


def test_compose_refuses_to_run_the_service_without_a_database_password(tmp_path: Path) -> None:
    """``${POSTGRES_PASSWORD:?…}``: with .env's password empty, neither pbem service
    can be started (compose stops with the message; so does `run_args` here)."""
    (tmp_path / ".env").write_text("POSTGRES_PASSWORD=\n", encoding="utf-8")
    project = Project(tmp_path, "pbem-test-nopassword", read_env_file(tmp_path / ".env"))
    for name in ("migrate", "pbem"):
        service = {**COMPOSE["services"][name], "__name__": name}
        with pytest.raises(ValueError, match=re.escape("set POSTGRES_PASSWORD in deploy/.env")):
            run_args(project, service)


def test_image_sh_refuses_an_unknown_command_and_names_the_run_flags() -> None:
    script = str(DEPLOY / "image.sh")
    done = subprocess.run(["bash", script, "bilud"], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "unknown command: bilud (setup | build [TAG] | run-flags)" in done.stderr
    flags = subprocess.run(
        ["bash", script, "run-flags"], capture_output=True, text=True, check=True
    )
    assert flags.stdout.split() == [
        "--runtime",
        "runc",
        "--network",
        "host",
        "--ulimit",
        "nofile=4096:4096",
        "--ulimit",
        "nproc=4096:4096",
    ]
