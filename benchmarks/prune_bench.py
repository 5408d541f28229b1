"""What secure deletion costs the pruner on SQLite: batches of stored mail pruned with
``PRAGMA secure_delete`` on (as every connection of the service has it since issue 35:
freed pages are overwritten with zeros) and off, on the same stored mail.

    PYTHONPATH=$PWD python benchmarks/prune_bench.py --mails 4000

For each setting a fresh SQLite file is given ``--mails`` received mails (``--in-kb``
each) and as many outgoing ones (``--out-kb`` each), done with long ago (the raw bytes
stored as the service stores them, `pbem.store.rawmail`), then `pbem.store.retention`
prunes them in batches of 200 (each a transaction, as ``pbem serve`` does): the
milliseconds per batch (median, slowest), the write-ahead log's bytes afterwards, and
the file's free pages. Prints one JSON line per setting.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import event, insert

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pbem.store.db import make_engine, migrate
from pbem.store.models import Inbound, Outbox
from pbem.store.rawmail import write_inbound, write_outbox
from pbem.store.retention import prune_batch

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def one(secure: bool, args: argparse.Namespace) -> dict[str, Any]:
    path = Path(tempfile.mkdtemp(prefix="prune-bench-")) / "pbem.db"
    engine = make_engine(f"sqlite:///{path}")
    if not secure:

        @event.listens_for(engine, "connect")
        def _off(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.execute("PRAGMA secure_delete = OFF")

    migrate(engine)
    old = NOW - timedelta(days=90)
    in_raw = b"x" * (args.in_kb * 1024)
    out_raw = b"y" * (args.out_kb * 1024)
    with engine.begin() as c:
        ids = [
            int(i)
            for (i,) in c.execute(
                insert(Inbound.__table__).returning(Inbound.__table__.c.id),  # type: ignore[attr-defined]
                [
                    {
                        "message_key": f"<in{n}@bench>",
                        "source": "bench",
                        "received_at": old,
                        "status": "applied",
                        "processed_at": old,
                        "attempts": 1,
                    }
                    for n in range(args.mails)
                ],
            )
        ]
        write_inbound(c, [(i, in_raw) for i in ids])
        ids = [
            int(i)
            for (i,) in c.execute(
                insert(Outbox.__table__).returning(Outbox.__table__.c.id),  # type: ignore[attr-defined]
                [
                    {
                        "message_id": f"<out{n}@bench>",
                        "recipient": "a@bench.example",
                        "sender": "p@bench.example",
                        "kind": "turn",
                        "status": "sent",
                        "attempts": 1,
                        "next_attempt_at": old,
                        "created_at": old,
                        "starts_clock": False,
                    }
                    for n in range(args.mails)
                ],
            )
        ]
        write_outbox(c, [(i, out_raw) for i in ids])
    with engine.connect() as c:
        driver = c.connection.driver_connection
        assert driver is not None
        driver.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    times: list[float] = []
    while True:
        t = time.perf_counter()
        done = prune_batch(engine, now=NOW, keep=timedelta(days=30), keep_after_game=timedelta(1))
        if not done.rows:
            break
        times.append((time.perf_counter() - t) * 1000)
    wal = path.with_name(path.name + "-wal")
    wal_bytes = wal.stat().st_size if wal.exists() else 0
    with engine.connect() as c:
        free = int(c.exec_driver_sql("PRAGMA freelist_count").scalar_one())
        page = int(c.exec_driver_sql("PRAGMA page_size").scalar_one())
    engine.dispose()
    return {
        "secure_delete": secure,
        "mails": 2 * args.mails,
        "batches": len(times),
        "batch_ms_median": round(statistics.median(times), 1),
        "batch_ms_max": round(max(times), 1),
        "wal_bytes_after": wal_bytes,
        "free_bytes": free * page,
        "load_average": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mails", type=int, default=4000, help="received, and as many sent")
    parser.add_argument("--in-kb", type=int, default=4)
    parser.add_argument("--out-kb", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2, help="each setting, alternated")
    args = parser.parse_args()
    for _ in range(args.rounds):
        for secure in (True, False):
            print(json.dumps(one(secure, args)), flush=True)


if __name__ == "__main__":
    main()
