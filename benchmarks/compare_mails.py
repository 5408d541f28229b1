"""Every mail the service writes for a fixed set of games, as one hash: run it before and
after a change that must not change behaviour, and compare.

    python benchmarks/compare_mails.py --out /tmp/mails-before
    python benchmarks/compare_mails.py --out /tmp/mails-after
    cmp /tmp/mails-before/mails.txt /tmp/mails-after/mails.txt

Plays 2-, 3- and 4-player games (some with muggins, some with a computer seat) through
`Service` on a SQLite file, with a fixed clock and seeded randomness: the players'
moves, with mistakes among them (illegal and ambiguous cards, no command, a move sent
twice), questions (help, history, hand, archive, mail all/turns), mail to the plain
address (routed to the only game, or "which game?"), an unknown sender, a wrong seat,
a tokenless resign, pauses, resumes, aborts, resends, rematches, reminders and
timeouts. Messages go one by one (`process`) and in batches (`process_many`).

Writes ``mails.txt`` (every outbox row: id, kind, recipient, Message-ID and the raw
bytes with the MIME boundaries normalised; then every inbound row's outcome) and prints
its SHA-256 and the number of mails.
"""

from __future__ import annotations

import argparse
import contextlib
import email
import email.policy
import hashlib
import random
import re
import secrets
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlmodel import Session, select

from engine.computer import choose_action
from pbem.config import Settings
from pbem.demo.bots import command_for, quoted_reply
from pbem.service import Service, ServiceError
from pbem.store import models as m
from pbem.store.db import make_engine, migrate

DOMAIN = "cmp.example"
BOUNDARY = re.compile(rb"=_[0-9a-f]{16}")


class Clock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def tick(self, minutes: float = 7) -> None:
        self.now += timedelta(minutes=minutes)


def seeded_secrets(seed: int) -> None:
    """`secrets` drawing from a seeded generator (tokens, thread and error ids)."""
    rng = random.Random(seed)

    def token_bytes(nbytes: int | None = None) -> bytes:
        return rng.randbytes(32 if nbytes is None else nbytes)

    def token_hex(nbytes: int | None = None) -> str:
        return token_bytes(nbytes).hex()

    secrets.token_bytes = token_bytes
    secrets.token_hex = token_hex


def latest(service: Service, game_id: int, address: str) -> email.message.Message | None:
    with Session(service.db) as session:
        row = session.exec(
            select(m.Outbox)
            .where(m.Outbox.game_id == game_id, m.Outbox.recipient == address)
            .order_by(m.Outbox.id.desc())  # type: ignore[union-attr]
        ).first()
        if row is None:
            return None
        return email.message_from_bytes(row.raw, policy=email.policy.default)


class Run:
    def __init__(self, tmp: Path) -> None:
        url = f"sqlite:///{tmp / 'compare.sqlite'}"
        engine = make_engine(url)
        migrate(engine)
        self.clock = Clock()
        settings = Settings(
            data_dir=tmp,
            database_url=url,
            domain=DOMAIN,
            reminder_hours=24,
            timeout_days=3,
            render_processes=0,  # every mail made here: the seeded ids stay in order
        )
        self.service = Service(settings, engine, clock=self.clock)
        self.rng = random.Random(11)
        self.sent = 0
        self.queue: list[bytes] = []

    def mail(self, sender: str, body: str, original: email.message.Message | None) -> None:
        """Queue a reply to ``original`` (or a mail to the plain address)."""
        if original is None:
            original = email.message.Message()
            original["From"] = f"cribbage@{DOMAIN}"
            original["Subject"] = "hello"
        raw = quoted_reply(original, sender, sender.split("@")[0].title(), body, self.clock())
        self.sent += 1
        raw = re.sub(rb"Message-ID: <[^>]*>", f"Message-ID: <in{self.sent}@x>".encode(), raw)
        self.queue.append(raw)

    def flush(self) -> None:
        """Process the queued mail: in batches of up to 6, or one by one every third time."""
        while self.queue:
            self.clock.tick()
            if self.sent % 3 == 0:
                raw = self.queue.pop(0)
                inbound_id, _ = self.service.receive(raw, "compare")
                self.service.process(inbound_id)
                continue
            part, self.queue = self.queue[:6], self.queue[6:]
            stored = self.service.receive_many([(raw, False) for raw in part], "compare")
            self.service.process_many([i for i, _ in stored])

    def seats(self, game_id: int) -> list[str]:
        with Session(self.service.db) as session:
            return [s.player.email for s in self.service._seats(session, game_id)]

    def game(self, game_id: int):  # type: ignore[no-untyped-def]
        with Session(self.service.db) as session:
            row = session.get(m.Game, game_id)
            assert row is not None
            return row, self.service.load_game(session, row)

    def round(self, ids: list[int], step: int) -> None:
        """Every active game's players to act reply once, sometimes with a slip."""
        for game_id in ids:
            row, game = self.game(game_id)
            if row.status != "active" or game.is_over:
                continue
            emails = self.seats(game_id)
            robots = set(row.settings.get("computer", ()))
            for seat in game.to_act():
                if seat in robots:
                    continue
                who = emails[seat]
                original = latest(self.service, game_id, who)
                roll = self.rng.random()
                action = choose_action(game, seat, self.rng, "random")
                body = command_for(action)
                if roll < 0.04:
                    body = "play 5h\n" + body if self.rng.random() < 0.5 else "i think so"
                elif roll < 0.06:
                    body = body + "\nhistory"
                elif roll < 0.08:
                    body = "help"
                elif roll < 0.10:
                    body = "hand"
                elif roll < 0.11:
                    body = "mail all" if self.rng.random() < 0.5 else "mail turns"
                elif roll < 0.12:
                    body = "archive"
                elif roll < 0.13:
                    body = "play j"
                self.mail(who, body, original)
                if roll > 0.985:
                    self.mail(who, body, original)  # sent twice
                if 0.975 < roll < 0.98:
                    self.mail(emails[(seat + 1) % len(emails)], body, original)  # wrong seat
                if 0.97 < roll < 0.975:
                    self.mail("stranger@else.example", body, original)
                if 0.965 < roll < 0.97:
                    self.mail(who, body, None)  # plain address
                if 0.96 < roll < 0.962:
                    self.mail(who, "resign", None)
        self.flush()
        if step % 17 == 5:
            self.clock.tick(60 * 25)  # past the reminder
            self.service.run_timers()
        if step % 41 == 40:
            self.clock.tick(60 * 24 * 4)  # past the deadline
            self.service.run_timers()


