"""The commitment log's append cost does not grow with the log (`pbem.store.commitlog`).

Appends entries in batches to a migrated SQLite database (or ``--url`` PostgreSQL), one
transaction each as the service does, and prints the mean time of an append for the
first batch and for the last, after the log holds ``--entries`` entries.

    python -m benchmarks.commitment_log_bench --entries 20000
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlmodel import Session

from pbem.store.commitlog import append, head_of
from pbem.store.db import make_engine, migrate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--url", help="a database URL (default: a new SQLite file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.url or f"sqlite:///{Path(folder) / 'bench.db'}"
        engine = make_engine(url)
        migrate(engine)
        now = datetime(2026, 11, 29, tzinfo=UTC)
        timings = []
        done = 0
        while done < args.entries:
            start = time.perf_counter()
            for _ in range(args.batch):
                with Session(engine) as session:
                    append(session, done + 1, "commit", "a" * 64, now)
                    session.commit()
                done += 1
            timings.append((time.perf_counter() - start) / args.batch)
        with Session(engine) as session:
            entries, _ = head_of(session)
        engine.dispose()
    print(
        f"{entries} entries; one append: first {args.batch} {timings[0] * 1e3:.2f} ms, "
        f"last {args.batch} {timings[-1] * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    main()
