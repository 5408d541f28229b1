"""``pbem demo``: a complete game played by email on the embedded default.

The daemon runs in a background thread over a SQLite file and Maildir folders;
two built-in players, Alice and Bob, read their own Maildirs and reply by
email into the service's inbox.  Alice's emails are printed as they arrive.

``pbem demo --lobby`` starts the game the way players do, by mail through the lobby
(``lobby = open``): Alice writes ``challenge bob@example.com`` to the plain service
address and confirms her address when the service asks (she never wrote before), Bob
answers the invitation with ``accept``, and the game the service then starts is played
by email as above.
"""

from __future__ import annotations

import email.policy
import random
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.rule import Rule
from sqlalchemy import Engine
from sqlmodel import Session, select

from engine import player_view
from pbem.config import Settings
from pbem.demo.bots import MailboxPlayer, maildir_delivery, maildir_fetch, quoted_reply, text_of
from pbem.render import named_board, render_board_text
from pbem.run.runtime import build_daemon
from pbem.service import Service, ServiceError
from pbem.store import models as m
from pbem.store.db import make_engine, migrate

ALICE = ("alice@example.com", "Alice")
BOB = ("bob@example.com", "Bob")


def run_demo(
    directory: Path | None,
    *,
    target: int = 121,
    seed: str | None = None,
    console: Console | None = None,
    quiet: bool = False,
    timeout: float = 300.0,
    lobby: bool = False,
) -> int:
    """Play one game; return its id.  Raises ServiceError if it does not finish in time.

    Without ``seed`` the game is dealt by the verifiable-deal protocol: Alice and Bob
    each cut for the deal first (they answer the cut request by mail, as a person
    would), and the archive verifies at the end (``pbem verify``). A ``seed`` makes a
    chosen, unverifiable deal.

    ``lobby``: the game is started by mail — a challenge and its acceptance — not by the
    admin (the deal is then the fair one: the players cut, not ``seed``)."""
    console = console or Console()
    root = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="pbem-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    # The demo's own SQLite file and Maildirs, whatever PBEM_* settings the environment has.
    settings = Settings(
        data_dir=root,
        database_url="",
        inbound_url="",
        outbound_url="",
        domain="pbem.localhost",
        poll_seconds=0.02,
        reminder_hours=0,
        timeout_days=0,
        fair_deals=True,
        lobby="open" if lobby else "invite-only",
    )
    db = make_engine(settings.db_url)
    migrate(db)
    daemon = build_daemon(settings, db)
    service: Service = daemon.service
    inbox = Path(settings.inbound.removeprefix("maildir:"))
    outbox = Path(settings.outbound.removeprefix("maildir:"))
    deliver = maildir_delivery(inbox)
    alice = MailboxPlayer(
        ALICE[0], ALICE[1], maildir_fetch(outbox / ALICE[0]), deliver, random.Random(1)
    )
    bob = MailboxPlayer(BOB[0], BOB[1], maildir_fetch(outbox / BOB[0]), deliver, random.Random(2))

    thread = threading.Thread(target=daemon.run, name="pbem-daemon", daemon=True)
    started = time.monotonic()
    if lobby:
        thread.start()
        try:
            game_id = _challenge(settings, db, alice, bob, target, console, started + timeout)
        except BaseException:
            daemon.stop()
            thread.join(timeout=10)
            raise
    else:
        game_id = service.new_game([ALICE, BOB], target=target, seed=seed)
    console.print(Rule(f"pbem demo — game {game_id}: Alice vs Bob to {target}, by email"))
    console.print(f"files: {root}", highlight=False)
    if not lobby:
        thread.start()
    try:
        while True:
            for msg in alice.play():
                if not quiet:
                    console.print(Rule(f"to Alice: {msg['Subject']}", style="dim"))
                    console.print(text_of(msg), highlight=False, markup=False)
            bob.play()
            with Session(db) as session:
                game_row = session.get(m.Game, game_id)
                assert game_row is not None
                finished = game_row.status == m.GameStatus.FINISHED.value
                outcome = game_row.outcome
            if finished and not _outbox_pending(db):
                for msg in alice.play():
                    if not quiet:
                        console.print(Rule(f"to Alice: {msg['Subject']}", style="dim"))
                        console.print(text_of(msg), highlight=False, markup=False)
                break
            if time.monotonic() - started > timeout:
                raise ServiceError("the demo game did not finish in time")
            time.sleep(0.01)
    finally:
        daemon.stop()
        thread.join(timeout=10)
    elapsed = time.monotonic() - started
    assert outcome is not None
    with Session(db) as session:
        game_row = session.get(m.Game, game_id)
        assert game_row is not None
        game = service.load_game(session, game_row)
    names = (ALICE[1], BOB[1])
    board = named_board(player_view(game, 0), names)
    winners = " and ".join(names[s] for s in outcome["winner_seats"])
    won = "win" if len(outcome["winner_seats"]) > 1 else "wins"
    console.print(Rule("Final board"))
    console.print(
        " — ".join(f"{line.label} {line.front}" for line in board.scores) + f" ({winners} {won})",
        highlight=False,
        markup=False,
    )
    console.print("\n" + render_board_text(board), highlight=False, markup=False)
    console.print(
        f"{alice.replies + bob.replies} replies by email in {elapsed:.1f} s;"
        f" game value {outcome['value']}",
        highlight=False,
    )
    console.print(
        f"replay it:  pbem --data-dir {root} game replay {game_id} --verify", highlight=False
    )
    if seed is None:
        console.print(f"check the deals:  pbem --data-dir {root} verify --game {game_id}")
    return game_id


