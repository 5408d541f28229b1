"""What every stage shares: the settings, the database, the clock, the fault hook, the
game cache, and the state of one transaction; the service's small types.

A `Context` lives for one transaction (one message, a batch of them, or one admin
operation): the stages take it as their first argument and keep nothing of their own.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import IntEnum
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

from engine import Game, action_from_json
from engine import Settings as GameSettings
from engine.levels import ALIASES, all_names
from pbem.config import Settings
from pbem.mail.reading import IncomingMail
from pbem.names import NAME_LIMIT, clean_name, shown_name
from pbem.render.mailmaker import MailMaker
from pbem.render.page import game_subject as page_subject
from pbem.store import models as m
from pbem.store.games import load_actions, seat_players
from pbem.store.inbound import mark_inbound

log = logging.getLogger("pbem.service")


def utcnow() -> datetime:
    return datetime.now(UTC)


class ServiceError(Exception):
    """An admin request that cannot be done (unknown game, bad state); one clear line."""


class InjectedFault(RuntimeError):
    """Raised by a test's fault hook to simulate a crash at a named step."""


@dataclass(frozen=True)
class Outcome:
    """What processing one inbound message did; ``logged``: what the daemon's log line
    says of the message, when known without asking the database (its stored sender,
    and the seconds from its arrival to its end)."""

    status: str
    reason: str
    game_id: int | None = None
    applied: tuple[str, ...] = ()
    logged: tuple[str | None, float | None] | None = field(default=None, compare=False)


class Proof(IntEnum):
    """How well a mail shows who wrote it (`pbem.service.policy` decides what each is
    enough for)."""

    NONE = 0
    """The trusted server did not vouch for its From (or could not be read): it may be
    forged, and nothing it asks is done."""
    FROM = 1
    """Its From alone: anyone can write any From."""
    TOKEN = 2
    """A reply token mailed to that very mailbox, from that mailbox — or the trusted
    server's DMARC (or aligned DKIM or SPF) pass."""


@dataclass(frozen=True)
class Sender:
    """Who wrote a mail, as intake found it: the From address, its mailbox (folded as
    the policy folds addresses) and how well the mail proves it."""

    address: str
    mailbox: str
    proof: Proof
    how: str


ALREADY_PROCESSED = Outcome("ignored", "already processed")
"""What :meth:`Service.process` returns for a message it did not touch: another worker's
transaction holds it, or it is no longer pending."""


@dataclass
class Seated:
    seat: m.Seat
    player: m.Player

    @property
    def name(self) -> str:
        """The seat's player as the other players and everyone else see them
        (`public_name`)."""
        return public_name(self.player)


def display_name(player: m.Player) -> str:
    """``player``'s name in mail to ``player`` themself (the greeting, the To): their
    chosen name, cleaned, or the local part of their own address, capitalised. Never
    shown to anyone else: see `public_name`."""
    chosen = clean_name(player.display_name or "", NAME_LIMIT)
    if chosen:
        return chosen
    local = player.email.split("@", 1)[0]
    return local[:1].upper() + local[1:]


def public_name(player: m.Player) -> str:
    """``player``'s name as anyone but ``player`` sees it (the other players' mails, the
    observers', the standings, the site, the archives): their chosen name, cleaned, or
    a neutral "Player 12" (their id) — never a part of their address, so a chosen name
    that holds an address (an "@") is not shown either."""
    return shown_name(player.id, player.display_name)


Table = tuple[m.Game, list[Seated], int]
"""A game, its seats, and the seat a mail speaks for."""


@dataclass
class GameCache:
    """Engine games kept between transactions (least recently used out first)."""

    size: int = 2000
    games: OrderedDict[int, Game] = field(default_factory=OrderedDict)

    def get(self, game_id: int, action_count: int) -> Game | None:
        cached = self.games.get(game_id)
        if cached is not None and len(cached.actions) == action_count:
            self.games.move_to_end(game_id)
            return cached
        return None

    def behind(self, game_id: int, action_count: int) -> Game | None:
        """The game kept of ``game_id`` when it has fewer than ``action_count`` actions
        (another worker moved it since): the actions since may be applied to a copy."""
        cached = self.games.get(game_id)
        if cached is not None and len(cached.actions) < action_count:
            return cached
        return None

    def remember(self, staged: dict[int, Game]) -> None:
        """Keep the games a committed transaction moved."""
        for game_id, game in staged.items():
            self.games[game_id] = game
            self.games.move_to_end(game_id)
        staged.clear()
        while len(self.games) > self.size:
            self.games.popitem(last=False)


class ReadAhead:
    """The mails read when they were stored (`pbem.mail.reading.read_received`), by inbound
    id, until they are processed: the thread that stores mail (a listener's) puts, the
    loop takes (`read_mail`, `prefetch`). At most ``size`` kept, the oldest dropped first
    (another worker may process what this one stored); safe from any thread."""

    def __init__(self, size: int = 500) -> None:
        self.size = size
        self._mails: OrderedDict[int, IncomingMail] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, inbound_id: int, mail: IncomingMail) -> None:
        with self._lock:
            self._mails[inbound_id] = mail
            while len(self._mails) > self.size:
                self._mails.popitem(last=False)

    def take(self, inbound_id: int) -> IncomingMail | None:
        """The mail stored as ``inbound_id`` as it was read then (None: not kept)."""
        if not self._mails:
            return None
        with self._lock:
            return self._mails.pop(inbound_id, None)


