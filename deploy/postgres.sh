#!/usr/bin/env bash
# Make sure PostgreSQL answers on 127.0.0.1:5432 for user postgres without a
# password (the test setup): start the cluster if it is down, install it first
# if it is missing.  Idempotent.
set -euo pipefail

ready() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }

if ready; then
  echo "PostgreSQL is running"
  exit 0
fi

if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
  echo "installing PostgreSQL"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q postgresql >/dev/null 2>&1 || { apt-get update -q >/dev/null; apt-get install -y -q postgresql >/dev/null; }
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  hba=/etc/postgresql/$version/main/pg_hba.conf
  # Loopback trust for the test user only; nothing listens beyond loopback.
  sed -i -E 's/^(host\s+all\s+all\s+127\.0\.0\.1\/32\s+)\S+/\1trust/; s/^(host\s+all\s+all\s+::1\/128\s+)\S+/\1trust/' "$hba"
fi

version=$(ls /etc/postgresql | sort -V | tail -n 1)
pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
for _ in $(seq 1 60); do
  ready && { echo "PostgreSQL is running"; exit 0; }
  sleep 0.5
done
echo "PostgreSQL did not start" >&2
exit 1
