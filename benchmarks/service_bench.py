"""Moves processed per second: inbound email → engine → outgoing emails committed.

    python benchmarks/service_bench.py --db sqlite --games 100 --moves 2000
    python benchmarks/service_bench.py --db postgresql://postgres@127.0.0.1:5432/pbem_bench \
        --games 100 --moves 2000 --archive 10000

Sets up ``--games`` concurrent 2-player games (and optionally ``--archive``
finished games already in the database), then plays them in rounds: in each
round the player to move in every game chooses a legal move from their own view
and writes the reply email a mail client would (quoting the mail it answers,
threaded, to the seat's reply address). The timed part is what the daemon does
with a round of mail: ``Service.receive_many`` (store raw, deduplicate) and
``Service.process_many`` (parse, authenticate, apply, log, render every
player's mail, enqueue, commit), ``--batch`` messages to a transaction (10, as
``pbem serve``; 1: ``receive`` and ``process`` one message at a time).  Mail
delivery is not timed.

``--workers N`` (PostgreSQL): N processes share each round, as N ``pbem serve``
workers share one database; each takes the same share of the games every round (its
games stay in its cache). The time of a round is the time until the last worker is
done; CPU time is the workers' together.
"""

from __future__ import annotations

import argparse
import email
import email.policy
import json
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlmodel import Session, select

from engine import new_game
from engine.computer import choose_action
from pbem.config import Settings
from pbem.demo.bots import command_for, quoted_reply
from pbem.run.runtime import freeze_startup_objects
from pbem.service import Service
from pbem.store import models as m
from pbem.store.db import make_engine, migrate


def _fresh_postgres(url: str) -> str:
    base, _, name = url.rpartition("/")
    admin = create_engine(
        f"{base}/postgres".replace("postgresql://", "postgresql+psycopg://"),
        isolation_level="AUTOCOMMIT",
    )
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return url


def _archive(service: Service, count: int) -> None:
    """``count`` finished games, imported from real played archives."""
    from engine import to_archive

    rng = random.Random(7)
    samples = []
    for i in range(20):
        game = new_game(2, seed=f"archive-{i}", target=61)
        while not game.is_over:
            seat = game.to_act()[0]
            game.apply(choose_action(game, seat, rng, "random"))
        samples.append(to_archive(game))
    for i in range(count):
        data = dict(samples[i % len(samples)])
        data["players"] = [
            {"email": f"old{i % 500}a@bench.example", "name": None},
            {"email": f"old{i % 500}b@bench.example", "name": None},
        ]
        service.import_archive(data)


def latest_mail(service: Service, game_id: int, email_addr: str) -> email.message.Message:
    with Session(service.db) as session:
        row = session.exec(
            select(m.Outbox)
            .where(m.Outbox.game_id == game_id, m.Outbox.recipient == email_addr)
            .order_by(m.Outbox.id.desc())  # type: ignore[union-attr]
        ).first()
        assert row is not None
        return email.message_from_bytes(row.raw, policy=email.policy.default)


def _play(service: Service, chunk: list[bytes], batch: int) -> str | None:
    """Receive and process ``chunk`` as the daemon does; what went wrong, if anything."""
    for first in range(0, len(chunk), batch):
        part = chunk[first : first + batch]
        if batch == 1:
            inbound_id, _ = service.receive(part[0], "bench")
            outcomes = [service.process(inbound_id)]
        else:
            stored = service.receive_many([(raw, False) for raw in part], "bench")
            outcomes = service.process_many([inbound_id for inbound_id, _ in stored])
        for outcome in outcomes:
            if outcome.status != "applied":
                return f"move not applied: {outcome}"
    return None


def _worker(
    conn: multiprocessing.connection.Connection, url: str, data_dir: str, batch: int
) -> None:
    """One worker process: plays each share of replies it is sent; answers (CPU s, error)."""
    engine = make_engine(url)
    settings = Settings(data_dir=Path(data_dir), database_url=url, domain="bench.example")
    service = Service(settings, engine)
    freeze_startup_objects()
    while True:
        share = conn.recv()
        if share is None:
            return
        cpu_start = time.process_time()
        failure = _play(service, share, batch)
        conn.send((time.process_time() - cpu_start, failure))


def _start_workers(
    count: int, url: str, data_dir: Path, batch: int
) -> tuple[list[multiprocessing.connection.Connection], list[multiprocessing.process.BaseProcess]]:
    context = multiprocessing.get_context("spawn")
    conns: list[multiprocessing.connection.Connection] = []
    procs: list[multiprocessing.process.BaseProcess] = []
    for _ in range(count):
        mine, theirs = context.Pipe()
        proc = context.Process(target=_worker, args=(theirs, url, str(data_dir), batch))
        proc.start()
        conns.append(mine)
        procs.append(proc)
    return conns, procs


