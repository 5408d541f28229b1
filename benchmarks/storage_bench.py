"""The database's size as games are played through the service, with stored mail pruned
as ``pbem serve`` prunes it (`pbem.store.retention`, `pbem.run.pruner`).

    PYTHONPATH=$PWD python benchmarks/storage_bench.py --games 10000 --checkpoints 1000,5000
    PYTHONPATH=$PWD python benchmarks/storage_bench.py --db postgresql://postgres@127.0.0.1:5432/pbem_storage

Plays ``--concurrent`` 2-player games to ``--target`` at a time, as
`benchmarks/service_bench.py` plays them: in each round the player to move in every game
replies to their newest mail (a legal move chosen from their own view, written as a mail
client would), and the daemon's work is done on the round (``Service.receive_many`` and
``Service.process_many``, ten messages to a transaction). A game that ends is replaced by
a new one, until ``--games`` have finished. Each round the outgoing mail is marked
delivered (no transport: delivery is not measured; the rows are what a delivered mail
leaves), the service's clock moves ``--round-minutes`` on, and the daemon's pruner runs
(every 10 minutes of that clock, two batches of 200 rows at most, each a transaction of
its own, again 5 seconds later while more is due) with the default retention (30 days; a
game's mail a day after its end).

At each checkpoint (games finished) it prints one JSON line: the database's bytes in use
(SQLite: pages minus free pages; PostgreSQL: ``pg_database_size``) and per finished game,
the raw bytes still kept, the rows of inbound, outbox and mail_name, the load average.
At the end (or once ``--stop-after`` seconds have passed: the games finished by then) the
mail of every finished game is past its retention (the clock moved past it, one more
prune), which gives the size a finished game keeps without any vacuum; then on SQLite
``pbem db prune --vacuum``'s incremental vacuum (the free pages given back) and a whole
``VACUUM`` give the file's size.
"""

from __future__ import annotations

import argparse
import email
import email.policy
import json
import os
import platform
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from email.header import decode_header, make_header
from email.parser import BytesParser
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, bindparam, func, select, text
from sqlmodel import Session

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from service_bench import _fresh_postgres, _play

from engine.computer import choose_action
from pbem.config import Settings
from pbem.demo.bots import command_for, quoted_reply
from pbem.run.pruner import Pruner
from pbem.run.runtime import freeze_startup_objects
from pbem.service import Service
from pbem.store import models as m
from pbem.store.db import make_engine, migrate
from pbem.store.models import Outbox
from pbem.store.rawmail import OUTBOX_RAW
from pbem.store.retention import prune, vacuum

START = datetime(2026, 1, 1, tzinfo=UTC)


class SimClock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(microseconds=10)
        return self.now


class Read(email.message.Message):
    """A mail read as a mail client shows it, at the cost of the headers it is asked
    for: each header's RFC 2047 words decoded when read (``compat32`` parses without
    the header registry, which costs more than the rest of the reply)."""

    def get(self, name: str, failobj: Any = None) -> Any:
        value = super().get(name, failobj)
        if not isinstance(value, str):
            return value
        return str(make_header(decode_header(value)))


_READ = BytesParser(Read, policy=email.policy.compat32)
_LATEST = select(OUTBOX_RAW.c.raw).where(
    OUTBOX_RAW.c.outbox_id
    == select(func.max(Outbox.__table__.c.id))  # type: ignore[attr-defined]
    .where(
        Outbox.__table__.c.game_id == bindparam("game"),  # type: ignore[attr-defined]
        Outbox.__table__.c.recipient == bindparam("to"),  # type: ignore[attr-defined]
    )
    .scalar_subquery()
)


def latest_mail(db: Engine, game_id: int, address: str) -> email.message.Message:
    """The newest mail of game ``game_id`` to ``address``, as its player reads it."""
    with db.connect() as c:
        raw = c.execute(_LATEST, {"game": game_id, "to": address}).scalar_one()
    return _READ.parsebytes(bytes(raw))


def sizes(db: Engine) -> dict[str, Any]:
    """Bytes in use, raw bytes kept, and rows of the mail tables."""
    with db.connect() as c:
        out: dict[str, Any] = {}
        if c.dialect.name == "sqlite":
            page = int(c.exec_driver_sql("PRAGMA page_size").scalar_one())
            pages = int(c.exec_driver_sql("PRAGMA page_count").scalar_one())
            free = int(c.exec_driver_sql("PRAGMA freelist_count").scalar_one())
            out["file_bytes"] = page * pages
            out["used_bytes"] = page * (pages - free)
        else:
            used = c.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
            out["file_bytes"] = out["used_bytes"] = int(used)
        for table in ("inbound", "outbox", "mail_name", "action_log", "game"):
            out[f"{table}_rows"] = int(
                c.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
            )
        out["raw_kept_bytes"] = int(
            c.execute(
                text(
                    "SELECT (SELECT coalesce(sum(length(raw)), 0) FROM inbound_raw) + "
                    "(SELECT coalesce(sum(length(raw)), 0) FROM outbox_raw)"
                )
            ).scalar_one()
        )
    return out


def new_game(service: Service, n: int, target: int) -> int:
    return service.new_game(
        [(f"p{n}a@bench.example", None), (f"p{n}b@bench.example", None)],
        target=target,
    )


