"""The operator's tools on an installation of ``--games`` finished games played by mail:
``pbem backup`` (SQLite online backup), ``pbem db copy`` to a fresh PostgreSQL database
(rows per second, then every game replayed and verified there), ``pbem player forget``
of one player, and a ``/metrics`` scrape.

    PYTHONPATH=. python benchmarks/ops_bench.py --games 20
"""

from __future__ import annotations

import argparse
import secrets
import sys
import tempfile
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pbem.listen.metrics import metrics_text  # noqa: E402
from pbem.store.backup import backup_sqlite  # noqa: E402
from pbem.store.copy import copy_database  # noqa: E402
from pbem.store.db import make_engine, migrate  # noqa: E402
from tests.e2e.helpers import Harness  # noqa: E402

PG = "postgresql://postgres@127.0.0.1:5432/postgres"


def timed(label: str, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    print(f"{label}: {time.perf_counter() - start:.2f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=20)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ops-bench-"))
    url = f"sqlite:///{root / 'pbem.db'}"
    migrate(url)
    harness = Harness.build(root, url, make_engine(url), fair_deals=True)
    start = time.perf_counter()
    for n in range(args.games):
        pair = [(f"a{n}@example.com", f"Ann {n}"), (f"b{n}@example.org", f"Ben {n}")]
        game_id = harness.service.new_game(pair, target=61)
        harness.step()
        harness.answer(pair[0][0], f"cut {n}")
        harness.answer(pair[1][0], "cut")
        harness.play_until(game_id, lambda g: g.is_over)
    print(f"played {args.games} games by mail: {time.perf_counter() - start:.1f} s")

    info = timed("backup", backup_sqlite, url, root / "backup.db")
    print(f"  {info.size / 1e6:.1f} MB, {info.games} games")

    name = f"pbem_copy_{secrets.token_hex(6)}"
    with psycopg.connect(PG, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"'.encode())
    target = make_engine(PG.rsplit("/", 1)[0] + "/" + name)
    try:
        start = time.perf_counter()
        report = copy_database(harness.db, target)
        took = time.perf_counter() - start
        print(f"db copy: {report.total} rows in {took:.2f} s ({report.total / took:.0f} rows/s)")
        from pbem.service import Service

        audit = timed("audit on the target", Service(harness.settings, target).audit)
        print(f"  {audit.games} games, {audit.deals} deals verified, ok={audit.ok}")
    finally:
        target.dispose()
        with psycopg.connect(PG, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())

    scrape = timed("metrics scrape", metrics_text, harness.service)
    print(f"  {len(scrape)} bytes")
    forgotten = timed("forget one player", harness.service.forget, "a0@example.com")
    print(f"  rows rewritten: {forgotten.rows}")
    harness.close()


if __name__ == "__main__":
    main()
