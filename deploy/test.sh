#!/usr/bin/env bash
# The README's test command.  On a fresh Debian machine (as root) it installs
# everything the tests need — the package with its test extras, the real mail
# servers (Postfix + Dovecot on loopback), PostgreSQL if it is not running,
# Debian's chromium for the browser tests, podman with a Debian base image for the
# container test — and runs the whole test suite.
# Extra arguments go to pytest; PBEM_TEST_WORKERS sets how many workers run the tests
# (default 2; 0: one process, no workers).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
echo "== installing the package with its test extras"
"$PY" -m pip install --quiet --disable-pip-version-check -e '.[test]'

echo "== PostgreSQL on 127.0.0.1:5432"
bash deploy/postgres.sh

echo "== Postfix and Dovecot on loopback"
bash deploy/mailstack.sh start

echo "== systemd-analyze (the tests verify deploy/pbem.service with it)"
if ! command -v systemd-analyze >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends systemd >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null; apt-get install -y -q --no-install-recommends systemd >/dev/null; }
fi

echo "== chromium (the replay page's browser tests drive Debian's chromium with Playwright)"
if ! command -v chromium >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null; apt-get install -y -q --no-install-recommends chromium >/dev/null; }
fi

echo "== podman and the Debian base image (the container test builds and runs the image)"
bash deploy/image.sh setup

echo "== tests"
# Two workers (pytest-xdist): most tests wait on servers and subprocesses, not on a
# core. Tests that stop or restart a mail server run alone (tests/fixtures/mailstack.py).
exec "$PY" -m pytest -n "${PBEM_TEST_WORKERS:-2}" --dist loadgroup --no-loadscope-reorder "$@"
