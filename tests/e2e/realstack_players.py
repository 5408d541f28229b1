"""Players on the real mail stack: each reads its own Dovecot mailbox over IMAP and answers
over SMTP through Postfix, the way a mail client does — with decisions that are a pure
function of what the mail shows, so a game replays move for move.

- :func:`decide_move` picks a move from a :class:`~engine.PlayerView` with a generator
  seeded from the player and the position (``identity/hand/plays/phase``) and without the
  view's event window (which differs between a turn mail and, say, an error reply), so
  the same position always gets the same answer, faults or not.
- :func:`acts_now` says whether a view asks this player to move now. Both players may lay
  away at once; here the lower seat always goes first (the other waits for the mail that
  shows it done), so the order of a game's moves does not depend on timing.
- :func:`reference_log` plays the same game in the engine alone, with the same decisions:
  the action log an uninterrupted run must produce.
- :class:`ImapPlayer` answers only a game's newest turn mail (the action count in our
  Message-ID orders them, whatever order delivery took), once per position; a reply that
  cannot be sent (Postfix stopped) is kept and sent again, with the same Message-ID.
- :class:`PlayerPool` runs players on a few threads, each polling its players' mailboxes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import email
import imaplib
import logging
import random
import re
import smtplib
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import Message
from email.parser import BytesHeaderParser
from email.utils import getaddresses
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session, select

from engine import Game, PlayerView, action_to_json, player_view
from engine import Settings as GameSettings
from engine.actions import Action
from engine.computer import decide
from pbem.demo.bots import command_for, quoted_reply, view_of
from pbem.mail.tokens import parse_message_id
from pbem.store import models as m

log = logging.getLogger("tests.realstack")

_TURN_SEQ = re.compile(r"a(\d+)\.(turn|gameover)")

LogEntry = tuple[int | None, dict[str, Any], bool]
"""One logged action as the service stores it: (seat, action JSON, applied automatically)."""


# -- decisions --------------------------------------------------------------------------


def decide_move(view: PlayerView, identity: str, level: str = "random") -> Action:
    """The move of player ``identity`` in ``view``: the same position, the same move."""
    rng = random.Random(f"{identity}/{view.hand_no}/{len(view.plays)}/{view.phase}")
    return decide(dataclasses.replace(view, events=()), rng, level)


def mail_every_move(db: Engine, addresses: Iterable[str]) -> None:
    """Give these players a mail after every move ("mail all"). These players move in a
    fixed order (the lowest seat first, see `acts_now`), so the other one of two who must
    both lay away waits for the mail after the first one's discard, which brings it nothing
    new otherwise."""
    with Session(db) as session:
        for address in addresses:
            player = session.exec(select(m.Player).where(m.Player.email == address)).one()
            player.mail_all = True
            session.add(player)
        session.commit()


def acts_now(view: PlayerView) -> bool:
    """Whether ``view`` asks its seat to move now (the lowest seat of those to act)."""
    return (
        view.outcome is None
        and view.my_turn
        and bool(view.legal)
        and bool(view.to_act)
        and view.seat == min(view.to_act)
    )


def reference_log(
    settings: GameSettings, seed: str, identities: Sequence[str], level: str = "random"
) -> list[LogEntry]:
    """The action log of the game ``settings``/``seed`` played by :func:`decide_move`
    players, with forced moves applied for them as the service does."""
    game = Game(settings, seed)
    out: list[LogEntry] = []

    def forced() -> None:
        while not game.is_over:
            action = game.forced_action()
            if action is None:
                return
            game.apply(action)
            out.append((action.seat, action_to_json(action), True))

    forced()
    while not game.is_over:
        seat = min(game.to_act())
        view = player_view(game, seat, len(game.events))
        action = decide_move(view, identities[seat], level)
        game.apply(action)
        out.append((seat, action_to_json(action), False))
        forced()
    return out


# -- reading a mailbox ------------------------------------------------------------------


class MailboxReader:
    """New messages of one IMAP INBOX, by UID (flags untouched), on one connection.

    ``poll`` sends one NOOP and fetches only when the server reports new messages. A lost
    connection is dropped and opened again on the next poll.
    """

    def __init__(self, host: str, port: int, user: str, password: str) -> None:
        self.host, self.port, self.user, self.password = host, port, user, password
        self._client: imaplib.IMAP4 | None = None
        self.last_uid = 0

    def _connect(self) -> imaplib.IMAP4:
        client = imaplib.IMAP4(self.host, self.port, timeout=10)
        try:
            client.login(self.user, self.password)
            status, _ = client.select("INBOX")
            if status != "OK":
                raise imaplib.IMAP4.error(f"cannot select INBOX of {self.user}")
        except BaseException:
            with contextlib.suppress(Exception):
                client.shutdown()
            raise
        return client

    def poll(self) -> list[bytes]:
        """Messages above the last UID read, in UID order (empty if none)."""
        try:
            if self._client is None:
                self._client = self._connect()
            else:
                self._client.noop()
                _, counts = self._client.response("EXISTS")
                if not any(count is not None for count in counts):
                    return []  # the server reports no change
            client = self._client
            _, data = client.uid("SEARCH", f"UID {self.last_uid + 1}:*")
            uids = sorted(int(u) for u in (data[0] or b"").split() if int(u) > self.last_uid)
            found: list[bytes] = []
            for uid in uids:
                _, parts = client.uid("FETCH", str(uid), "(BODY.PEEK[])")
                found.extend(part[1] for part in parts if isinstance(part, tuple))
                self.last_uid = uid
            return found
        except (OSError, EOFError, imaplib.IMAP4.error, imaplib.IMAP4.abort):
            self.close()
            raise

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.shutdown()


# -- a player ---------------------------------------------------------------------------


@dataclass
class Move:
    """One reply a player sent: which position it answers, and when SMTP took it."""

    game_id: int
    answers: int  # the action count of the turn mail it answers
    message_id: str
    accepted_at: float = 0.0  # time.monotonic() when the SMTP server accepted it


@dataclass
class _GameState:
    latest: int = -1
    answered: set[int] = field(default_factory=set)
    over: bool = False


class SmtpLink:
    """One SMTP connection kept open between sends (reopened after any trouble)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._smtp: smtplib.SMTP | None = None

    def send(self, sender: str, recipients: list[str], raw: bytes) -> None:
        for attempt in range(2):
            try:
                if self._smtp is None:
                    self._smtp = smtplib.SMTP(self.host, self.port, timeout=10)
                    self._smtp.ehlo("player.test")
                self._smtp.sendmail(sender, recipients, raw)
                return
            except smtplib.SMTPServerDisconnected:
                self.close()
                if attempt:
                    raise
            except (OSError, smtplib.SMTPException):
                self.close()
                raise

    def close(self) -> None:
        smtp, self._smtp = self._smtp, None
        if smtp is not None:
            with contextlib.suppress(Exception):
                smtp.quit()
            with contextlib.suppress(Exception):
                smtp.close()


