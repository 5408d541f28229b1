"""deploy/: the invariants of the Dockerfile, the compose file and the systemd unit that
matter for a safe deployment (no container engine here to build them: these are read)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
HEALTH_PREFIX = "from pbem.config import load_settings"


def _instructions(path: Path) -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuations joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        keyword, _, rest = line.partition(" ")
        out.append((keyword.upper(), rest.strip()))
    assert not pending, "a continued line at the end of the Dockerfile"
    return out


def _stages(path: Path) -> list[list[tuple[str, str]]]:
    """The build stages; the global ARGs before the first FROM are stage 0's."""
    stages: list[list[tuple[str, str]]] = [[]]
    for keyword, rest in _instructions(path):
        if keyword == "FROM":
            stages.append([])
        assert len(stages) > 1 or keyword == "ARG", "an instruction before the first FROM"
        stages[-1].append((keyword, rest))
    return stages[1:]


def _global_args(path: Path) -> list[str]:
    args: list[str] = []
    for keyword, rest in _instructions(path):
        if keyword == "FROM":
            return args
        args.append(rest)
    return args


def _health_command(stage: list[tuple[str, str]]) -> list[str]:
    (health,) = [rest for keyword, rest in stage if keyword == "HEALTHCHECK"]
    return json.loads(health[health.index("CMD") + 3 :])


def test_the_image_is_built_in_two_stages_and_runs_pbem_serve_as_a_plain_user() -> None:
    build, runtime = _stages(DEPLOY / "Dockerfile")
    # One base for both stages: python:3.11-slim unless the build says otherwise (the
    # tests build on a Debian bookworm of their own: tests/deploy/test_container.py).
    assert _global_args(DEPLOY / "Dockerfile") == ["BASE=python:3.11-slim"]
    assert build[0] == ("FROM", "${BASE} AS build")
    assert runtime[0] == ("FROM", "${BASE}")
    # Python lives in the venv /opt/pbem on either base, first on PATH in both stages.
    for stage in (build, runtime):
        envs = " ".join(rest for keyword, rest in stage if keyword == "ENV")
        assert "PATH=/opt/pbem/bin:$PATH" in envs
        assert any("-m venv /opt/pbem" in rest for keyword, rest in stage if keyword == "RUN")
    build_runs = " ".join(rest for keyword, rest in build if keyword == "RUN")
    assert "pip wheel" in build_runs
    # Every source the build stage copies exists, and so builds see all the package needs.
    copied = [rest.split()[:-1] for keyword, rest in build if keyword == "COPY"]
    sources = {name for names in copied for name in names}
    assert {"pyproject.toml", "setup.py", "MANIFEST.in", "engine", "pbem", "templates"} <= sources
    for name in sources:
        assert (ROOT / name).exists(), name

    # The runtime stage installs the built wheels, offline, while the image is built.
    runs = [rest for keyword, rest in runtime if keyword == "RUN"]
    installs = [run for run in runs if "pip install" in run]
    assert installs and all("--no-index" in run and "from=build" in run for run in installs)

    users = [rest for keyword, rest in runtime if keyword == "USER"]
    assert users, "the image runs as root"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    assert [k for k, _ in runtime].index("USER") < [k for k, _ in runtime].index("CMD")
    assert ("VOLUME", '["/var/lib/pbem"]') in runtime
    assert ("CMD", '["pbem", "serve"]') in runtime
    for keyword, rest in runtime:
        if keyword in ("CMD", "ENTRYPOINT"):
            assert "pip" not in rest, rest
    assert _health_command(runtime)[:2] == ["python", "-c"]
    dockerignore = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert ".git" in dockerignore and "deploy/.env" in dockerignore


