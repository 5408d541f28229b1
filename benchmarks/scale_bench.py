"""Costs that do not grow with history: the service on an empty database and on one with a
long history, side by side.

    PYTHONPATH=$PWD python benchmarks/scale_bench.py --db sqlite --finished 0,10000,100000
    PYTHONPATH=$PWD python benchmarks/scale_bench.py \
        --db postgresql://postgres@127.0.0.1:5432/pbem_scale --finished 0,10000,100000

For each size, a fresh database is migrated, then given its history directly (not
through the service): ``--finished`` finished games with their seats and
``--actions-per-game`` moves each, ``--players`` players with their standings lines,
and as many old mails in and out — each table filled by one ``INSERT … SELECT`` over a
series that the database makes itself (`tests.pbem.store.bulk`), then settled
(SQLite: analysed, its write-ahead log checkpointed; PostgreSQL: ``VACUUM ANALYZE``,
``CHECKPOINT``). On it are measured:

- the moves: ``--games`` concurrent games played in rounds of replies, ten messages
  to a transaction, as `benchmarks/service_bench.py` plays them (moves/s, median ms
  per move, and this process's CPU ms per move: the database server's is not in it);
- a ``standings`` mail to the plain address from a player with a long history, one
  at a time as the daemon takes it (median and worst ms of ``--asks`` mails, and the
  median CPU ms of this process);
- ``pbem standings`` as a user runs it: a new process, start-up included (best and
  worst wall-clock seconds of three runs, and the process's CPU seconds; the whole
  table, every player), and the same table read and laid out inside this process (its
  cost without the command's start-up).

Prints one JSON line per size, and a Markdown table at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

from sqlmodel import Session

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from service_bench import _fresh_postgres, _play, latest_mail

from engine.computer import choose_action
from pbem.config import Settings
from pbem.demo.bots import command_for, quoted_reply
from pbem.run.runtime import freeze_startup_objects
from pbem.service import Service
from pbem.store import models as m
from pbem.store.db import make_engine, migrate
from tests.pbem.store.bulk import Sizes, fill

DOMAIN = "bench.example"


def load_history(url: str, finished: int, players: int, per_game: int) -> float:
    """Give the database its history; the seconds it took."""
    engine = make_engine(url)
    start = time.perf_counter()
    if finished:
        with engine.begin() as connection:
            fill(
                connection,
                Sizes(
                    games=finished,
                    players=players,
                    actions_per_game=per_game,
                    mails=finished,
                ),
            )
            connection.exec_driver_sql(f"UPDATE rating_total SET games = {finished}")
        # Settle the load before measuring: SQLite's write-ahead log copied back into
        # the file, PostgreSQL's new rows vacuumed (else autovacuum works during the
        # measurement) and both analysed.
        if engine.dialect.name == "postgresql":
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("VACUUM ANALYZE")
                conn.exec_driver_sql("CHECKPOINT")
        else:
            with engine.connect() as connection:
                connection.exec_driver_sql("ANALYZE")
                connection.commit()
            raw = engine.raw_connection()
            try:
                raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                raw.close()
    engine.dispose()
    return time.perf_counter() - start


def moves(service: Service, games: int, count: int) -> tuple[float, float, float]:
    """Play ``count`` moves of ``games`` concurrent games: (moves/s, median ms/move,
    this process's CPU ms/move)."""
    ids = [
        service.new_game(
            [(f"s{g}a@{DOMAIN}", None), (f"s{g}b@{DOMAIN}", None)], target=121, seed=f"scale-{g}"
        )
        for g in range(games)
    ]
    rng = random.Random(1)
    timings: list[float] = []
    sizes: list[int] = []
    done = 0
    rounds = 0
    cpu = 0.0
    while done < count:
        replies: list[bytes] = []
        for game_id in ids:
            if done + len(replies) >= count:
                break
            with Session(service.db) as session:
                game_row = session.get(m.Game, game_id)
                assert game_row is not None
                if game_row.status != "active":
                    continue
                game = service.load_game(session, game_row)
                seats = service._seats(session, game_id)
            seat = game.to_act()[0]
            player = seats[seat].player.email
            action = choose_action(game, seat, rng, "random")
            original = latest_mail(service, game_id, player)
            replies.append(
                quoted_reply(
                    original, player, player.split("@")[0], command_for(action), datetime.now(UTC)
                )
            )
        if not replies:
            rounds += 1
            ids = [
                service.new_game(
                    [(f"s{g}a{rounds}@{DOMAIN}", None), (f"s{g}b{rounds}@{DOMAIN}", None)],
                    target=121,
                    seed=f"scale-{g}-{rounds}",
                )
                for g in range(games)
            ]
            continue
        for first in range(0, len(replies), 10):
            chunk = replies[first : first + 10]
            start, cpu_start = time.perf_counter(), time.process_time()
            failure = _play(service, chunk, 10)
            timings.append(time.perf_counter() - start)
            cpu += time.process_time() - cpu_start
            sizes.append(len(chunk))
            if failure:
                raise SystemExit(failure)
        done += len(replies)
    per_move = [t / n for t, n in zip(timings, sizes, strict=True)]
    return done / sum(timings), statistics.median(per_move) * 1000, cpu / done * 1000


def standings_mails(service: Service, asker: str, asks: int) -> tuple[float, float, float]:
    """``asks`` standings mails from ``asker``, each processed alone: (median, worst,
    median CPU of this process) ms."""
    timings = []
    cpus = []
    for n in range(asks):
        msg = EmailMessage()
        msg["From"] = asker
        msg["To"] = service.settings.address
        msg["Subject"] = "standings"
        msg["Date"] = format_datetime(datetime.now(UTC))
        msg["Message-ID"] = f"<scale-standings-{n}-{time.time_ns()}@{DOMAIN}>"
        msg.set_content("standings\n")
        [(inbound_id, _)] = service.receive_many([(msg.as_bytes(), False)], "bench")
        start, cpu_start = time.perf_counter(), time.process_time()
        outcome = service.process(inbound_id)
        timings.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu_start)
        if outcome.status != "applied":
            raise SystemExit(f"standings mail not answered: {outcome}")
    return statistics.median(timings) * 1000, max(timings) * 1000, statistics.median(cpus) * 1000