@dataclass
class ImapPlayer:
    """A computer player behind a Dovecot mailbox (see the module docstring)."""

    address: str
    password: str
    name: str
    domain: str
    host: str
    imap_port: int
    level: str = "random"
    identity: str = ""
    levels: dict[int, str] = field(default_factory=dict)  # per game, else ``level``
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    on_mail: Callable[[ImapPlayer, Message, float], None] | None = None
    moves: list[Move] = field(default_factory=list)
    received: int = 0
    errors: int = 0
    _reader: MailboxReader | None = field(default=None, init=False, repr=False)
    _games: dict[int, _GameState] = field(default_factory=dict, init=False, repr=False)
    _queue: list[tuple[Move, list[str], bytes]] = field(default_factory=list, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        self.identity = self.identity or self.address
        self._reader = MailboxReader(self.host, self.imap_port, self.address, self.password)

    @property
    def games_over(self) -> set[int]:
        return {game_id for game_id, state in self._games.items() if state.over}

    def tick(self, smtp: SmtpLink) -> int:
        """Read new mail, answer what asks for a move, send what is queued.

        Returns how many messages were new. Raises on connection trouble (nothing is
        lost: the next tick reads and sends again).
        """
        with self._lock:
            assert self._reader is not None
            new = self._reader.poll()
            seen_at = time.monotonic()
            self.received += len(new)
            newest: dict[int, tuple[int, Message, PlayerView]] = {}
            for raw in new:
                msg = email.message_from_bytes(raw)  # compat32: a fifth of the cost
                if self.on_mail is not None:
                    self.on_mail(self, msg, seen_at)
                found = self._turn_mail(msg)
                if found is None:
                    continue
                game_id, count, view = found
                state = self._games.setdefault(game_id, _GameState())
                if view.outcome is not None:
                    state.over = True
                if count > state.latest:
                    state.latest = count
                    newest[game_id] = (count, msg, view)
            for game_id, (count, msg, view) in newest.items():
                state = self._games[game_id]
                if count in state.answered or not acts_now(view):
                    continue
                state.answered.add(count)
                level = self.levels.get(game_id, self.level)
                action = decide_move(view, self.identity, level)
                raw_reply = quoted_reply(
                    msg, self.address, self.name, command_for(action), self.clock()
                )
                reply = BytesHeaderParser().parsebytes(raw_reply)
                to = [addr for _, addr in getaddresses([str(reply.get("To", ""))])]
                move = Move(game_id, count, str(reply["Message-ID"]))
                self._queue.append((move, to, raw_reply))
            self._flush(smtp)
            return len(new)

    def _turn_mail(self, msg: Message) -> tuple[int, int, PlayerView] | None:
        ours = parse_message_id(str(msg.get("Message-ID", "")), self.domain)
        if ours is None:
            return None
        match = _TURN_SEQ.fullmatch(ours.seq)
        if match is None:
            return None
        view = view_of(msg)
        if view is None:
            return None
        return ours.game_id, int(match.group(1)), view

    def _flush(self, smtp: SmtpLink) -> None:
        while self._queue:
            move, to, raw = self._queue[0]
            smtp.send(self.address, to, raw)
            move.accepted_at = time.monotonic()
            self.moves.append(move)
            self._queue.pop(0)

    @property
    def queued(self) -> int:
        return len(self._queue)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()


class PlayerPool:
    """Players on ``threads`` threads; each thread polls its players every ``interval``
    seconds (and again at once after any new mail), sending over its own SMTP link."""

    def __init__(
        self,
        players: Sequence[ImapPlayer],
        *,
        smtp_host: str,
        smtp_port: int,
        threads: int = 4,
        interval: float = 0.05,
    ) -> None:
        self.players = list(players)
        self.smtp_host, self.smtp_port = smtp_host, smtp_port
        self.interval = interval
        self.stop_event = threading.Event()
        self.failures: list[str] = []
        self._threads = [
            threading.Thread(
                target=self._run, args=(self.players[i::threads],), daemon=True, name=f"players-{i}"
            )
            for i in range(min(threads, len(self.players)))
        ]

    def start(self) -> PlayerPool:
        for thread in self._threads:
            thread.start()
        return self

    def _run(self, mine: Sequence[ImapPlayer]) -> None:
        smtp = SmtpLink(self.smtp_host, self.smtp_port)
        retry_at: dict[str, float] = {}
        try:
            while not self.stop_event.is_set():
                busy = False
                for player in mine:
                    if retry_at.get(player.address, 0.0) > time.monotonic():
                        continue
                    try:
                        busy = player.tick(smtp) > 0 or busy
                    except Exception as exc:  # servers restarting: try again soon
                        player.errors += 1
                        retry_at[player.address] = time.monotonic() + 0.25
                        if len(self.failures) < 1000:
                            self.failures.append(f"{player.address}: {type(exc).__name__}: {exc}")
                if not busy:
                    self.stop_event.wait(self.interval)
        finally:
            smtp.close()
            for player in mine:
                player.close()

    def stop(self) -> None:
        self.stop_event.set()
        for thread in self._threads:
            thread.join(timeout=30)

    def __enter__(self) -> PlayerPool:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def message_ids(raws: Iterable[bytes]) -> list[str]:
    """The Message-ID of each raw message (headers only)."""
    from email.parser import BytesHeaderParser

    parser = BytesHeaderParser()
    return [str(parser.parsebytes(raw).get("Message-ID", "")).strip() for raw in raws]