def test_compose_runs_the_image_against_postgres_with_a_password_and_healthchecks() -> None:
    text = (DEPLOY / "compose.yaml").read_text(encoding="utf-8")
    compose = yaml.safe_load(text)
    assert "trust" not in text.lower()
    services = compose["services"]
    db, migrate, pbem = services["db"], services["migrate"], services["pbem"]

    assert db["image"].startswith("postgres:")
    assert ".env" in db["env_file"]
    assert "POSTGRES_PASSWORD" not in db.get("environment", {})
    assert "POSTGRES_HOST_AUTH_METHOD" not in db.get("environment", {})
    example = (DEPLOY / ".env.example").read_text(encoding="utf-8")
    assert re.search(r"^POSTGRES_PASSWORD=\S+$", example, re.MULTILINE)

    for service in (migrate, pbem):
        assert service["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}
        assert (DEPLOY / service["build"]["context"] / service["build"]["dockerfile"]).is_file()
        url = service["environment"]["PBEM_DATABASE_URL"]
        assert url.startswith("postgresql+psycopg://pbem:${POSTGRES_PASSWORD:?")
        assert url.endswith("@db:5432/pbem")
        assert "pip" not in json.dumps(service["command"])
        assert service["depends_on"]["db"] == {"condition": "service_healthy"}
    assert migrate["command"] == ["pbem", "init"]
    assert pbem["command"] == ["pbem", "serve"]
    assert pbem["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}

    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    health = pbem["healthcheck"]["test"]
    assert health[0] == "CMD" and health[1:3] == ["python", "-c"]
    assert health[1:] == _health_command(_stages(DEPLOY / "Dockerfile")[-1])
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert "/deploy/.env" in ignored


def _health(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = _health_command(_stages(DEPLOY / "Dockerfile")[-1])
    assert command[0] == "python"
    return subprocess.run(
        [sys.executable, *command[1:]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_healthcheck_passes_only_on_a_ready_database(tmp_path: Path, db_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env.update(PBEM_DATA_DIR=str(tmp_path), PBEM_DATABASE_URL=db_url)
    pbem = shutil.which("pbem")
    assert pbem
    if db_url.startswith("sqlite"):
        assert _health(tmp_path, env).returncode != 0  # no schema yet
    init = subprocess.run(
        [pbem, "init"], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert init.returncode == 0, init.stderr
    done = _health(tmp_path, env)
    assert done.returncode == 0, done.stderr
    down = {**env, "PBEM_DATABASE_URL": "postgresql://pbem@127.0.0.1:1/pbem"}
    assert _health(tmp_path, down).returncode != 0


# -- systemd --------------------------------------------------------------------------


def _unit() -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for line in (DEPLOY / "pbem.service").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            values.setdefault(key, []).append(value)
    return values


def test_the_systemd_unit_is_hardened() -> None:
    unit = _unit()
    assert unit["User"] == ["pbem"] or unit.get("DynamicUser") == ["yes"]
    assert unit["StateDirectory"] == ["pbem"]
    assert unit["Environment"] == [
        "PBEM_CONFIG=/etc/pbem/pbem.toml",
        "PBEM_DATA_DIR=/var/lib/pbem",
    ]
    assert unit["ReadWritePaths"] == ["/var/lib/pbem"]
    assert shlex.split(unit["ExecStart"][0])[1:] == ["serve"]
    expected = {
        "Restart": "on-failure",
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "PrivateDevices": "yes",
        "CapabilityBoundingSet": "",
        "RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6",
        "SystemCallFilter": "@system-service",
    }
    for key, value in expected.items():
        assert unit.get(key) == [value], key


def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.fail("systemd-analyze is missing (deploy/test.sh installs the systemd package)")
    pbem = shutil.which("pbem")
    assert pbem
    # The same unit with ExecStart pointing at this machine's pbem (verify checks it exists).
    text = (DEPLOY / "pbem.service").read_text(encoding="utf-8")
    unit = tmp_path / "pbem.service"
    unit.write_text(text.replace("/opt/pbem/venv/bin/pbem", pbem), encoding="utf-8")
    done = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # Unknown or misspelt settings are only warned about: there must be none.
    assert done.stdout.strip() == "" and done.stderr.strip() == "", done.stdout + done.stderr


# -- the README's walk-through on the local mail stack ---------------------------------


def _readme_block(language: str, after: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(after) :]
    match = re.search(rf"```{language}\n(.*?)```", section, re.DOTALL)
    assert match, f"no {language} block after {after!r}"
    return match.group(1)


def test_the_readmes_mail_server_configuration_matches_the_stack(tmp_path: Path) -> None:
    from pbem.config import load_settings
    from pbem.transport.urls import ImapConfig, SmtpConfig, parse_inbound, parse_outbound

    heading = "### Try it with a real mail server"
    config = tmp_path / "pbem.toml"
    config.write_text(_readme_block("toml", heading), encoding="utf-8")
    settings = load_settings(config)
    assert settings.address == "cribbage@pbem.test"
    inbound, outbound = parse_inbound(settings.inbound), parse_outbound(settings.outbound)
    assert isinstance(inbound, ImapConfig) and isinstance(outbound, SmtpConfig)
    # deploy/mailstack.sh's defaults and the mailbox the README adds for the service.
    script = (DEPLOY / "mailstack.sh").read_text(encoding="utf-8")
    assert "IMAP_PORT=${MAILSTACK_IMAP_PORT:-10143}" in script
    assert "SMTP_PORT=${MAILSTACK_SMTP_PORT:-10025}" in script
    assert (inbound.host, inbound.port, inbound.tls) == ("127.0.0.1", 10143, "none")
    assert (outbound.host, outbound.port, outbound.tls) == ("127.0.0.1", 10025, "none")
    steps = _readme_block("sh", heading)
    assert f"adduser cribbage {inbound.password}" in steps
    assert inbound.username == outbound.username == "cribbage@pbem.test"
    muttrc = _readme_block("muttrc", heading)
    assert 'set imap_pass = "alice-secret"' in muttrc and "adduser alice alice-secret" in steps
    assert (
        "imap://127.0.0.1:10143/" in muttrc
        and "smtp://alice%40pbem.test@127.0.0.1:10025/" in muttrc
    )


def test_the_readmes_lmtp_configuration_and_postfix_lines_agree(tmp_path: Path) -> None:
    """The README's LMTP example: the TOML listens where the Postfix transport sends,
    and the recipient table Postfix checks takes exactly the addresses the listener
    takes (`policy.takes_mail_for`)."""
    from pbem.config import Settings
    from pbem.service.policy import takes_mail_for
    from pbem.transport.urls import LmtpConfig, parse_inbound

    heading = "### Mail straight from the mail server (LMTP)"
    toml = _readme_block("toml", heading)
    inbound = re.search(r'inbound_url = "([^"]+)"', toml)
    assert inbound and parse_inbound(inbound.group(1)) == LmtpConfig("127.0.0.1", 8024)
    postfix = _readme_block("conf", heading)  # main.cf and its tables
    assert "pbem.example.org    lmtp:inet:127.0.0.1:8024" in postfix
    rule = re.search(r"^(/\^.*\$/)\s+OK$", postfix, re.MULTILINE)
    assert rule, postfix
    pattern = re.compile(rule.group(1).strip("/"), re.IGNORECASE)
    settings = Settings(domain="pbem.example.org", local_part="cribbage")
    for address in (
        "cribbage@pbem.example.org",
        "cribbage+k5x2ablq7vrm4ysoyhd3@pbem.example.org",
        "Cribbage+Lobby@PBEM.example.org",
        "alice@pbem.example.org",
        "cribbagex@pbem.example.org",
        "cribbage@example.org",
    ):
        assert bool(pattern.fullmatch(address)) == takes_mail_for(settings, address), address
    steps = _readme_block("sh", heading)
    assert "mailstack.sh route svc.pbem.test 127.0.0.1:8024" in steps