@dataclass
class Context:
    """One transaction's view of the service, passed to every stage."""

    settings: Settings
    db: Engine
    clock: Callable[[], datetime]
    fault: Callable[[str], None]
    cache: GameCache
    # The games moved in this transaction, cached once it commits.
    staged: dict[int, Game] = field(default_factory=dict)
    # In a batch: its mail, queued in one statement before the commit (None: not a batch).
    deferred: list[dict[str, Any]] | None = None
    # In a batch: who makes its turn mails.
    maker: MailMaker | None = None
    # In a batch: per message, its stored sender and its hourly count.
    recent: dict[int, tuple[str, int]] | None = None
    # In a batch: its messages read, and the tables their tokens name.
    mails: dict[int, IncomingMail] | None = None
    tables: dict[str, tuple[m.Game, list[tuple[m.Seat, m.Player]], int]] | None = None
    # Who wrote each message taken in this transaction, and how well it proves it
    # (set by intake; the policy reads it to tell an answer from unasked mail).
    senders: dict[int, Sender] = field(default_factory=dict)
    # The mails read when they were stored, until they are processed (`ReadAhead`).
    read_ahead: ReadAhead | None = None
    # The rule of intake's chain the message in hand is at (`pbem.service.intake.chain`):
    # kept on its row when it ends (``inbound.rule``).
    rule: str | None = None


def load_game(ctx: Context, session: Session, game_row: m.Game) -> Game:
    """The engine game of ``game_row``: a copy of the cached one when it is current (or
    that copy with the actions logged since), else rebuilt by replaying the logged
    actions."""
    assert game_row.id is not None
    staged = ctx.staged.get(game_row.id)  # moved earlier in this transaction
    if staged is not None and len(staged.actions) == game_row.action_count:
        return staged.copy()
    cached = ctx.cache.get(game_row.id, game_row.action_count)
    if cached is not None:
        return cached.copy()
    if game_row.seed is None:
        # A fair game waiting for its players' cuts: no deal can be computed yet.
        raise ServiceError(f"game {game_row.id} is not dealt yet: it waits for the players' cuts")
    behind = ctx.cache.behind(game_row.id, game_row.action_count)
    if behind is not None:
        # Moved by another worker since: the actions logged since, on a copy, if they
        # lead where the game row says (its state hash); else replayed from the deal.
        game = behind.copy()
        try:
            for logged in load_actions(session, game_row.id, first_seq=len(game.actions)):
                game.apply(action_from_json(logged.action))
        except (ValueError, KeyError, TypeError):  # not where the log goes: replayed
            log.warning("game %s: the kept game does not follow its log", game_row.id)
        else:
            if len(game.actions) == game_row.action_count and (
                game_row.state_hash is None or game.state_hash() == game_row.state_hash
            ):
                return game
    game = Game(GameSettings.from_json(game_row.settings), game_row.seed)
    for logged in load_actions(session, game_row.id):
        game.apply(action_from_json(logged.action))
    return game


def stage(ctx: Context, game_id: int, game: Game) -> None:
    """Cache ``game`` once the transaction that logged its moves has committed."""
    ctx.staged[game_id] = game


def seats_of(session: Session, game_id: int) -> list[Seated]:
    return [Seated(seat, player) for seat, player in seat_players(session, game_id)]


def is_computer(game_row: m.Game, seat: int) -> bool:
    return seat in game_row.settings.get("computer", ())


DEFAULT_LEVEL = "medium"
"""The computer's level when a game names none (and the reply line's suggestion)."""


def seat_level(game_row: m.Game, seat: int) -> str:
    """The level the computer plays ``seat`` at (games made before levels: the default)."""
    levels = game_row.settings.get("levels") or {}
    level = levels.get(str(seat)) if isinstance(levels, dict) else None
    if not isinstance(level, str) or level not in all_names():
        return DEFAULT_LEVEL
    return ALIASES.get(level, level)


def seat_names(seats: Sequence[Seated]) -> tuple[str, ...]:
    """The name of each seat as the mails show it in every line and table: short, a
    computer seat too ("Computer"); its level is in `seat_levels`."""
    return tuple(s.name for s in seats)


def game_subject(game_row: m.Game, seats: Sequence[Seated]) -> str:
    """The one Subject of every mail of the game ("[Cribbage 12] Nia v Computer"), see
    `pbem.render.page.game_subject`: the same for every seat, watcher and turn."""
    return page_subject(game_row.id or 0, seat_names(seats))


def seat_levels(game_row: m.Game, seats: Sequence[Seated]) -> tuple[str, ...]:
    """Each seat's computer level ("hard"), "" for a person: a mail's header names the
    computer with it ("Computer (hard)")."""
    return tuple(
        seat_level(game_row, s.seat.seat) if is_computer(game_row, s.seat.seat) else ""
        for s in seats
    )


def finish(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    status: str,
    reason: str,
    *,
    sender: str | None = None,
    game_id: int | None = None,
    applied: tuple[str, ...] = (),
) -> Outcome:
    """Mark a message done as ``status`` for ``reason``: its final state."""
    mark_inbound(
        session, row, status, reason, game_id, now=ctx.clock(), sender=sender, rule=ctx.rule
    )
    log.debug("inbound %s %s by rule %s: %s", row.id, status, ctx.rule, reason)
    waited = None
    if row.processed_at is not None and row.received_at is not None:
        waited = (row.processed_at - row.received_at).total_seconds()
    return Outcome(status, reason, game_id, applied, logged=(row.sender, waited))