def run(
    db: str, games: int, moves: int, archive: int, batch: int = 10, workers: int = 1
) -> dict[str, float]:
    tmp = Path(tempfile.mkdtemp(prefix="pbem-bench-"))
    url = f"sqlite:///{tmp / 'bench.sqlite'}" if db == "sqlite" else _fresh_postgres(db)
    engine = make_engine(url)
    migrate(engine)
    settings = Settings(data_dir=tmp, database_url=url, domain="bench.example")
    service = Service(settings, engine)
    freeze_startup_objects()  # as `pbem serve` does once it has started
    t0 = time.perf_counter()
    if archive:
        _archive(service, archive)
    setup_archive = time.perf_counter() - t0
    ids = []
    for g in range(games):
        ids.append(
            service.new_game(
                [(f"p{g}a@bench.example", None), (f"p{g}b@bench.example", None)],
                target=121,
                seed=f"bench-{g}",
            )
        )
    if workers > 1 and url.startswith("sqlite"):
        raise SystemExit("several workers need PostgreSQL (SQLite has one writer at a time)")
    pool, procs = _start_workers(workers, url, tmp, batch) if workers > 1 else (None, [])
    rng = random.Random(1)
    timings: list[float] = []  # one per transaction: `batch` moves (or fewer)
    sizes: list[int] = []
    cpu = 0.0  # this process's CPU time in the timed parts
    done = 0
    finished = 0
    while done < moves:
        # One round: every active game's player to move replies at once.
        replies: list[bytes] = []
        for game_id in ids:
            if done + len(replies) >= moves:
                break
            with Session(engine) as session:
                game_row = session.get(m.Game, game_id)
                assert game_row is not None
                if game_row.status != "active":
                    continue
                game = service.load_game(session, game_row)
                seats = service._seats(session, game_id)
            seat = game.to_act()[0]
            action = choose_action(game, seat, rng, "random")
            player = seats[seat].player.email
            name = player.split("@", 1)[0]  # a name with an "@" makes the From ambiguous
            original = latest_mail(service, game_id, player)
            replies.append(
                quoted_reply(original, player, name, command_for(action), datetime.now(UTC))
            )
        if not replies:
            # every game finished: start more
            finished += len(ids)
            ids = [
                service.new_game(
                    [
                        (f"q{g}-{finished}a@bench.example", None),
                        (f"q{g}-{finished}b@bench.example", None),
                    ],
                    target=121,
                    seed=f"bench-{g}-{finished}",
                )
                for g in range(games)
            ]
            continue
        if pool is not None:
            shares = [replies[w::workers] for w in range(workers)]
            start = time.perf_counter()
            for conn, share in zip(pool, shares, strict=True):
                conn.send(share)
            results = [conn.recv() for conn in pool]
            timings.append(time.perf_counter() - start)
            sizes.append(len(replies))
            for used, failure in results:
                cpu += used
                if failure:
                    raise SystemExit(failure)
            done += len(replies)
            continue
        for first in range(0, len(replies), batch):
            chunk = replies[first : first + batch]
            start = time.perf_counter()
            cpu_start = time.process_time()
            failure = _play(service, chunk, batch)
            timings.append(time.perf_counter() - start)
            cpu += time.process_time() - cpu_start
            sizes.append(len(chunk))
            if failure:
                raise SystemExit(failure)
        done += len(replies)
    for conn in pool or ():
        conn.send(None)
    for proc in procs:
        proc.join()
    total = sum(timings)
    per_move = sorted(t / n for t, n in zip(timings, sizes, strict=True))
    quarter = max(1, len(timings) // 4)
    return {
        "moves": float(done),
        "batch": float(batch),
        "workers": float(workers),
        "moves_per_s": done / total,
        "ms_median_per_move": statistics.median(per_move) * 1000,
        "ms_p95_per_move": per_move[int(len(per_move) * 0.95)] * 1000,
        "ms_median_per_transaction": statistics.median(timings) * 1000,
        "cpu_ms_per_move": cpu / done * 1000,
        "first_quarter_moves_per_s": sum(sizes[:quarter]) / sum(timings[:quarter]),
        "last_quarter_moves_per_s": sum(sizes[-quarter:]) / sum(timings[-quarter:]),
        "archive_games": float(archive),
        "archive_setup_s": setup_archive,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", default="sqlite", help="sqlite, or a postgresql:// URL")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--moves", type=int, default=2000)
    parser.add_argument("--archive", type=int, default=0, help="finished games stored first")
    parser.add_argument(
        "--batch",
        type=int,
        default=10,
        help="messages stored and processed to a transaction, as the daemon does (1: each "
        "message alone)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes sharing each round, as several daemon workers (PostgreSQL)",
    )
    args = parser.parse_args()
    result = run(
        args.db, args.games, args.moves, args.archive, max(1, args.batch), max(1, args.workers)
    )
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
