"""How many game mails a player gets, and how large they are.

    python benchmarks/mail_size.py --games 3

Plays ``--games`` whole games to 121 for each table (2 players, 3 players, 4 players in
partnerships) through the service on a temporary SQLite file: the player to move replies
to their latest game mail with the move the ``good`` computer player chooses from the
game, as a mail client would (quoted, threaded, to the seat's reply address). Players
keep the default mail choice (a mail on their turn and on news, not after each of their
own moves). Reports, per table, the replies, the game mails per player and per reply,
and the size of a turn mail as queued (headers, text and HTML parts, view.json): median,
95th percentile and largest, with the part that makes most of it; then the largest
game-over mail (with the replay page attached, as ``mail_replay`` is on by default).
"""

from __future__ import annotations

import argparse
import email
import email.policy
import random
import statistics
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from sqlmodel import Session, select

from engine.computer import choose_action
from pbem.config import Settings
from pbem.demo.bots import command_for, quoted_reply
from pbem.service import Service
from pbem.store import models as m
from pbem.store.db import make_engine, migrate

GAME_KINDS = ("turn", "gameover")


def _latest(service: Service, game_id: int, address: str) -> email.message.EmailMessage:
    with Session(service.db) as session:
        row = session.exec(
            select(m.Outbox)
            .where(m.Outbox.game_id == game_id, m.Outbox.recipient == address)
            .order_by(m.Outbox.id.desc())  # type: ignore[union-attr]
        ).first()
        assert row is not None, f"no mail to {address} in game {game_id}"
        message = email.message_from_bytes(row.raw, policy=email.policy.default)
        assert isinstance(message, email.message.EmailMessage)
        return message


def _parts(raw: bytes) -> dict[str, int]:
    """Encoded bytes per part of a mail (text, html, view.json) and of its headers."""
    head, _, _ = raw.partition(b"\r\n\r\n")
    sizes = {"headers": len(head)}
    message = email.message_from_bytes(raw, policy=email.policy.default)
    for part in message.walk():
        if part.is_multipart():
            continue
        name = part.get_filename() or part.get_content_subtype()
        sizes[name] = len(part.as_bytes())
    return sizes


def play(service: Service, players: int, seed: str) -> tuple[int, int, list[tuple[str, bytes]]]:
    """One game to 121; (replies, game mails, each game mail's kind and bytes)."""
    names = ("Alice", "Bob", "Carol", "Dave")
    people = [(f"{names[i].lower()}.{seed}@bench.example", names[i]) for i in range(players)]
    game_id = service.new_game(people, target=121, seed=seed)
    rng = random.Random(seed)
    replies = 0
    while True:
        with Session(service.db) as session:
            row = session.get(m.Game, game_id)
            assert row is not None
            if row.status != "active":
                break
            game = service.load_game(session, row)
        seat = game.to_act()[0]
        action = choose_action(game, seat, rng, "good")
        address = people[seat][0]
        raw = quoted_reply(
            _latest(service, game_id, address),
            address,
            address,
            command_for(action),
            datetime.now(UTC),
        )
        inbound_id, _ = service.receive(raw, "bench")
        outcome = service.process(inbound_id)
        if outcome.status != "applied":
            raise SystemExit(f"move not applied in game {game_id}: {outcome}")
        replies += 1
    with Session(service.db) as session:
        mails = [
            (r.kind, r.raw)
            for r in session.exec(select(m.Outbox).where(m.Outbox.game_id == game_id)).all()
            if r.kind in GAME_KINDS
        ]
    return replies, len(mails), mails


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=3, help="games per table")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="pbem-mailsize-"))
    url = f"sqlite:///{tmp / 'mails.sqlite'}"
    engine = make_engine(url)
    migrate(engine)
    service = Service(
        Settings(data_dir=tmp, database_url=url, domain="bench.example", render_processes=0),
        engine,
    )
    print(
        "table      replies  mails/player  mails/reply  turn median  p95     max     "
        "largest part     game over max"
    )
    for players in (2, 3, 4):
        replies = mails = 0
        raws: list[bytes] = []
        over: list[bytes] = []
        for g in range(args.games):
            r, n, made = play(service, players, f"size-{players}-{g}")
            replies, mails = replies + r, mails + n
            raws.extend(raw for kind, raw in made if kind == "turn")
            over.extend(raw for kind, raw in made if kind == "gameover")
        sizes = sorted(len(r) for r in raws)
        p95 = sizes[int(0.95 * (len(sizes) - 1))]
        largest = max(raws, key=len)
        parts = _parts(largest)
        part, size = max(parts.items(), key=lambda item: item[1])
        print(
            f"{players} players  {replies / args.games:7.0f}  "
            f"{mails / args.games / players:12.1f}  {mails / replies:11.2f}  "
            f"{statistics.median(sizes):11,.0f}  {p95:6,}  {sizes[-1]:6,}  "
            f"{part} {size:,} B  {max(len(r) for r in over):,}"
        )


if __name__ == "__main__":
    main()