def play(out: Path) -> tuple[str, int]:
    seeded_secrets(5)
    with tempfile.TemporaryDirectory(prefix="pbem-compare-") as tmp:
        run = Run(Path(tmp))
        service = run.service
        ids: list[int] = []
        kinds = [
            (2, {}),
            (3, {"muggins": True}),
            (4, {}),
            (2, {"muggins": True, "computer": [1]}),
            (3, {"computer": [2]}),
            (2, {"skunk": "none"}),
        ]
        for g in range(18):
            players, extra = kinds[g % len(kinds)]
            people = [
                (f"g{g}p{s}@play.example", None if s else f"Player {g}") for s in range(players)
            ]
            ids.append(service.new_game(people, seed=f"compare-{g}", target=121, **extra))  # type: ignore[arg-type]
        # A player in one game only writes to the plain address: routed to that game.
        solo = service.new_game(
            [("solo@play.example", "Solo"), ("duo@play.example", None)], seed="solo"
        )
        ids.append(solo)
        run.mail("solo@play.example", "hand", None)
        run.mail("g0p0@play.example", "help", None)  # several games: the list
        run.mail("g0p0@play.example", "discard 5h 6h", None)  # several games: which game?
        run.mail("nobody@play.example", "help", None)
        run.flush()
        for step in range(160):
            if step == 8:
                service.set_status(ids[1], "paused", "holiday")
                service.resend(ids[2])
            if step == 14:
                service.set_status(ids[1], "active")
            if step == 12:
                service.set_status(ids[4], "aborted")
                service.resend(ids[4])
            if step == 60:
                for game_id in ids[:6]:
                    with contextlib.suppress(ServiceError):
                        ids.append(service.rematch(game_id))
            run.round(ids, step)
        for game_id in ids:  # after the game: its archive, and questions
            row, game = run.game(game_id)
            if game.is_over:
                who = run.seats(game_id)[0]
                run.mail(who, "archive\nhistory", latest(service, game_id, who))
                run.mail(who, "play 5h", latest(service, game_id, who))
        run.flush()
        lines: list[bytes] = []
        with Session(service.db) as session:
            rows = session.exec(select(m.Outbox).order_by(m.Outbox.id)).all()  # type: ignore[arg-type]
            for row in rows:
                head = f"== {row.id} {row.kind} {row.recipient} {row.message_id} {row.game_id}\n"
                lines.append(head.encode())
                lines.append(BOUNDARY.sub(b"=_BOUNDARY", row.raw) + b"\n")
            count = len(rows)
            inbound = session.exec(select(m.Inbound).order_by(m.Inbound.id)).all()  # type: ignore[arg-type]
            for inb in inbound:
                lines.append(f"-- {inb.id} {inb.status} {inb.game_id} {inb.reason}\n".encode())
            games = session.exec(select(m.Game).order_by(m.Game.id)).all()  # type: ignore[arg-type]
            for game_row in games:
                lines.append(
                    f"## {game_row.id} {game_row.status} {game_row.action_count} "
                    f"{game_row.state_hash} {game_row.outcome}\n".encode()
                )
        data = b"".join(lines)
        out.mkdir(parents=True, exist_ok=True)
        (out / "mails.txt").write_bytes(data)
        return hashlib.sha256(data).hexdigest(), count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for mails.txt")
    args = parser.parse_args()
    digest, count = play(args.out)
    print(f"{count} mails, sha256 {digest}")


if __name__ == "__main__":
    main()