def run(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="pbem-storage-"))
    url = f"sqlite:///{tmp / 'bench.sqlite'}" if args.db == "sqlite" else _fresh_postgres(args.db)
    engine = make_engine(url)
    migrate(engine)
    settings = Settings(data_dir=tmp, database_url=url, domain="bench.example", fair_deals=True)
    clock = SimClock()
    service = Service(settings, engine, clock=clock)
    pruner = Pruner(service)
    freeze_startup_objects()
    checkpoints = sorted({int(x) for x in args.checkpoints.split(",") if x} | {args.games})
    started = 0
    finished = 0
    active: list[int] = []
    cut_pending: set[int] = set()
    rng = random.Random(1)
    t0 = time.perf_counter()
    moves = 0
    print(
        json.dumps(
            {
                "machine": platform.machine(),
                "python": platform.python_version(),
                "db": engine.dialect.name,
                "target": args.target,
            }
        ),
        flush=True,
    )
    while finished < args.games:
        if args.stop_after and time.perf_counter() - t0 > args.stop_after:
            print(json.dumps({"stopped_at_seconds": args.stop_after, "games": finished}))
            break
        while len(active) < args.concurrent and started < args.games:
            active.append(new_game(service, started, args.target))
            cut_pending.add(active[-1])
            started += 1
        replies: list[bytes] = []
        for game_id in list(active):
            with Session(engine) as session:
                row = session.get(m.Game, game_id)
                assert row is not None
                status = row.status
                seats = service._seats(session, game_id)
                game = service.load_game(session, row) if row.seed is not None else None
            if status in ("finished", "aborted"):
                active.remove(game_id)
                finished += 1
                if finished in checkpoints:
                    report = sizes(engine)
                    report.update(
                        games=finished,
                        moves=moves,
                        seconds=round(time.perf_counter() - t0, 1),
                        simulated_days=round((clock.now - START).total_seconds() / 86400, 2),
                        used_bytes_per_game=round(report["used_bytes"] / finished),
                        load_average=round(os.getloadavg()[0], 1),
                    )
                    print(json.dumps(report), flush=True)
                continue
            if game is None:  # a fair game: both players cut for the deal
                for seated in seats:
                    who = seated.player.email
                    original = latest_mail(engine, game_id, who)
                    replies.append(quoted_reply(original, who, who.split("@")[0], "cut", clock.now))
                continue
            seat = game.to_act()[0]
            action = choose_action(game, seat, rng, "random")
            who = seats[seat].player.email
            original = latest_mail(engine, game_id, who)
            replies.append(
                quoted_reply(original, who, who.split("@")[0], command_for(action), clock.now)
            )
        for first in range(0, len(replies), 10):
            failure = _play(service, replies[first : first + 10], 10)
            if failure:
                raise SystemExit(failure)
        moves += len(replies)
        with engine.begin() as c:  # delivered
            c.execute(
                text(
                    "UPDATE outbox SET status = 'sent', sent_at = :now "
                    "WHERE status IN ('pending', 'sending')"
                ),
                {"now": clock.now},
            )
        clock.now += timedelta(minutes=args.round_minutes)
        pruner.step()
    # Every finished game's mail past its retention: what a finished game keeps.
    before = sizes(engine)
    clock.now += timedelta(days=31)
    done = prune(engine, now=clock.now, keep=timedelta(days=30), keep_after_game=timedelta(days=1))
    after = sizes(engine)
    end: dict[str, Any] = {
        "games": finished,
        "seconds": round(time.perf_counter() - t0, 1),
        "pruned_at_end": done.rows,
        "used_bytes_before_last_prune": before["used_bytes"],
        "used_bytes_after_retention": after["used_bytes"],
        "used_bytes_per_game_after_retention": round(after["used_bytes"] / finished),
    }
    if engine.dialect.name == "sqlite":
        # The free pages given back (`pbem db prune --vacuum`: incremental, no whole
        # VACUUM), then a whole VACUUM for comparison (the half-empty pages merged too).
        t = time.perf_counter()
        vacuum(engine)
        end["incremental_vacuum_s"] = round(time.perf_counter() - t, 1)
        end["file_bytes_after_incremental_vacuum"] = sizes(engine)["file_bytes"]
        with engine.connect() as c:
            raw = c.connection.driver_connection
            assert raw is not None
            raw.execute("VACUUM")
        end["file_bytes_after_vacuum"] = sizes(engine)["file_bytes"]
        end["file_bytes_per_game_after_vacuum"] = round(end["file_bytes_after_vacuum"] / finished)
    end["load_average"] = round(os.getloadavg()[0], 1)
    print(json.dumps(end), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", default="sqlite", help="sqlite, or a postgresql:// URL")
    parser.add_argument("--games", type=int, default=1000, help="games to finish")
    parser.add_argument("--concurrent", type=int, default=100)
    parser.add_argument("--target", type=int, default=121)
    parser.add_argument("--round-minutes", type=float, default=10.0)
    parser.add_argument("--checkpoints", default="100,1000", help="games finished, comma-separated")
    parser.add_argument(
        "--stop-after",
        type=float,
        default=0,
        help="seconds: stop playing then (the end figures for the games finished so far)",
    )
    run(parser.parse_args())


if __name__ == "__main__":
    main()
