"""Moves per second and end-to-end latency through the real Postfix and Dovecot.

    python benchmarks/mail_bench.py --games 10 --moves 300
    python benchmarks/mail_bench.py --games 100 --moves 2500 --rate 35
    python benchmarks/mail_bench.py --games 100 --workers 2 \
        --db postgresql://postgres@127.0.0.1:5432/pbem_mail_bench
    python benchmarks/mail_bench.py --inbound imap,lmtp --games 4 --moves 200 --rate 2

Plays ``--games`` concurrent 2-player games through the real mail stack (started with
``deploy/mailstack.sh`` if it is not running; root needed). The daemon runs as it does in
production: ``pbem serve`` processes (one on SQLite; ``--workers`` on PostgreSQL) with a
TOML config — their own Dovecot mailbox read over IMAP with IDLE (processed mail moved to
``Done``, as in ``deploy/pbem.example.toml``), Postfix over SMTP.
With ``--inbound lmtp`` the service is fed by Postfix over LMTP instead: a service
domain of its own is routed by ``mailstack.sh route`` (transport_maps) to the LMTP
listener of ``pbem serve`` (every worker on one port); ``--inbound imap,lmtp`` runs
both, one after the other, in the same run, and reports them side by side.
Every player has its own Dovecot mailbox, reads it over IMAP and replies over SMTP with
the quoted reply a mail client writes (decisions from the mail's own view).

Latency of one move: from the moment Postfix accepted the player's reply (SMTP ``250``)
to the moment the next email of that game is visible in BOTH players' IMAP mailboxes.
Visibility is found by polling (``NOOP``) each mailbox that expects mail (a move of
its game is under way): every ``--poll`` seconds at first, then every tenth of the
time waited so far, so a latency is reported at most max(``--poll``, 10 %) late, never
early. ``--rate`` caps the
offered load (moves per second, all games together); by default players answer at once.

The service's own share: from the moment Postfix accepted the player's reply to the
moment Postfix accepted the service's answer to it (the outbox row's ``sent_at``, the
later of the two players' mails): ``handed_ms``. The daemon's CPU time is divided by
the moves made (``daemon_cpu_ms_per_move``, start-up included). ``cpu_ms_per_move``
gives the CPU of each process group over the measured window (after the ``--warmup``
share of moves, so without start-up) divided by the moves made in it: the service (its
``pbem serve`` processes with their rendering helpers), Postfix, Dovecot, the database
server's backends of the run's database, and the simulated players (this process);
Postfix, Dovecot and the database server are shared with anything else running on the
machine. ``load_avg`` is the load average before and after the run.

Moves per second counts the player moves SMTP accepted in the measured window (the first
``--warmup`` share of moves is left out), and the latency trend over the window's
quarters shows whether latency rises as the run goes on.
"""

from __future__ import annotations

import argparse
import email
import json
import os
import queue
import random
import secrets
import shutil
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import Message
from email.utils import getaddresses
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from benchmarks import proc_groups  # noqa: E402
from pbem.config import load_settings  # noqa: E402
from pbem.demo.bots import command_for, quoted_reply, view_of  # noqa: E402
from pbem.mail.tokens import parse_message_id  # noqa: E402
from pbem.service import Service  # noqa: E402
from pbem.store.db import make_engine, migrate  # noqa: E402
from tests.e2e.realstack_daemon import ServeProcess, service_config  # noqa: E402
from tests.e2e.realstack_players import (  # noqa: E402
    MailboxReader,
    SmtpLink,
    acts_now,
    decide_move,
)
from tests.fixtures.mailstack import MailStack, _start  # noqa: E402

_TURN = ("turn", "gameover")


@dataclass
class Game:
    id: int
    addresses: tuple[str, str]
    level: str
    last_move: int = -1  # the action count the newest move sent answers
    moved_at: float = 0.0  # when SMTP accepted that move
    over: bool = False
    watcher: Player | None = None  # polled first; the other player once it has the mail


