"""``pbem player forget`` on installations of different sizes: its time should follow the
player's mail, not the installation's.

    PYTHONPATH=$PWD python benchmarks/forget_bench.py --history 0,100,10000
    PYTHONPATH=$PWD python benchmarks/forget_bench.py --db postgres --history 0,100,10000

For each size, a fresh database is given ``--history`` finished games of other players
(each with ``--mails-per-game`` stored mails in and out, their raw bytes pruned as after
retention, one row each in the index of stored mail by mailbox, and ``--actions-per-game``
logged moves: `tests.pbem.store.bulk`, made by the database itself); then the player to
forget plays ``--games`` fair games to 61 by mail through the service with real mail
(every mail of theirs stored raw and indexed as the service stores it), and other players
play one game beside (the seconds this play takes, and its mails, are printed too: they
must not grow with the history). Then ``Service.forget`` runs, its phases timed: the
rewrite (finding and rewriting the player's rows, in short transactions), the end
(`pbem.store.erasure.erase`: on SQLite the write-ahead log emptied, the old bytes having
been overwritten as they were rewritten; PostgreSQL: ``VACUUM`` of the rewritten tables;
``--compact``: SQLite's ``VACUUM``, PostgreSQL's ``VACUUM FULL``), and the replay and
verification of the player's games. Prints one JSON line per size: the seconds of each
phase, the stored mails read and rewritten, the database's size.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pbem.service.forget as forgetting  # noqa: E402
from pbem.store.db import make_engine, migrate  # noqa: E402
from tests.e2e.helpers import ALICE, BOB, CAROL, DAVE, Harness  # noqa: E402
from tests.pbem.store.bulk import Sizes, fill  # noqa: E402

PG = "postgresql://postgres@127.0.0.1:5432/postgres"


def database(kind: str, root: Path) -> tuple[str, str | None]:
    if kind == "sqlite":
        return f"sqlite:///{root / 'pbem.db'}", None
    name = f"pbem_forget_{secrets.token_hex(4)}"
    admin = create_engine(
        PG.replace("postgresql://", "postgresql+psycopg://"), isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return PG.rsplit("/", 1)[0] + "/" + name, name


def drop(name: str | None) -> None:
    if name is None:
        return
    admin = create_engine(
        PG.replace("postgresql://", "postgresql+psycopg://"), isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as c:
        c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def one(kind: str, history: int, args: argparse.Namespace) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="forget-bench-"))
    url, name = database(kind, root)
    try:
        engine = make_engine(url)
        migrate(engine)
        start = time.perf_counter()
        if history:
            sizes = Sizes(
                games=history,
                players=max(2, history // 2),
                actions_per_game=args.actions_per_game,
                mails=history * args.mails_per_game,
            )
            with engine.begin() as c:
                fill(c, sizes)
                c.execute(
                    text(
                        "INSERT INTO mail_name (mailbox, outbox_id) SELECT "
                        "'bulk' || (id % 1000) || '@bulk.example', id FROM outbox"
                    )
                )
                c.execute(
                    text(
                        "INSERT INTO mail_name (mailbox, inbound_id) SELECT "
                        "'bulk' || (id % 1000) || '@bulk.example', id FROM inbound"
                    )
                )
            with engine.connect() as c:
                if kind == "sqlite":
                    # The history's write-ahead log copied into the file now, not by the
                    # first move's commit (as `benchmarks/scale_bench.py` settles it).
                    driver = c.connection.driver_connection
                    assert driver is not None
                    driver.execute("ANALYZE")
                    driver.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                else:
                    c.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql(
                        "VACUUM ANALYZE"
                    )
        loaded = time.perf_counter() - start
        harness = Harness.build(root, url, engine, fair_deals=True)
        played = time.perf_counter()
        for n, other in enumerate([BOB, CAROL, DAVE][: args.games]):
            game_id = harness.service.new_game([ALICE, other], target=61)
            harness.step()
            harness.answer(ALICE[0], f"cut {n} purple elephants")
            harness.answer(other[0], "cut")
            harness.play_until(game_id, lambda g: g.is_over)
        beside = harness.service.new_game([BOB, CAROL], target=61)
        harness.step()
        harness.answer(BOB[0], "cut")
        harness.answer(CAROL[0], "cut")
        harness.play_until(beside, lambda g: g.is_over)
        played = time.perf_counter() - played
        with engine.connect() as c:
            mails = int(
                c.execute(
                    text("SELECT (SELECT count(*) FROM inbound) + (SELECT count(*) FROM outbox)")
                ).scalar_one()
            )
        phases: dict[str, Any] = {}
        real_erase, real_audit = forgetting.erase, forgetting.audit_games

        def timed_erase(db: Any, tables: Any, *, compact: bool = False) -> str:
            t = time.perf_counter()
            done = real_erase(db, tables, compact=compact)
            phases["end_s"] = time.perf_counter() - t
            phases["end"] = done
            return done

        def timed_audit(ctx: Any, ids: Any = None) -> Any:
            t = time.perf_counter()
            result = real_audit(ctx, ids)
            phases["audit_s"] = time.perf_counter() - t
            return result

        forgetting.erase = timed_erase
        forgetting.audit_games = timed_audit  # type: ignore[assignment]
        try:
            t = time.perf_counter()
            report = harness.service.forget(ALICE[0], compact=args.compact)
            total = time.perf_counter() - t
        finally:
            forgetting.erase, forgetting.audit_games = real_erase, real_audit
        with engine.connect() as c:
            if kind == "sqlite":
                size = Path(url.removeprefix("sqlite:///")).stat().st_size
            else:
                size = int(
                    c.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
                )
        harness.close()
        engine.dispose()
        return {
            "db": kind,
            "history_games": history,
            "stored_mails": mails,
            "load_s": round(loaded, 1),
            "play_s": round(played, 1),
            "played_mails": mails - 2 * history * args.mails_per_game,
            "forget_s": round(total, 2),
            "rewrite_s": round(total - phases.get("end_s", 0) - phases.get("audit_s", 0), 2),
            "end_s": round(phases.get("end_s", 0), 2),
            "end": phases.get("end"),
            "audit_s": round(phases.get("audit_s", 0), 2),
            "mails_read": report.read,
            "rows_rewritten": report.rows,
            "database_bytes": size,
        }
    finally:
        drop(name)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", default="sqlite", choices=["sqlite", "postgres"])
    parser.add_argument("--history", default="0,100,10000", help="other games, comma-separated")
    parser.add_argument("--games", type=int, default=2, help="the player's own games (1-3)")
    parser.add_argument("--mails-per-game", type=int, default=100, help="in and out, each")
    parser.add_argument("--actions-per-game", type=int, default=90)
    parser.add_argument(
        "--compact", action="store_true", help="forget with --compact (the file written again)"
    )
    args = parser.parse_args()
    for history in [int(x) for x in args.history.split(",") if x]:
        print(json.dumps(one(args.db, history, args)), flush=True)


if __name__ == "__main__":
    main()