def _challenge(
    settings: Settings,
    db: Engine,
    alice: MailboxPlayer,
    bob: MailboxPlayer,
    target: int,
    console: Console,
    deadline: float,
) -> int:
    """Start the game by mail: Alice challenges Bob, Bob accepts; the new game's id."""
    service_address = settings.address
    line = f"challenge {BOB[0]} to {target}"
    console.print(Rule("the lobby: a game started by mail"))
    console.print(f"Alice writes to {service_address}:  {line}", highlight=False)
    alice.deliver(_plain_mail(ALICE, service_address, line))
    # Alice never wrote before: the service first asks her to confirm her address.
    asking = _wait_for(lambda: alice.read_new(), deadline, "Alice's confirmation request")[0]
    console.print(f"Alice gets:  {asking['Subject']}", highlight=False, markup=False)
    console.print(f"Alice replies to {asking['Reply-To']}:  yes", highlight=False)
    alice.deliver(quoted_reply(asking, ALICE[0], ALICE[1], "yes", datetime.now(UTC)))
    invitation = _wait_for(lambda: bob.read_new(), deadline, "Bob's invitation")[0]
    console.print(f"Bob gets:  {invitation['Subject']}", highlight=False, markup=False)
    console.print(f"Bob replies to {invitation['Reply-To']}:  accept", highlight=False)
    bob.deliver(quoted_reply(invitation, BOB[0], BOB[1], "accept", datetime.now(UTC)))

    def started() -> list[int]:
        with Session(db) as session:
            return [g for g in session.exec(select(m.Game.id)).all() if g is not None]

    game_id = _wait_for(started, deadline, "the game to start")[0]
    console.print(f"The service starts game {game_id} and mails both players.", highlight=False)
    return game_id


def _wait_for(found: Callable[[], list[Any]], deadline: float, what: str) -> list[Any]:
    """Poll ``found`` until it finds something; ServiceError past ``deadline``."""
    while True:
        items = found()
        if items:
            return items
        if time.monotonic() > deadline:
            raise ServiceError(f"the demo waited too long for {what}")
        time.sleep(0.01)


def _plain_mail(person: tuple[str, str], to: str, body: str) -> bytes:
    """A new mail (not a reply) from ``person`` to ``to``."""
    msg = EmailMessage(policy=email.policy.SMTP)
    msg["From"] = f"{person[1]} <{person[0]}>"
    msg["To"] = to
    msg["Subject"] = body
    msg["Date"] = format_datetime(datetime.now(UTC))
    msg["Message-ID"] = make_msgid(domain=person[0].split("@", 1)[-1])
    msg.set_content(body + "\n")
    return msg.as_bytes()


def _outbox_pending(db: object) -> bool:
    from sqlalchemy import Engine
    from sqlmodel import func, select

    assert isinstance(db, Engine)
    with Session(db) as session:
        count = session.exec(
            select(func.count())
            .select_from(m.Outbox)
            .where(
                m.Outbox.status.in_(["pending", "sending"])  # type: ignore[attr-defined]
            )
        ).one()
    return bool(count)