@dataclass
class Move:
    game_id: int
    answers: int
    accepted_at: float
    accepted_wall: float = 0.0  # the same moment on the wall clock (outbox rows use it)


@dataclass
class Player:
    address: str
    password: str
    name: str
    reader: MailboxReader
    games: dict[int, Game] = field(default_factory=dict)
    latest: dict[int, int] = field(default_factory=dict)
    answered: dict[int, set[int]] = field(default_factory=dict)
    arrivals: list[tuple[int, int, float]] = field(default_factory=list)  # game, count, seen
    errors: int = 0
    next_poll: float = 0.0

    def waits_for(self, game: Game) -> bool:
        return not game.over and self.latest.get(game.id, -1) <= game.last_move

    def waiting_since(self) -> float | None:
        """Since when this player waits for mail of a move under way (None: it does not).

        Both mails of a move leave the daemon together, so a game's watcher is polled
        until it sees its mail, and only then the other player (whose mail is then
        usually there already): half the polling, and never a latency found early."""
        times = [
            game.moved_at
            for game in self.games.values()
            if self.waits_for(game)
            and (game.watcher is None or game.watcher is self or not game.watcher.waits_for(game))
        ]
        return min(times) if times else None

    def tick(self, domain: str, out: queue.Queue[Any]) -> int:
        """Read new mail; queue a reply for each game whose newest mail asks for a move."""
        new = self.reader.poll()
        seen = time.monotonic()
        newest: dict[int, tuple[int, Message]] = {}
        for raw in new:
            msg = email.message_from_bytes(raw)  # compat32: a fifth of the default's cost
            ours = parse_message_id(str(msg.get("Message-ID", "")), domain)
            if ours is None or not ours.seq.startswith("a") or "." not in ours.seq:
                continue
            number, kind = ours.seq[1:].split(".", 1)
            if kind not in _TURN or not number.isdigit():
                continue
            count = int(number)
            self.arrivals.append((ours.game_id, count, seen))
            if count > self.latest.get(ours.game_id, -1):
                self.latest[ours.game_id] = count
                newest[ours.game_id] = (count, msg)
        for game_id, (count, msg) in newest.items():
            game = self.games.get(game_id)
            view = view_of(msg)
            if game is None or view is None:
                continue
            if view.outcome is not None:
                game.over = True
                continue
            done = self.answered.setdefault(game_id, set())
            if count in done or not acts_now(view):
                continue
            done.add(count)
            action = decide_move(view, self.address, game.level)
            raw = quoted_reply(msg, self.address, self.name, command_for(action), datetime.now(UTC))
            answer_to = msg.get("Reply-To") or msg.get("From") or ""
            to = [addr for _, addr in getaddresses([str(answer_to)])]
            out.put((self, game, count, to, raw))
        return len(new)