def standings_in_process(service: Service) -> float:
    """The whole table read and laid out as ``pbem standings`` does, in this process
    (without the command's start-up): best of three, seconds."""
    from pbem.ratings import text_table
    from pbem.service.game.standings import current_standings

    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        with Session(service.db) as session:
            table = current_standings(service._ctx(), session)
        text_table(table.rows)
        best = min(best, time.perf_counter() - start)
    return best


def standings_command(url: str, data_dir: Path) -> tuple[float, float, float, int]:
    """``pbem standings`` three times in a new process: (best s, worst s, best CPU s of
    the process, lines)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env.update({"PBEM_DATA_DIR": str(data_dir), "PBEM_DATABASE_URL": url, "PBEM_DOMAIN": DOMAIN})
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed command runs: from bytecode
    times = []
    cpu = []
    lines = 0
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pbem.cli", "standings"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            raise SystemExit(f"pbem standings failed: {done.stderr}")
        lines = done.stdout.count("\n")
    return min(times), max(times), min(cpu), lines


def run(db: str, finished: int, args: argparse.Namespace) -> dict[str, float | str]:
    tmp = Path(tempfile.mkdtemp(prefix="pbem-scale-"))
    url = f"sqlite:///{tmp / 'scale.sqlite'}" if db == "sqlite" else _fresh_postgres(db)
    engine = make_engine(url)
    migrate(engine)
    engine.dispose()
    loaded = load_history(url, finished, args.players, args.actions_per_game)
    engine = make_engine(url)
    settings = Settings(data_dir=tmp, database_url=url, domain=DOMAIN)
    service = Service(settings, engine)
    freeze_startup_objects()
    per_s, median, move_cpu = moves(service, args.games, args.moves)
    # The asker: a player of the history (its last line), or one of the games just played.
    asker = f"bulk{args.players}@bulk.example" if finished else f"s0a@{DOMAIN}"
    mail_median, mail_worst, mail_cpu = standings_mails(service, asker, args.asks)
    inside = standings_in_process(service)
    best, worst, cpu, lines = standings_command(url, tmp)
    engine.dispose()
    shutil.rmtree(tmp, ignore_errors=True)  # the SQLite file of a large history is large
    return {
        "db": "PostgreSQL" if db != "sqlite" else "SQLite",
        "finished": finished,
        "actions": finished * args.actions_per_game,
        "load_s": round(loaded, 1),
        "moves_per_s": round(per_s, 1),
        "ms_median_per_move": round(median, 2),
        "cpu_ms_per_move": round(move_cpu, 2),
        "standings_mail_ms_median": round(mail_median, 1),
        "standings_mail_ms_worst": round(mail_worst, 1),
        "standings_mail_cpu_ms": round(mail_cpu, 1),
        "standings_table_s": round(inside, 3),
        "pbem_standings_s_best": round(best, 2),
        "pbem_standings_s_worst": round(worst, 2),
        "pbem_standings_cpu_s": round(cpu, 2),
        "standings_lines": lines,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", default="sqlite", help="sqlite, or a postgresql:// URL")
    parser.add_argument("--finished", default="0,10000", help="history sizes, comma-separated")
    parser.add_argument("--players", type=int, default=20_000)
    parser.add_argument("--actions-per-game", type=int, default=100)
    parser.add_argument("--games", type=int, default=100, help="concurrent games played")
    parser.add_argument("--moves", type=int, default=1000)
    parser.add_argument("--asks", type=int, default=20, help="standings mails")
    args = parser.parse_args()
    rows = []
    print(f"# {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    for size in (int(s) for s in args.finished.split(",")):
        row = run(args.db, size, args)
        rows.append(row)
        print(json.dumps(row), flush=True)
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + " --- |" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