class Bucket:
    """At most ``rate`` sends per second (0: no limit), shared by the sender threads."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.next_at = time.monotonic()
        self.lock = threading.Lock()

    def take(self) -> None:
        if self.rate <= 0:
            return
        with self.lock:
            now = time.monotonic()
            at = max(now, self.next_at)
            self.next_at = at + 1.0 / self.rate
        if at > now:
            time.sleep(at - now)


class Bench:
    def __init__(self, args: argparse.Namespace, stack: MailStack, inbound: str = "imap") -> None:
        self.args = args
        self.stack = stack
        self.inbound = inbound
        # Over LMTP the service has a domain of its own, routed to its listener.
        self.domain = stack.domain
        if inbound == "lmtp":
            self.domain = f"bench-{secrets.token_hex(3)}.{stack.domain}"
        self.players: list[Player] = []
        self.games: dict[int, Game] = {}
        self.moves: list[Move] = []
        self.moves_lock = threading.Lock()
        self.outbox: queue.Queue[Any] = queue.Queue()
        self.stop = threading.Event()
        self.bucket = Bucket(args.rate)
        self.send_errors = 0
        self.handed: dict[tuple[str, int], list[tuple[int, float]]] = {}

    # -- players ---------------------------------------------------------------------

    def poller(self, mine: list[Player]) -> None:
        """Poll each mailbox that waits for mail, every ``--poll`` seconds at first and then
        every tenth of the time waited so far (a latency is found at most that late)."""
        while not self.stop.is_set():
            busy = False
            now = time.monotonic()
            for player in mine:
                since = player.waiting_since()
                if since is None or now < player.next_poll:
                    continue
                try:
                    busy = player.tick(self.domain, self.outbox) > 0 or busy
                except Exception:
                    player.errors += 1
                player.next_poll = now + max(self.args.poll, 0.1 * (now - since))
            if not busy:
                self.stop.wait(self.args.poll / 2)

    def sender(self) -> None:
        link = SmtpLink(self.stack.smtp_host, self.stack.smtp_port)
        try:
            while not self.stop.is_set():
                try:
                    player, game, count, to, raw = self.outbox.get(timeout=0.2)
                except queue.Empty:
                    continue
                self.bucket.take()
                while True:
                    try:
                        link.send(player.address, to, raw)
                        break
                    except Exception:
                        self.send_errors += 1
                        if self.stop.wait(0.2):
                            return
                accepted = time.monotonic()
                wall = time.time()
                if count > game.last_move:
                    game.moved_at = accepted
                    game.last_move = count
                with self.moves_lock:
                    self.moves.append(Move(game.id, count, accepted, wall))
        finally:
            link.close()

    # -- the run -----------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        args = self.args
        work = Path(tempfile.mkdtemp(prefix="pbem-mail-bench-"))
        db_url = self.database(work)
        if self.inbound == "lmtp":
            port = _free_port()
            address, password = f"cribbage@{self.domain}", ""
            self.stack.route(self.domain, f"127.0.0.1:{port}")
            wiring = {
                "inbound_url": f"lmtp://127.0.0.1:{port}",
                "outbound_url": self.stack.smtp_url(),
            }
        else:
            address, password = self.stack.new_user("bench-svc")
            wiring = {"inbound_url": self.stack.imap_url(address, password, **self.imap_params())}
        configs = [
            service_config(
                work / f"worker{i}.toml",
                self.stack,
                address,
                password,
                db_url,
                poll_seconds=args.daemon_poll,
                **wiring,
            )
            for i in range(args.workers)
        ]
        settings = load_settings(configs[0])
        db = make_engine(db_url)
        service = Service(settings, db)
        rng = random.Random(args.seed)
        print(f"creating {2 * args.games} players and {args.games} games …", file=sys.stderr)
        for g in range(args.games):
            pair = []
            for seat in range(2):
                who, secret = self.stack.new_user(f"bench-{g}-{seat}")
                reader = MailboxReader(self.stack.imap_host, self.stack.imap_port, who, secret)
                pair.append(Player(who, secret, f"P{g}.{seat}", reader))
            level = args.level if args.level != "mixed" else rng.choice(["random", "good"])
            game_id = service.new_game(
                [(p.address, p.name) for p in pair],
                target=args.target,
                seed=f"bench-{args.seed}-{g}",
            )
            game = Game(game_id, (pair[0].address, pair[1].address), level, watcher=pair[0])
            self.games[game_id] = game
            for p in pair:
                p.games[game_id] = game
            self.players.extend(pair)
        # Every move mails both players ("mail all"), as the figures of BENCHMARKS.md were
        # measured: the latency is from a reply to both players' next mail.
        with db.begin() as connection:
            connection.execute(text("UPDATE player SET mail_all = :on"), {"on": True})
        db.dispose()

        workers = [
            ServeProcess(
                config,
                work / f"worker{i}.log",
                db_url,
                ("-m", "cProfile", "-o", str(work / f"worker{i}.prof")) if args.profile else (),
            )
            for i, config in enumerate(configs)
        ]
        threads = [
            threading.Thread(target=self.poller, args=(self.players[i :: args.threads],))
            for i in range(args.threads)
        ] + [threading.Thread(target=self.sender) for _ in range(args.senders)]
        logs = self.stack_logs()
        marks = {path: path.stat().st_size if path.exists() else 0 for path in logs}
        load_before = [round(x, 2) for x in os.getloadavg()]
        started = time.monotonic()
        for game in self.games.values():
            game.moved_at = started  # the first mails are on their way
        cpu_start = os.times()
        database = None if args.db == "sqlite" else make_url(db_url).database
        warm = int(args.moves * args.warmup)
        window_start: tuple[int, dict[int, tuple[str, float]]] | None = None
        groups_cpu: dict[str, float] = {}
        window_moves = 0
        for worker in workers:
            worker.start()
        for thread in threads:
            thread.daemon = True
            thread.start()
        try:
            while True:
                with self.moves_lock:
                    made = len(self.moves)
                if window_start is None and made >= warm:
                    pids = [worker.pid for worker in workers if worker.running()]
                    window_start = (made, proc_groups.snapshot(pids, database))
                if made >= args.moves or all(g.over for g in self.games.values()):
                    break
                if time.monotonic() - started > args.seconds:
                    print("time limit reached", file=sys.stderr)
                    break
                time.sleep(0.5)
            time.sleep(min(5.0, 3 * args.poll + 2.0))  # let the last moves' mails arrive
        finally:
            worker_cpu = [_cpu(worker.pid) for worker in workers if worker.running()]
            if window_start is not None:
                pids = [worker.pid for worker in workers if worker.running()]
                groups_cpu = proc_groups.spent(
                    window_start[1], proc_groups.snapshot(pids, database)
                )
                with self.moves_lock:
                    window_moves = len(self.moves) - window_start[0]
            self.stop.set()
            for thread in threads:
                thread.join(timeout=30)
            for worker in workers:
                worker.stop()
                worker.close()
            for player in self.players:
                player.reader.close()
            if self.inbound == "lmtp":
                self.stack.unroute(self.domain)
        elapsed = time.monotonic() - started
        self.handed = self.handed_times(db_url)
        bench_cpu = sum(os.times()[:2]) - sum(cpu_start[:2])
        result = self.report(elapsed, worker_cpu, bench_cpu, work)
        if window_moves:
            result["cpu_ms_per_move"] = {
                group: round(seconds / window_moves * 1000, 2)
                for group, seconds in groups_cpu.items()
            }
            result["cpu_window_moves"] = window_moves
        result["load_avg"] = {
            "before": load_before,
            "after": [round(x, 2) for x in os.getloadavg()],
        }
        result["stack_disruptions"] = self.disruptions(marks)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
            result.pop("work_dir")
        return result

    def handed_times(self, db_url: str) -> dict[tuple[str, int], list[tuple[int, float]]]:
        """(recipient, game) → (action count, wall time Postfix accepted it) of every turn
        mail the service sent."""
        db = make_engine(db_url)
        out: dict[tuple[str, int], list[tuple[int, float]]] = {}
        try:
            with db.connect() as connection:
                rows = connection.execute(
                    text("SELECT message_id, recipient, game_id, sent_at FROM outbox")
                ).all()
        finally:
            db.dispose()
        for message_id, recipient, game_id, sent_at in rows:
            ours = parse_message_id(message_id, self.domain)
            if ours is None or sent_at is None or game_id is None:
                continue
            number, _, kind = ours.seq[1:].partition(".")
            if not ours.seq.startswith("a") or kind not in _TURN or not number.isdigit():
                continue
            if isinstance(sent_at, str):
                sent_at = datetime.fromisoformat(sent_at)
            if sent_at.tzinfo is None:
                sent_at = sent_at.replace(tzinfo=UTC)
            out.setdefault((recipient, game_id), []).append((int(number), sent_at.timestamp()))
        return out

    def stack_logs(self) -> list[Path]:
        return [self.stack.state_dir / "log" / name for name in ("dovecot.log", "postfix.log")]

    def disruptions(self, marks: dict[Path, int]) -> dict[str, int]:
        """What else happened to the shared mail stack during the run (other test sessions
        restart it): Dovecot starts, Postfix stops and smtpd throttling."""
        found = {"dovecot_restarts": 0, "postfix_stops": 0, "smtpd_throttled": 0}
        for path, mark in marks.items():
            try:
                with path.open("rb") as fh:
                    fh.seek(mark)
                    text = fh.read().decode("utf-8", "replace")
            except OSError:
                continue
            found["dovecot_restarts"] += text.count("starting up for")
            found["postfix_stops"] += text.count("stopping the Postfix mail system")
            found["smtpd_throttled"] += text.count("bad command startup -- throttling")
        return found

    def imap_params(self) -> dict[str, str]:
        params = {"idle": "yes" if self.args.idle else "no", "poll": str(self.args.daemon_poll)}
        if self.args.processed:
            params["processed"] = self.args.processed
        return params

    def database(self, work: Path) -> str:
        args = self.args
        if args.db == "sqlite":
            url = f"sqlite:///{work / 'pbem.sqlite'}"
        else:
            url = args.db
            base, _, name = url.rpartition("/")
            admin = create_engine(
                f"{base}/postgres".replace("postgresql://", "postgresql+psycopg://"),
                isolation_level="AUTOCOMMIT",
            )
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
                conn.execute(text(f'CREATE DATABASE "{name}"'))
            admin.dispose()
        migrate(url)
        return url

    def report(
        self, elapsed: float, worker_cpu: list[float], bench_cpu: float, work: Path
    ) -> dict[str, Any]:
        args = self.args
        seen: dict[tuple[str, int], list[tuple[int, float]]] = {}
        for player in self.players:
            for game_id, count, at in player.arrivals:
                seen.setdefault((player.address, game_id), []).append((count, at))
        moves = sorted(self.moves, key=lambda m: m.accepted_at)
        moves = moves[: args.moves]  # those made while the run waited for stragglers: out
        skip = int(len(moves) * args.warmup)
        measured = moves[skip:]
        latencies: list[tuple[float, float]] = []  # (accepted_at, latency)
        handed: list[float] = []  # Postfix accepted the reply → Postfix accepted the answer
        unanswered = 0
        for move in measured:
            game = self.games[move.game_id]
            sent = []
            for address in game.addresses:
                later = [
                    at
                    for count, at in self.handed.get((address, move.game_id), [])
                    if count > move.answers
                ]
                if later:
                    sent.append(min(later))
            if len(sent) == 2:
                handed.append(max(sent) - move.accepted_wall)
            times = []
            for address in game.addresses:
                later = [
                    at
                    for count, at in seen.get((address, move.game_id), [])
                    if count > move.answers
                ]
                if later:
                    times.append(min(later))
            if len(times) == 2:
                latencies.append((move.accepted_at, max(times) - move.accepted_at))
            else:
                unanswered += 1
        window = (measured[-1].accepted_at - measured[0].accepted_at) if len(measured) > 1 else 0.0
        values = sorted(lat for _, lat in latencies)
        handed.sort()
        cpu = sum(worker_cpu)
        quarters = []
        if latencies and window > 0:
            start = measured[0].accepted_at
            for q in range(4):
                lo, hi = start + q * window / 4, start + (q + 1) * window / 4
                part = [lat for at, lat in latencies if lo <= at < hi or (q == 3 and at == hi)]
                count = sum(
                    1
                    for m in measured
                    if lo <= m.accepted_at < hi or (q == 3 and m.accepted_at == hi)
                )
                quarters.append(
                    {
                        "moves_per_s": round(count / (window / 4), 1),
                        "median_ms": round(statistics.median(part) * 1000) if part else None,
                        "p95_ms": round(_pct(sorted(part), 95) * 1000) if part else None,
                    }
                )
        return {
            "games": args.games,
            "inbound": self.inbound,
            "db": "sqlite" if args.db == "sqlite" else "postgresql",
            "workers": args.workers,
            "idle": args.idle,
            "processed_folder": args.processed or None,
            "rate_cap": args.rate,
            "target": args.target,
            "moves_total": len(moves),
            "moves_measured": len(measured),
            "window_s": round(window, 1),
            "moves_per_s": round(len(measured) / window, 1) if window else None,
            "latency_ms": {
                "median": round(statistics.median(values) * 1000) if values else None,
                "p95": round(_pct(values, 95) * 1000) if values else None,
                "p99": round(_pct(values, 99) * 1000) if values else None,
                "max": round(values[-1] * 1000) if values else None,
            },
            "handed_ms": {
                "median": round(statistics.median(handed) * 1000) if handed else None,
                "p95": round(_pct(handed, 95) * 1000) if handed else None,
                "p99": round(_pct(handed, 99) * 1000) if handed else None,
            },
            "quarters": quarters,
            "moves_without_both_mails_seen": unanswered,
            "poll_s": args.poll,
            "elapsed_s": round(elapsed, 1),
            "daemon_cpu_s": [round(c, 1) for c in worker_cpu],
            "daemon_cpu_ms_per_move": round(cpu / len(moves) * 1000, 1) if moves else None,
            "bench_cpu_s": round(bench_cpu, 1),
            "player_errors": sum(p.errors for p in self.players),
            "send_retries": self.send_errors,
            "work_dir": str(work),
        }


def _pct(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    index = min(len(values) - 1, max(0, round(pct / 100 * len(values) + 0.5) - 1))
    return values[index]


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="concurrent 2-player games")
    parser.add_argument("--moves", type=int, default=2000, help="stop after this many moves")
    parser.add_argument("--db", default="sqlite", help="sqlite, or a postgresql:// URL")
    parser.add_argument("--workers", type=int, default=1, help="pbem serve processes (PostgreSQL)")
    parser.add_argument("--rate", type=float, default=0.0, help="cap on moves/s (0: none)")
    parser.add_argument("--target", type=int, default=121, choices=(61, 121))
    parser.add_argument("--level", default="random", choices=("random", "good", "mixed"))
    parser.add_argument("--poll", type=float, default=0.025, help="players' IMAP poll (s)")
    parser.add_argument("--threads", type=int, default=6, help="player polling threads")
    parser.add_argument("--senders", type=int, default=4, help="player SMTP threads")
    parser.add_argument("--warmup", type=float, default=0.1, help="share of moves left out")
    parser.add_argument("--seconds", type=float, default=600.0, help="time limit")
    parser.add_argument("--daemon-poll", type=float, default=5.0, help="poll_seconds")
    parser.add_argument("--no-idle", dest="idle", action="store_false", help="daemon polls")
    parser.add_argument(
        "--processed", default="Done", help="folder processed mail moves to ('': flag only)"
    )
    parser.add_argument(
        "--inbound",
        default="imap",
        help="imap, lmtp, or both as imap,lmtp (one after the other, side by side)",
    )
    parser.add_argument("--seed", default="1")
    parser.add_argument("--profile", action="store_true", help="cProfile each pbem serve")
    parser.add_argument("--keep", action="store_true", help="keep the database and logs")
    args = parser.parse_args()
    if args.workers > 1 and args.db == "sqlite":
        parser.error("--workers needs a PostgreSQL --db (SQLite allows one pbem serve)")
    inbounds = [name.strip() for name in args.inbound.split(",") if name.strip()]
    if not inbounds or set(inbounds) - {"imap", "lmtp"}:
        parser.error("--inbound takes imap, lmtp or imap,lmtp")
    stack = _start()
    results = []
    for inbound in inbounds:
        result = Bench(args, stack, inbound).run()
        result["machine"] = {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "load_avg_at_end": [round(x, 2) for x in os.getloadavg()],
        }
        results.append(result)
    print(json.dumps(results[0] if len(results) == 1 else results, indent=1))


if __name__ == "__main__":
    main()
