"""One inbound message → one database transaction.

``Service.receive`` stores a message's raw bytes first (deduplicated by
Message-ID, or by SHA-256 when it has none) and commits.  ``Service.process``
then, in ONE transaction: reads the mail, authenticates the sender by the reply
token AND the From address, turns the commands into engine actions, applies
them (and any forced moves after them), appends them to the action log, renders
every player's email and puts it in the outbox — and only then marks the
inbound message done.  A crash anywhere rolls the whole step back; the message
stays pending and is processed again, never twice.

Every inbound message ends as ``applied``, ``rejected`` (a known player was told
why), ``ignored`` (auto-reply, bounce, unknown sender — with the reason) or
``failed`` (an unexpected error, kept for the admin).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import traceback
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session, select

from engine import (
    AmbiguousActionError,
    EngineError,
    Game,
    IllegalActionError,
    InvalidSyntaxError,
    Resign,
    action_from_json,
    action_to_json,
    player_view,
    to_archive,
)
from engine import (
    Settings as GameSettings,
)
from engine import players as computer
from pbem.commands import GAME_VERBS, Command, mail_choice, parse_reply, to_action
from pbem.config import Settings
from pbem.mail.address import without_tag
from pbem.mail.authresults import from_verdict
from pbem.mail.autoreply import AutoKind, BounceInfo
from pbem.mail.compose import compose, reply_reference
from pbem.mail.reading import IncomingMail, read_message, reply_subject
from pbem.mail.tokens import find_tokens, message_id, new_token, reply_address
from pbem.render import (
    GameLine,
    MailContext,
    Notice,
    RenderedMail,
    render_archive,
    render_error,
    render_help,
    render_help_games,
    render_history,
    render_reminder,
    render_turn,
    render_which_game,
)
from pbem.render.board import house_rules
from pbem.render.news import mail_state, worth_mailing
from pbem.render.status import STATUS_WORDS, render_aborted, render_status_change
from pbem.renderer import MailMaker, PendingMail, TurnMailJob, make_turn_mail, view_attachment
from pbem.repeats import already_done
from pbem.store import models as m
from pbem.store._sql import hold_writes, is_postgresql, release_writes, update_row
from pbem.store.db import session_scope
from pbem.store.errors import ConcurrentUpdateError
from pbem.store.games import (
    append_actions,
    create_game,
    games_for_player,
    load_actions,
    seat_players,
    table_by_token,
    tables_by_tokens,
)
from pbem.store.inbound import (
    count_recent_from,
    count_recent_many,
    insert_inbound_many,
    lock_pending_inbound,
    lock_pending_inbound_many,
    mark_inbound,
    message_key,
)
from pbem.store.outbox import (
    cancel_game_mail,
    enqueue_outbox,
    outbox_row,
    queue_mails,
    sent_recipients,
)
from pbem.store.players import get_or_create_player, get_player_by_email, record_bounce
from pbem.store.throttle import error_throttle_allows

log = logging.getLogger("pbem.service")


# The game-over mail's line on the archive (the ``archive`` reply sends it).
ARCHIVE_HINT = 'Reply "archive" for the whole game as a file (JSON) to replay and verify.'


def utcnow() -> datetime:
    return datetime.now(UTC)


class ServiceError(Exception):
    """An admin request that cannot be done (unknown game, bad state); one clear line."""


class InjectedFault(RuntimeError):
    """Raised by a test's fault hook to simulate a crash at a named step."""


@dataclass(frozen=True)
class Outcome:
    """What processing one inbound message did."""

    status: str
    reason: str
    game_id: int | None = None
    applied: tuple[str, ...] = ()


ALREADY_PROCESSED = Outcome("ignored", "already processed")
"""What :meth:`Service.process` returns for a message it did not touch: another worker's
transaction holds it, or it is no longer pending."""

DEFAULT_REASONS = {
    "paused": "the game is on hold for a while",
    "active": "the game can go on",
    "aborted": "the game will not be finished",
}
"""What the players are told when the admin pauses, resumes or aborts a game without
saying why."""


@dataclass
class _Seated:
    seat: m.Seat
    player: m.Player

    @property
    def name(self) -> str:
        return display_name(self.player)


def display_name(player: m.Player) -> str:
    if player.display_name:
        return player.display_name
    local = player.email.split("@", 1)[0]
    return local[:1].upper() + local[1:]


@dataclass
class Service:
    """The turn service.  ``clock`` and ``fault`` are injectable for tests."""

    settings: Settings
    db: Engine
    clock: Callable[[], datetime] = utcnow
    fault: Callable[[str], None] = field(default=lambda step: None)
    cache_size: int = 2000
    _games: OrderedDict[int, Game] = field(default_factory=OrderedDict, init=False, repr=False)
    _staged: dict[int, Game] = field(default_factory=dict, init=False, repr=False)
    # While a batch runs: its mail, queued in one statement before the commit.
    _deferred: list[dict[str, Any]] | None = field(default=None, init=False, repr=False)
    # While a batch runs: who makes its turn mails.
    _maker: MailMaker | None = field(default=None, init=False, repr=False)
    # While a batch runs: per message, its stored sender and its hourly count.
    _recent: dict[int, tuple[str, int]] | None = field(default=None, init=False, repr=False)
    # While a batch runs: its messages read, and the tables their tokens name.
    _mails: dict[int, IncomingMail] | None = field(default=None, init=False, repr=False)
    _tables: dict[str, tuple[m.Game, list[tuple[m.Seat, m.Player]], int]] | None = field(
        default=None, init=False, repr=False
    )

    # -- receiving -----------------------------------------------------------------

    @property
    def render_processes(self) -> int:
        """Helper processes making a batch's mail (`Settings.render_processes`; by default
        one on SQLite, whose one writer leaves the other cores idle, when there are
        others, and none on PostgreSQL, where several workers share the cores)."""
        if self.settings.render_processes is not None:
            return self.settings.render_processes
        if self.db.dialect.name == "postgresql" or (os.cpu_count() or 1) < 2:
            return 0
        return 1

    def receive(self, raw: bytes, source: str, *, oversize: bool = False) -> tuple[int, bool]:
        """Store a raw message (first, before anything else). Returns (inbound id, is new).

        ``oversize``: only the header section was fetched; processing answers "too large".
        """
        return self.receive_many([(raw, oversize)], source)[0]

    def pending_ids(self, limit: int = 100) -> list[int]:
        with Session(self.db) as session:
            rows = session.exec(
                select(m.Inbound.id)
                .where(m.Inbound.status == m.InboundStatus.PENDING.value)
                .order_by(m.Inbound.id)  # type: ignore[arg-type]
                .limit(limit)
            ).all()
        return [r for r in rows if r is not None]

    def receive_many(
        self, messages: Sequence[tuple[bytes, bool]], source: str
    ) -> list[tuple[int, bool]]:
        """Store several raw messages ``(raw, oversize)`` in one transaction, as `receive`
        would one by one. Returns (inbound id, is new) for each, in order."""
        now = self.clock()
        rows = []
        for raw, oversize in messages:
            sender, subject, msg_id = _peek_headers(raw)
            where = f"{source}:oversize" if oversize else source
            rows.append((raw, where, message_key(raw, msg_id), sender, subject))
        with session_scope(self.db) as session:
            return insert_inbound_many(session, rows, now=now)

    def process_pending(self, limit: int = 100) -> list[Outcome]:
        return self.process_many(self.pending_ids(limit))

    def process_many(self, inbound_ids: Sequence[int]) -> list[Outcome]:
        """Process several stored messages in one transaction (a group commit).

        Each message ends exactly as `process` would end it in a transaction of its own.
        The batch's writes are held back and sent together before the commit (one
        statement per kind of write: the moves logged, the games, seats and messages
        updated, the mail queued), so processing a message writes nothing until then. A
        message whose game another worker holds (PostgreSQL) drops what it held back and
        is processed alone after the commit. Anything unexpected — a message that fails,
        a database error, held-back writes that find a game moved on — rolls the whole
        batch back and each message is processed alone, where a failing one is recorded
        as failed and the others are applied. Nothing is done until the commit: a crash
        before it leaves every message pending, to be processed again, never twice.
        The batch's turn mails are rendered by a helper process while the batch goes on
        (`render_processes`, see `pbem.renderer`) and collected before the commit.
        """
        if len(inbound_ids) < 2:
            return [self.process(inbound_id) for inbound_id in inbound_ids]
        outcomes: dict[int, Outcome] = {}
        again: list[int] = []
        self._staged.clear()
        self._deferred = []
        try:
            with MailMaker(self.render_processes) as maker, session_scope(self.db) as session:
                self._maker = maker
                behind = hold_writes(session)
                rows = lock_pending_inbound_many(session, inbound_ids)
                self._recent = self._recent_counts(session, list(rows.values()))
                self._prefetch(session, list(rows.values()))
                for inbound_id in inbound_ids:
                    row = rows.get(inbound_id)
                    if row is None:
                        outcomes[inbound_id] = ALREADY_PROCESSED
                        continue
                    staged = dict(self._staged)
                    deferred = len(self._deferred)
                    point = behind.mark()
                    try:
                        outcomes[inbound_id] = self._process(session, row)
                    except ConcurrentUpdateError:
                        # Another worker has the game: this message goes alone after the
                        # commit, waiting for the game if need be.
                        self._staged = staged
                        del self._deferred[deferred:]
                        behind.rewind(point)
                        again.append(inbound_id)
                behind.flush(session)
                release_writes(session)
                mail, self._deferred = self._deferred, None
                maker.finish()
                for queued in mail:
                    if isinstance(queued["raw"], PendingMail):
                        queued["raw"] = queued["raw"].raw
                queue_mails(session, mail)
                self.fault("before-commit")
        except InjectedFault:
            self._staged.clear()
            raise
        except Exception as exc:
            # Nothing was committed: each message alone, as `process` would do it.
            log.warning("a batch was rolled back (%s); processing its messages one by one", exc)
            self._staged.clear()
            self._deferred = self._recent = self._mails = self._tables = self._maker = None
            return [self.process(inbound_id) for inbound_id in inbound_ids]
        except BaseException:
            self._staged.clear()
            raise
        finally:
            self._deferred = self._recent = self._mails = self._tables = self._maker = None
        self._remember_staged()
        for inbound_id in again:
            outcomes[inbound_id] = self.process(inbound_id)
        return [outcomes[inbound_id] for inbound_id in inbound_ids]

    def _prefetch(self, session: Session, rows: Sequence[m.Inbound]) -> None:
        """Read a batch's messages, and the tables their reply tokens name in one query."""
        self._mails = {
            row.id: read_message(
                row.raw,
                our_addresses={self.settings.address},
                loop_value=self.settings.loop_value,
            )
            for row in rows
            if row.id is not None
        }
        tokens = [
            token
            for mail in self._mails.values()
            for token in find_tokens(mail, self.settings.local_part, self.settings.domain)
        ]
        self._tables = tables_by_tokens(session, tokens)

    def _recent_counts(
        self, session: Session, rows: Sequence[m.Inbound]
    ) -> dict[int, tuple[str, int]]:
        """For each message of a batch: its stored sender and what `_over_rate` counts."""
        messages = [(row.id, row.sender) for row in rows if row.id is not None and row.sender]
        since = self.clock() - timedelta(hours=1)
        counts = count_recent_many(session, messages, since)
        return {inbound_id: (sender, counts[inbound_id]) for inbound_id, sender in messages}

    def _failed(self, session: Session, row: m.Inbound | None, exc: Exception) -> Outcome:
        """Record an unexpected error on a message whose processing was rolled back."""
        log.exception("processing inbound %s failed", row.id if row else "?")
        detail = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}"
        if row is not None and row.status == m.InboundStatus.PENDING.value:
            mark_inbound(session, row, "failed", detail[:4000], now=self.clock())
        return Outcome("failed", str(exc))

    def process(self, inbound_id: int) -> Outcome:
        """Process one stored message in one transaction (retried on a concurrent move)."""
        for _attempt in range(5):
            try:
                self._staged.clear()
                with session_scope(self.db) as session:
                    row = lock_pending_inbound(session, inbound_id)
                    if row is None:
                        return ALREADY_PROCESSED
                    outcome = self._process(session, row)
                    self.fault("before-commit")
                self._remember_staged()
                return outcome
            except ConcurrentUpdateError:
                self._staged.clear()
                continue
            except InjectedFault:
                raise
            except Exception as exc:
                with session_scope(self.db) as session:
                    return self._failed(session, session.get(m.Inbound, inbound_id), exc)
        return Outcome("pending", "the game kept changing under this message; will retry")

    # -- the pipeline for one message ------------------------------------------------

    def _process(self, session: Session, row: m.Inbound) -> Outcome:
        now = self.clock()
        assert row.id is not None
        self.fault("read")
        mail = self._mails.pop(row.id, None) if self._mails is not None else None
        if mail is None:
            mail = read_message(
                row.raw,
                our_addresses={self.settings.address},
                loop_value=self.settings.loop_value,
            )
        sender = mail.sender
        if mail.auto is not None:
            reason = f"{mail.auto.value}: {mail.auto_reason}"
            if mail.auto == AutoKind.BOUNCE and mail.bounce is not None:
                reason += self._record_bounces(session, mail.bounce, reason, now)
            return self._finish(session, row, "ignored", reason, sender=sender)
        if not sender:
            return self._finish(session, row, "ignored", mail.problem or "no sender address")
        if row.source.endswith(":oversize") or len(row.raw) > self.settings.max_message_bytes:
            player = get_player_by_email(session, sender)
            if player is not None:
                limit = self.settings.max_message_bytes // 1000
                self._error_reply(
                    session,
                    player,
                    row.id,
                    "too-large",
                    "Your mail was too large",
                    [
                        Notice(
                            "refused",
                            "",
                            f"Mail over {limit} kB is not read. Reply with "
                            "just your move, without attachments.",
                        )
                    ],
                    now,
                    answering=mail.message_id,
                )
            return self._finish(
                session,
                row,
                "rejected" if player else "ignored",
                "message too large",
                sender=sender,
            )
        if self._over_rate(session, sender, row.id, now):
            return self._finish(
                session,
                row,
                "ignored",
                f"more than {self.settings.max_per_sender_per_hour} mails from this sender "
                "in an hour",
                sender=sender,
            )
        table = self._authenticate(session, mail)
        tokenless = table is None
        if table is None:
            player = get_player_by_email(session, sender)
            if player is None and self.settings.match_plus_tags and without_tag(sender) != sender:
                player = get_player_by_email(session, without_tag(sender))
            if player is None:
                # No backscatter: whatever it asks (help included), nobody is answered.
                return self._finish(
                    session,
                    row,
                    "ignored",
                    "unknown sender and no game token: no reply",
                    sender=sender,
                )
            table_or_outcome = self._without_token(session, row, mail, player, now)
            if isinstance(table_or_outcome, Outcome):
                return table_or_outcome
            table = table_or_outcome
        game_row, seats, seat = table
        seat_email = seats[seat].player.email
        if seat_email != sender and without_tag(seat_email) == without_tag(sender):
            # The same mailbox but for a +tag.
            if self.settings.match_plus_tags:
                sender = seat_email
            else:
                return self._tag_mismatch(session, row, mail, game_row, seats[seat], now)
        if seat_email != sender:
            player = get_player_by_email(session, sender)
            if player is None:
                return self._finish(
                    session,
                    row,
                    "ignored",
                    f"token of game {game_row.id} used by unknown sender {sender}: no reply",
                    sender=sender,
                    game_id=game_row.id,
                )
            self._error_reply(
                session,
                player,
                row.id,
                "wrong-seat",
                "Not your reply address",
                [
                    Notice(
                        "refused",
                        "",
                        "This mail answered an email addressed to another "
                        "player, so no move was made. Reply to your own game email.",
                    )
                ],
                now,
                answering=mail.message_id,
            )
            return self._finish(
                session,
                row,
                "rejected",
                f"sender {sender} is not the player of the token's seat",
                sender=sender,
                game_id=game_row.id,
            )
        if self.settings.trusted_authserv_id:
            verdict = from_verdict(mail.auth_results, self.settings.trusted_authserv_id, sender)
            if not verdict.passed:
                # No reply: the From may be forged, and the player did not write.
                return self._finish(
                    session,
                    row,
                    "rejected",
                    f"From {sender} not vouched for: {verdict.reason}; no move made, no reply",
                    sender=sender,
                    game_id=game_row.id,
                )
        parsed = parse_reply(mail.reply_text or "", reply_subject(mail.subject or ""))
        return self._apply_commands(
            session,
            row,
            game_row,
            seats,
            seat,
            parsed.commands,
            parsed.ignored,
            sender,
            now,
            tokenless=tokenless,
        )

    def _without_token(
        self,
        session: Session,
        row: m.Inbound,
        mail: IncomingMail,
        player: m.Player,
        now: datetime,
    ) -> tuple[m.Game, list[_Seated], int] | Outcome:
        """A known player's mail that named no game of theirs.

        A mail carrying no token at all (written to the plain service address) from a
        player with exactly one game in progress is that game's: its table is returned, to
        be checked and applied as if it carried the seat's token — unless it only asks
        for ``help``. Otherwise the player is answered with their games and their own
        reply address for each — with the command language when they asked for ``help`` —
        and the outcome is returned.
        """
        assert row.id is not None and player.id is not None
        named_a_token = bool(find_tokens(mail, self.settings.local_part, self.settings.domain))
        games = [
            g
            for g in games_for_player(session, player.id)
            if g.status in (m.GameStatus.ACTIVE.value, m.GameStatus.PAUSED.value)
        ]
        parsed = parse_reply(mail.reply_text or "", reply_subject(mail.subject or ""))
        verbs = {c.verb for c in parsed.commands}
        help_only = "help" in verbs and not verbs & set(GAME_VERBS)
        if len(games) == 1 and not named_a_token and not help_only:
            token = next(
                s.seat.token
                for s in self._seats(session, games[0].id or 0)
                if s.player.id == player.id
            )
            found = table_by_token(session, token, wait=self._deferred is None)
            if found is not None:
                game_row, seated, seat = found
                return game_row, [_Seated(s, p) for s, p in seated], seat
        lines = [self._game_line(session, g, player) for g in games]
        if "help" in verbs:
            self._answer(
                session, player, row.id, "help", render_help_games(lines), now, mail.message_id
            )
            return self._finish(
                session, row, "applied", "sent: help (no game named)", sender=player.email
            )
        which = render_which_game(lines)
        self._answer(session, player, row.id, "no-game", which, now, mail.message_id)
        return self._finish(session, row, "rejected", "no valid game token", sender=player.email)

    def _game_line(self, session: Session, game_row: m.Game, player: m.Player) -> GameLine:
        """A game in progress as ``player`` sees it from outside, with their reply address."""
        assert game_row.id is not None
        seats = self._seats(session, game_row.id)
        mine = next(s for s in seats if s.player.id == player.id)
        game = self.load_game(session, game_row)
        if game_row.status == m.GameStatus.PAUSED.value:
            turn = "paused by the admin"
        elif mine.seat.seat in game.to_act():
            turn = f"your turn (hand {game.hand_no})"
        else:
            waiting = [seats[s].name for s in game.to_act()]
            turn = f"waiting for {' and '.join(waiting) or 'nobody'} (hand {game.hand_no})"
        return GameLine(
            game_id=game_row.id,
            opponents=tuple(s.name for s in seats if s is not mine),
            turn=turn,
            reply_to=reply_address(self.settings.local_part, mine.seat.token, self.settings.domain),
        )

    def _record_bounces(
        self, session: Session, bounce: BounceInfo, reason: str, now: datetime
    ) -> str:
        """Count a bounce on each player it names whom mail it answers went to (anyone can
        write a bounce: one naming an address but none of our mail to it counts for
        nothing). What was recorded, for the inbound row's reason."""
        sent = sent_recipients(session, bounce.answered_ids)
        notes = ""
        for address in bounce.recipients:
            if address not in sent:
                notes += f" (not counted on {address}: it answers no mail we sent there)"
                continue
            bounced = record_bounce(session, address, reason, now=now)
            if bounced is not None:
                notes += f" (recorded on player {bounced.email})"
        return notes

    def _tag_mismatch(
        self,
        session: Session,
        row: m.Inbound,
        mail: IncomingMail,
        game_row: m.Game,
        seated: _Seated,
        now: datetime,
    ) -> Outcome:
        """Refuse a reply from the seat's player's address with another +tag (the
        `match_plus_tags` setting is off), telling the sender: the same mailbox, so
        answering it mails nobody who did not write."""
        assert row.id is not None
        sender = mail.sender
        stand_in = m.Player(email=sender, display_name=seated.player.display_name, created_at=now)
        self._error_reply(
            session,
            stand_in,
            row.id,
            "plus-tag",
            "Not your game address",
            [
                Notice(
                    "refused",
                    "",
                    f"This mail came from {sender}, but you play game {game_row.id} as "
                    f"{seated.player.email}, so no move was made. Reply from "
                    f"{seated.player.email}.",
                )
            ],
            now,
            answering=mail.message_id,
        )
        return self._finish(
            session,
            row,
            "rejected",
            f"sender {sender} is the seat's player {seated.player.email} with another "
            "+tag, and +tags do not match (match_plus_tags): told the sender",
            sender=sender,
            game_id=game_row.id,
        )

    def _over_rate(self, session: Session, sender: str, inbound_id: int, now: datetime) -> bool:
        """Whether ``sender`` sent more than the hourly cap before this message (in a batch,
        counted for all its messages at once, in the hour before the batch began)."""
        counted = self._recent.get(inbound_id) if self._recent is not None else None
        if counted is not None and counted[0] == sender:
            count = counted[1]
        else:
            count = count_recent_from(session, sender, now - timedelta(hours=1), before=inbound_id)
        return count >= self.settings.max_per_sender_per_hour

    def _authenticate(
        self, session: Session, mail: IncomingMail
    ) -> tuple[m.Game, list[_Seated], int] | None:
        """The game a reply token of the mail names, its seats, and the token's seat."""
        sqlite = self._tables is not None and not is_postgresql(session)
        for token in find_tokens(mail, self.settings.local_part, self.settings.domain):
            found = self._tables.get(token) if self._tables is not None else None
            if found is None and not sqlite:  # (on SQLite the batch's query knew them all)
                # In a batch, a game another worker holds is not waited for (see
                # process_many).
                found = table_by_token(session, token, wait=self._deferred is None)
            if found is not None:
                game_row, seated, seat = found
                return game_row, [_Seated(s, p) for s, p in seated], seat
        return None

    def _apply_commands(
        self,
        session: Session,
        row: m.Inbound,
        game_row: m.Game,
        seats: list[_Seated],
        seat: int,
        commands: Sequence[Command],
        ignored: Sequence[str],
        sender: str,
        now: datetime,
        *,
        tokenless: bool = False,
    ) -> Outcome:
        """Apply a known player's commands to their game and answer them.

        ``tokenless``: the mail carried no reply token (it was written to the plain
        address and routed to the player's only game). Its From is then the only proof of
        who wrote it, so unless a trusted server vouches for the From (DMARC), ``resign``
        — which cannot be undone — is refused and the player is asked to reply to a game
        mail instead.
        """
        assert row.id is not None and game_row.id is not None
        # On PostgreSQL `table_by_token` locked the game: its moves apply one at a time.
        notices: list[Notice] = []
        if not commands:
            notices.append(
                Notice(
                    "refused",
                    "",
                    "I found no command in your mail.",
                    "reply 'help' for the command language",
                )
            )
            self._reply_view(session, game_row, seats, seat, row.id, notices, "error", now)
            return self._finish(
                session, row, "rejected", "no command found", sender=sender, game_id=game_row.id
            )
        if game_row.status != m.GameStatus.ACTIVE.value and any(
            c.verb in GAME_VERBS for c in commands
        ):
            word = {"paused": "paused by the admin", "finished": "over", "aborted": "aborted"}.get(
                game_row.status, game_row.status
            )
            if game_row.status_reason and game_row.status != m.GameStatus.FINISHED.value:
                word += f" ({game_row.status_reason})"
            notices.append(
                Notice("refused", str(commands[0]), f"This game is {word}; no move was made.")
            )
            self._reply_view(session, game_row, seats, seat, row.id, notices, "error", now)
            return self._finish(
                session,
                row,
                "rejected",
                f"game is {game_row.status}",
                sender=sender,
                game_id=game_row.id,
            )
        game = self.load_game(session, game_row)
        since = len(game.events)
        new_actions: list[tuple[int | None, dict[str, Any], bool]] = []
        wants: list[str] = []
        for cmd in commands:
            if cmd.verb in ("hand", "history", "help"):
                wants.append(cmd.verb)
                continue
            if cmd.verb == "archive":
                if game_row.status != m.GameStatus.FINISHED.value:
                    notices.append(
                        Notice(
                            "refused",
                            str(cmd),
                            "The archive is sent once the game is over: until then it would "
                            "show the cards still hidden and the seed of the shuffle.",
                            "reply 'archive' after the game",
                        )
                    )
                else:
                    wants.append("archive")
                continue
            if cmd.verb == "mail":
                notice = self._set_mail_choice(session, seats[seat].player, cmd)
                notices.append(notice)
                if notice.status == "applied":
                    wants.append("mail")
                continue
            if game.is_over:
                notices.append(Notice("refused", str(cmd), "The game is over."))
                continue
            if cmd.verb == "resign" and tokenless and not self.settings.trusted_authserv_id:
                notices.append(
                    Notice(
                        "refused",
                        str(cmd),
                        "To resign, reply to your latest game email: a mail to the plain "
                        "address carries no proof that you wrote it.",
                    )
                )
                continue
            try:
                action = to_action(game, seat, cmd)
                game.apply(action)
            except AmbiguousActionError as exc:
                notices.append(
                    Notice("ambiguous", str(cmd), str(exc), "play " + " or ".join(exc.candidates))
                )
                continue
            except (IllegalActionError, InvalidSyntaxError) as exc:
                done = already_done(game, seat, cmd, self._logged_auto(session, game_row.id))
                if done is not None:
                    notices.append(Notice("already", str(cmd), done))
                    continue
                legal = getattr(exc, "legal", None) or describe_legal(game, seat, seats)
                notices.append(Notice("refused", str(cmd), _name_seats(str(exc), seats), legal))
                continue
            new_actions.append((seat, action_to_json(action), False))
            notices.append(Notice("applied", str(cmd), f"{action} — done."))
            new_actions.extend(self._auto_moves(game, game_row))
        for line in list(ignored)[:5]:
            notices.append(Notice("ignored", line, "not a command, ignored"))
        if new_actions:
            self.fault("before-log")
            self._log_moves(session, game_row, game, new_actions, row.id, now)
            self._stage(game_row.id, game)
            self.fault("before-render")
            self._send_turn_mails(
                session, game_row, game, seats, since, {seat: notices}, row.id, now
            )
            if "history" in wants:
                self._send_history(session, game_row, game, seats, seat, row.id, now)
            if "help" in wants:
                self._send_help(session, game_row, seats, seat, row.id, now)
            applied = [n.command for n in notices if n.status == "applied"]
            refused = [n.command for n in notices if n.status in ("refused", "ambiguous")]
            reason = "applied: " + "; ".join(applied)
            if refused:
                reason += " — refused: " + "; ".join(refused)
            self.fault("before-mark")
            return self._finish(
                session,
                row,
                "applied",
                reason,
                sender=sender,
                game_id=game_row.id,
                applied=tuple(applied),
            )
        already = [n for n in notices if n.status == "already"]
        if (wants or already) and not any(n.status in ("refused", "ambiguous") for n in notices):
            # Only questions, or moves already made: the player gets where the game stands.
            if already or "hand" in wants or "mail" in wants or not set(wants) - {"hand"}:
                self._reply_view(session, game_row, seats, seat, row.id, notices, "status", now)
            if "archive" in wants:
                self._send_archive(session, game_row, game, seats, seat, row.id, now)
            if "history" in wants:
                self._send_history(session, game_row, game, seats, seat, row.id, now)
            if "help" in wants:
                self._send_help(session, game_row, seats, seat, row.id, now)
            if not wants:
                return self._finish(
                    session,
                    row,
                    "rejected",
                    "already done: " + "; ".join(n.command for n in already),
                    sender=sender,
                    game_id=game_row.id,
                )
            return self._finish(
                session,
                row,
                "applied",
                "sent: " + ", ".join(wants),
                sender=sender,
                game_id=game_row.id,
            )
        self._reply_view(session, game_row, seats, seat, row.id, notices, "error", now)
        if "help" in wants:
            self._send_help(session, game_row, seats, seat, row.id, now)
        reason = "; ".join(f"{n.command}: {n.message}" for n in notices if n.status != "applied")
        return self._finish(
            session, row, "rejected", reason[:2000], sender=sender, game_id=game_row.id
        )

    @staticmethod
    def _logged_auto(session: Session, game_id: int) -> Callable[[int], bool | None]:
        """Whether the logged action ``seq`` of the game was made for its player (None:
        not written yet, as in a batch that holds its writes back)."""

        def auto(seq: int) -> bool | None:
            return session.exec(
                select(m.ActionLog.auto).where(
                    m.ActionLog.game_id == game_id, m.ActionLog.seq == seq
                )
            ).first()

        return auto

    @staticmethod
    def _set_mail_choice(session: Session, player: m.Player, cmd: Command) -> Notice:
        """``mail all`` / ``mail turns``: the player's choice, kept on their player row."""
        try:
            every = mail_choice(cmd)
        except InvalidSyntaxError as exc:
            return Notice("refused", str(cmd), str(exc), "mail all, or mail turns")
        update_row(session, player, mail_all=every)
        if every:
            return Notice("applied", str(cmd), "You will get a mail after every move.")
        return Notice(
            "applied",
            str(cmd),
            "You will get a mail when it is your turn or there is news "
            "(not after each of your own moves).",
        )

    def _auto_moves(
        self, game: Game, game_row: m.Game
    ) -> list[tuple[int | None, dict[str, Any], bool]]:
        """Forced moves (a go, a single legal card) and the computer's moves, applied now."""
        out: list[tuple[int | None, dict[str, Any], bool]] = []
        robots = set(game_row.settings.get("computer", ()))
        while not game.is_over:
            action = game.forced_action()
            if action is None and robots:
                for seat in game.to_act():
                    if seat in robots:
                        action = computer.choose_action(game, seat, _seat_rng(game, seat))
                        break
            if action is None:
                break
            game.apply(action)
            out.append((action.seat, action_to_json(action), True))
        return out

    def _log_moves(
        self,
        session: Session,
        game_row: m.Game,
        game: Game,
        actions: Sequence[tuple[int | None, dict[str, Any], bool]],
        inbound_id: int | None,
        now: datetime,
    ) -> None:
        """Log the new actions of ``game`` and restart its clocks (one UPDATE of the game)."""
        assert game_row.id is not None
        append_actions(
            session,
            game_row.id,
            game_row.action_count,
            actions,
            inbound_id,
            now=now,
            state_hash=game.state_hash(),
            also=self._clock_values(game, now),
        )

    def _after_moves(self, session: Session, game_row: m.Game, game: Game, now: datetime) -> None:
        """Restart the game's clocks after a move; record the outcome when it is over."""
        update_row(session, game_row, **self._clock_values(game, now))

    def _clock_values(self, game: Game, now: datetime) -> dict[str, Any]:
        """The game row's clocks after a move (and its outcome when it is over)."""
        reminder = timedelta(hours=self.settings.reminder_hours)
        timeout = timedelta(days=self.settings.timeout_days)
        values: dict[str, Any] = {
            "last_move_at": now,
            "reminders_sent": 0,
            "next_reminder_at": now + reminder if self.settings.reminder_hours else None,
            "deadline_at": now + timeout if self.settings.timeout_days else None,
        }
        if game.is_over and game.outcome is not None:
            values.update(
                status=m.GameStatus.FINISHED.value,
                outcome=game.outcome.to_json(),
                finished_at=now,
                next_reminder_at=None,
                deadline_at=None,
            )
        return values

    def _finish(
        self,
        session: Session,
        row: m.Inbound,
        status: str,
        reason: str,
        *,
        sender: str | None = None,
        game_id: int | None = None,
        applied: tuple[str, ...] = (),
    ) -> Outcome:
        mark_inbound(session, row, status, reason, game_id, now=self.clock(), sender=sender)
        log.debug("inbound %s %s: %s", row.id, status, reason)
        return Outcome(status, reason, game_id, applied)

    # -- games -----------------------------------------------------------------------

    def load_game(self, session: Session, game_row: m.Game) -> Game:
        """The engine game of ``game_row``: a copy of the cached one when it is current,
        else rebuilt by replaying the logged actions."""
        assert game_row.id is not None
        staged = self._staged.get(game_row.id)  # moved earlier in this transaction
        if staged is not None and len(staged.actions) == game_row.action_count:
            return staged.copy()
        cached = self._games.get(game_row.id)
        if cached is not None and len(cached.actions) == game_row.action_count:
            self._games.move_to_end(game_row.id)
            return cached.copy()
        game = Game(GameSettings.from_json(game_row.settings), game_row.seed)
        for logged in load_actions(session, game_row.id):
            game.apply(action_from_json(logged.action))
        return game

    def _stage(self, game_id: int, game: Game) -> None:
        """Cache ``game`` once the transaction that logged its moves has committed."""
        self._staged[game_id] = game

    def _remember_staged(self) -> None:
        for game_id, game in self._staged.items():
            self._games[game_id] = game
            self._games.move_to_end(game_id)
        self._staged.clear()
        while len(self._games) > self.cache_size:
            self._games.popitem(last=False)

    def _seats(self, session: Session, game_id: int) -> list[_Seated]:
        return [_Seated(seat, player) for seat, player in seat_players(session, game_id)]

    def new_game(
        self,
        players: Sequence[tuple[str, str | None]],
        *,
        target: int = 121,
        muggins: bool = False,
        skunk: str = "skunk",
        seed: str | None = None,
        computer: Sequence[int] = (),
        first_dealer: int | None = None,
    ) -> int:
        """Create a game for (email, display name) pairs and mail everyone their hand."""
        from pbem.mail.address import is_valid_address, normalize_address

        emails = [normalize_address(e) for e, _ in players]
        for (raw, _), email in zip(players, emails, strict=True):
            if not email or not is_valid_address(email):
                raise ServiceError(f"{raw!r} is not an email address")
        if len(set(emails)) != len(emails):
            raise ServiceError("a player cannot sit twice at one game")
        try:
            settings = GameSettings(
                players=len(players),
                target=target,
                skunk=skunk,
                muggins=muggins,
                first_dealer=first_dealer,
            )
        except EngineError as exc:
            raise ServiceError(str(exc)) from exc
        seed = seed or secrets.token_hex(16)
        now = self.clock()
        with session_scope(self.db) as session:
            rows = [
                get_or_create_player(session, email, name, now=now)
                for email, (_, name) in zip(emails, players, strict=True)
            ]
            thread = f"game-{secrets.token_hex(6)}@{self.settings.domain}"
            stored = settings.to_json()
            if computer:
                stored["computer"] = sorted(computer)
            game_row = create_game(
                session,
                stored,
                seed,
                rows,
                [new_token() for _ in rows],
                now=now,
                thread_id=thread,
            )
            assert game_row.id is not None
            game = Game(settings, seed)
            auto = self._auto_moves(game, game_row)
            if auto:
                append_actions(
                    session, game_row.id, 0, auto, None, now=now, state_hash=game.state_hash()
                )
            self._after_moves(session, game_row, game, now)
            seats = self._seats(session, game_row.id)
            self._send_turn_mails(session, game_row, game, seats, 0, {}, None, now)
            return game_row.id

    def rematch(self, game_id: int) -> int:
        """The next game of a match: same players and settings; the loser deals first."""
        from engine.match import first_dealer_after

        with Session(self.db) as session:
            game_row = self.get_game(session, game_id)
            game = self.load_game(session, game_row)
            if not game.is_over:
                raise ServiceError(f"game {game_id} is not over yet")
            people = [
                (s.player.email, s.player.display_name) for s in self._seats(session, game_id)
            ]
            settings = game.settings
            robots = list(game_row.settings.get("computer", ()))
        return self.new_game(
            people,
            target=settings.target,
            muggins=settings.muggins,
            skunk=settings.skunk,
            computer=robots,
            first_dealer=first_dealer_after(game),
        )

    def get_game(self, session: Session, game_id: int) -> m.Game:
        game_row = session.get(m.Game, game_id)
        if game_row is None:
            raise ServiceError(f"no game {game_id}")
        return game_row

    def resend(self, game_id: int) -> int:
        """Mail every player their current view again. Returns the number of mails queued.

        A finished game's mail is its game-over mail (the result, no move offered); an
        aborted game's says it was aborted, why, and the score it stopped at.
        """
        now = self.clock()
        with session_scope(self.db) as session:
            game_row = self.get_game(session, game_id)
            game = self.load_game(session, game_row)
            seats = self._seats(session, game_id)
            tag = f"r{int(now.timestamp() * 1000)}"
            aborted = game_row.status == m.GameStatus.ABORTED.value
            for seated in seats:
                view = player_view(game, seated.seat.seat, len(game.events))
                ctx = self._context(game_row, seats, seated.seat.seat, [], len(game.events))
                if aborted:
                    mail = render_aborted(view, ctx, game_row.status_reason)
                else:
                    mail = render_turn(view, ctx)
                self._enqueue(
                    session,
                    game_row,
                    seated,
                    mail,
                    "aborted" if aborted else "status",
                    tag,
                    now,
                    view_json=None if aborted else view.to_json(),
                )
            return len(seats)

    def set_status(self, game_id: int, status: str, reason: str | None = None) -> m.Game:
        """Pause, resume or abort a game (the clocks stop while it is paused), and mail
        every player what happened and why (``reason``, or a default one): a resumed
        game's mail says whose turn it is; after an abort no mail offers a move again —
        the game's mail not yet sent is cancelled and its clocks are cleared."""
        now = self.clock()
        reason = " ".join((reason or "").split())[:300] or DEFAULT_REASONS[status]
        with session_scope(self.db) as session:
            game_row = session.get(m.Game, game_id, with_for_update=True)
            if game_row is None:
                raise ServiceError(f"no game {game_id}")
            current = game_row.status
            allowed = {
                "paused": {"active"},
                "active": {"paused"},
                "aborted": {"active", "paused"},
            }[status]
            if current not in allowed:
                raise ServiceError(f"game {game_id} is {current}; cannot make it {status}")
            if status == "paused":
                game_row.paused_at = now
            elif status == "active" and game_row.paused_at is not None:
                gap = now - game_row.paused_at
                if game_row.next_reminder_at is not None:
                    game_row.next_reminder_at += gap
                if game_row.deadline_at is not None:
                    game_row.deadline_at += gap
                game_row.paused_at = None
            elif status == "aborted":
                game_row.next_reminder_at = game_row.deadline_at = None
                cancel_game_mail(session, game_id, f"game {game_id} was aborted")
            game_row.status = status
            game_row.status_reason = reason
            game_row.updated_at = now
            session.add(game_row)
            session.flush()
            self._tell_status(session, game_row, status, reason, now)
            session.flush()
            session.expunge(game_row)
            return game_row

    def _tell_status(
        self, session: Session, game_row: m.Game, status: str, reason: str, now: datetime
    ) -> None:
        """Mail every player that the game is now ``status``, and why."""
        assert game_row.id is not None
        game = self.load_game(session, game_row)
        seats = self._seats(session, game_row.id)
        kind = STATUS_WORDS[status]
        tag = f"s{int(now.timestamp() * 1000)}"
        for seated in seats:
            view = player_view(game, seated.seat.seat, len(game.events))
            ctx = self._context(game_row, seats, seated.seat.seat, [], len(game.events))
            mail = render_status_change(view, ctx, status, reason)
            attach = None if status == "aborted" else view.to_json()
            self._enqueue(session, game_row, seated, mail, kind, tag, now, view_json=attach)

    def export(self, game_id: int) -> dict[str, Any]:
        with Session(self.db) as session:
            game_row = self.get_game(session, game_id)
            game = self.load_game(session, game_row)
            return _archive(game_row, game, self._seats(session, game_id))

    def import_archive(self, data: dict[str, Any]) -> int:
        """Store an exported game (verified by replay) as a new game; no mail is sent."""
        from engine.archive import load

        try:
            game = load(data)
        except EngineError as exc:
            raise ServiceError(f"the archive does not replay: {exc}") from exc
        people = _archive_players(data.get("players"), game.players)
        now = self.clock()
        with session_scope(self.db) as session:
            rows = [get_or_create_player(session, email, name, now=now) for email, name in people]
            game_row = create_game(
                session,
                game.settings.to_json(),
                game.seed,
                rows,
                [new_token() for _ in rows],
                now=now,
                thread_id=f"game-{secrets.token_hex(6)}@{self.settings.domain}",
            )
            assert game_row.id is not None
            actions = [(a.seat, action_to_json(a), False) for a in game.actions]
            if actions:
                append_actions(
                    session, game_row.id, 0, actions, None, now=now, state_hash=game.state_hash()
                )
            if game.is_over and game.outcome is not None:
                game_row.status = m.GameStatus.FINISHED.value
                game_row.outcome = game.outcome.to_json()
                game_row.finished_at = now
            elif data.get("status") in ("paused", "aborted"):
                game_row.status = str(data["status"])
            session.add(game_row)
            return game_row.id

    # -- timers ------------------------------------------------------------------------

    def run_timers(self) -> int:
        """Reminders for slow players and the timeout rule. Returns the number of games touched."""
        from pbem.store.games import stalled_games

        now = self.clock()
        touched = 0
        with session_scope(self.db) as session:
            for game_row in stalled_games(session, now):
                if game_row.status != m.GameStatus.ACTIVE.value or game_row.id is None:
                    continue
                game = self.load_game(session, game_row)
                seats = self._seats(session, game_row.id)
                if game_row.deadline_at is not None and game_row.deadline_at <= now:
                    touched += self._timeout(session, game_row, game, seats, now)
                elif game_row.next_reminder_at is not None and game_row.next_reminder_at <= now:
                    waited = now - game_row.last_move_at
                    for seat in game.to_act():
                        seated = seats[seat]
                        view = player_view(game, seat, len(game.events))
                        ctx = self._context(game_row, seats, seat, [], len(game.events))
                        mail = render_reminder(view, ctx, _duration(waited))
                        self._enqueue(
                            session,
                            game_row,
                            seated,
                            mail,
                            "reminder",
                            f"m{game_row.reminders_sent}-{game_row.action_count}",
                            now,
                            view_json=view.to_json(),
                        )
                    game_row.reminders_sent += 1
                    game_row.next_reminder_at = now + timedelta(hours=self.settings.reminder_hours)
                    session.add(game_row)
                    touched += 1
        return touched

    def _timeout(
        self, session: Session, game_row: m.Game, game: Game, seats: list[_Seated], now: datetime
    ) -> int:
        assert game_row.id is not None
        action_kind = self.settings.timeout_action
        if action_kind == "none":
            game_row.deadline_at = None
            session.add(game_row)
            return 0
        since = len(game.events)
        new_actions: list[tuple[int | None, dict[str, Any], bool]] = []
        for seat in game.to_act():
            if game.is_over:
                break
            if action_kind == "forfeit":
                action: Any = Resign(seat, "timeout")
            else:
                action = computer.choose_action(game, seat, _seat_rng(game, seat))
            game.apply(action)
            new_actions.append((seat, action_to_json(action), True))
        new_actions.extend(self._auto_moves(game, game_row))
        if not new_actions:
            return 0
        self._log_moves(session, game_row, game, new_actions, None, now)
        note = Notice(
            "info",
            "",
            "A player ran out of time: "
            + (
                "the game is forfeited."
                if action_kind == "forfeit"
                else "the computer moved for them."
            ),
        )
        self._send_turn_mails(
            session, game_row, game, seats, since, {s.seat.seat: [note] for s in seats}, None, now
        )
        return 1

    # -- mail out ----------------------------------------------------------------------

    def _context(
        self,
        game_row: m.Game,
        seats: list[_Seated],
        seat: int,
        notices: Sequence[Notice],
        since: int,
    ) -> MailContext:
        assert game_row.id is not None
        return MailContext(
            game_id=game_row.id,
            names=tuple(s.name for s in seats),
            recipient_seat=seat,
            reply_hint="Reply to this email with your move.",
            notices=tuple(notices),
            since_event=since,
            archive_hint=ARCHIVE_HINT,
            paused=game_row.status == m.GameStatus.PAUSED.value,
        )

    def _send_turn_mails(
        self,
        session: Session,
        game_row: m.Game,
        game: Game,
        seats: list[_Seated],
        since: int,
        notices: dict[int, list[Notice]],
        inbound_id: int | None,
        now: datetime,
    ) -> None:
        """A turn mail to every player who needs one (`pbem.render.news`): its news run
        from the player's last turn mail (``since`` for a seat that has none on record)."""
        kind = "gameover" if game.is_over else "turn"
        tag = f"a{game_row.action_count}"
        for seated in seats:
            seat = seated.seat.seat
            if self._is_computer(game_row, seat):
                continue  # the computer plays in-process; it has no mailbox
            mine = notices.get(seat, [])
            told = seated.seat.mailed_events
            start = since if told is None or told > len(game.events) else told
            view = player_view(game, seat, start)
            if not (
                seated.player.mail_all
                or any(n.status != "applied" for n in mine)
                or worth_mailing(view, seated.seat.mailed_state)
            ):
                continue  # nothing new for them: their last mail still says it all
            update_row(
                session,
                seated.seat,
                mailed_events=len(game.events),
                mailed_state=mail_state(view),
            )
            ctx = self._context(game_row, seats, seat, mine, start)
            envelope = self._envelope(session, game_row, seated, kind, tag, now, None)
            job = TurnMailJob(view, ctx, envelope)
            if self._maker is not None:
                # In a batch: made while the batch goes on (see pbem.renderer).
                self._queue(session, envelope, kind, game_row.id, self._maker.submit(job), now)
            else:
                self._queue(session, envelope, kind, game_row.id, make_turn_mail(job), now)

    def _reply_view(
        self,
        session: Session,
        game_row: m.Game,
        seats: list[_Seated],
        seat: int,
        inbound_id: int,
        notices: Sequence[Notice],
        kind: str,
        now: datetime,
    ) -> None:
        game = self.load_game(session, game_row)
        view = player_view(game, seat, len(game.events))
        ctx = self._context(game_row, seats, seat, notices, len(game.events))
        if kind == "error":
            mail = render_error(ctx, view, "Your mail could not be applied")
        else:
            mail = render_turn(view, ctx)
        self._enqueue(
            session,
            game_row,
            seats[seat],
            mail,
            kind,
            f"i{inbound_id}",
            now,
            view_json=view.to_json(),
        )

    def _send_history(
        self,
        session: Session,
        game_row: m.Game,
        game: Game,
        seats: list[_Seated],
        seat: int,
        inbound_id: int,
        now: datetime,
    ) -> None:
        view = player_view(game, seat, len(game.events))
        ctx = self._context(game_row, seats, seat, [], 0)
        events = player_view(game, seat, 0).events
        mail = render_history(view, ctx, events)
        self._enqueue(session, game_row, seats[seat], mail, "history", f"h{inbound_id}", now)

    def _send_archive(
        self,
        session: Session,
        game_row: m.Game,
        game: Game,
        seats: list[_Seated],
        seat: int,
        inbound_id: int,
        now: datetime,
    ) -> None:
        """A finished game's archive, as ``pbem game export`` writes it, to one player
        (a finished game hides nothing: every card was shown or may be, and the seed too)."""
        assert game_row.id is not None
        name = f"cribbage-{game_row.id}.json"
        data = archive_bytes(_archive(game_row, game, seats))
        ctx = self._context(game_row, seats, seat, [], len(game.events))
        mail = render_archive(ctx, name)
        envelope = self._envelope(
            session, game_row, seats[seat], "archive", f"x{inbound_id}", now, None
        )
        envelope["attachments"].append((name, "application/json", data))
        raw = compose(subject=mail.subject, text=mail.text, html=mail.html, **envelope)
        self._queue(session, envelope, "archive", game_row.id, raw, now)

    def _send_help(
        self,
        session: Session,
        game_row: m.Game,
        seats: list[_Seated],
        seat: int,
        inbound_id: int,
        now: datetime,
    ) -> None:
        ctx = self._context(game_row, seats, seat, [], 0)
        rules = GameSettings.from_json(game_row.settings)
        mail = render_help(
            ctx,
            f"Cribbage {game_row.id}",
            rules=house_rules(rules.players, rules.target, rules.muggins, rules.skunk),
        )
        self._enqueue(session, game_row, seats[seat], mail, "help", f"p{inbound_id}", now)

    def _error_reply(
        self,
        session: Session,
        player: m.Player,
        inbound_id: int,
        kind: str,
        title: str,
        notices: Sequence[Notice],
        now: datetime,
        answering: str | None = None,
    ) -> None:
        """A reply to a known player whose mail named no game of theirs (throttled),
        threaded after that mail (its Message-ID: ``answering``)."""
        ctx = MailContext(
            game_id=0,
            names=(display_name(player),),
            recipient_seat=0,
            reply_hint="",
            notices=tuple(notices),
        )
        mail = render_error(ctx, None, title)
        self._answer(session, player, inbound_id, kind, mail, now, answering)

    def _answer(
        self,
        session: Session,
        player: m.Player,
        inbound_id: int,
        kind: str,
        mail: RenderedMail,
        now: datetime,
        answering: str | None,
    ) -> None:
        """Queue ``mail`` to ``player``, outside any game, threaded after the mail it
        answers; repeated identical answers within the throttle window are not sent."""
        if not error_throttle_allows(
            session, player.email, kind, now, content=mail.subject + "\n" + mail.text
        ):
            return
        # A random part: the id cannot be guessed, so a forged bounce cannot name it.
        msg_id = f"<err.{inbound_id}.{kind}.{secrets.token_hex(8)}@{self.settings.domain}>"
        ref = reply_reference(answering)
        raw = compose(
            sender=self.settings.address,
            sender_name=self.settings.from_name,
            to=player.email,
            to_name=display_name(player),
            subject=mail.subject,
            text=mail.text,
            html=mail.html,
            message_id=msg_id,
            in_reply_to=ref,
            references=[ref] if ref else [],
            reply_to=None,
            loop_value=self.settings.loop_value,
            date=now,
        )
        outbox_kind = "help" if kind == "help" else "error"
        enqueue_outbox(
            session, msg_id, player.email, self.settings.address, outbox_kind, raw, None, now=now
        )

    def _enqueue(
        self,
        session: Session,
        game_row: m.Game,
        seated: _Seated,
        mail: RenderedMail,
        kind: str,
        tag: str,
        now: datetime,
        view_json: dict[str, Any] | None = None,
    ) -> None:
        """Queue ``mail`` to ``seated``, threaded after the seat's last mail."""
        if self._is_computer(game_row, seated.seat.seat):
            return  # the computer plays in-process; it has no mailbox
        envelope = self._envelope(session, game_row, seated, kind, tag, now, view_json)
        raw = compose(subject=mail.subject, text=mail.text, html=mail.html, **envelope)
        self._queue(session, envelope, kind, game_row.id, raw, now)

    @staticmethod
    def _is_computer(game_row: m.Game, seat: int) -> bool:
        return seat in game_row.settings.get("computer", ())

    def _envelope(
        self,
        session: Session,
        game_row: m.Game,
        seated: _Seated,
        kind: str,
        tag: str,
        now: datetime,
        view_json: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """The arguments of `compose` but the subject and the bodies, for a mail to
        ``seated``: its Message-ID (naming the game state and the kind of mail), threading
        after the seat's last mail, the seat's reply address, and the view as an
        attachment. The seat's last mail becomes this one."""
        assert game_row.id is not None
        token = seated.seat.token
        msg_id = message_id(token, game_row.id, f"{tag}.{kind}", self.settings.domain)
        previous = seated.seat.last_mail_id
        references = [f"<{game_row.thread_id}>"] if game_row.thread_id else []
        if previous:
            references.append(f"<{previous}>")
        attachments = []
        if view_json is not None:
            attachments.append(view_attachment(view_json))
        update_row(session, seated.seat, last_mail_id=msg_id.strip("<>"))
        return {
            "sender": self.settings.address,
            "sender_name": self.settings.from_name,
            "to": seated.player.email,
            "to_name": seated.name,
            "message_id": msg_id,
            "in_reply_to": f"<{previous}>" if previous else (references[0] if references else None),
            "references": references,
            "reply_to": reply_address(self.settings.local_part, token, self.settings.domain),
            "loop_value": self.settings.loop_value,
            "date": now,
            "attachments": attachments,
        }

    def _queue(
        self,
        session: Session,
        envelope: dict[str, Any],
        kind: str,
        game_id: int | None,
        raw: bytes | PendingMail,
        now: datetime,
    ) -> None:
        """Put a composed mail in the outbox (in a batch: with the batch's other mail,
        just before the commit, when every `PendingMail` is made)."""
        # Every id is new in this transaction (it names the game state and the kind of
        # mail), so a plain insert; the unique index still guards against a duplicate.
        row = outbox_row(
            envelope["message_id"],
            envelope["to"],
            self.settings.address,
            kind,
            raw if isinstance(raw, bytes) else b"",
            game_id,
            now=now,
        )
        if self._deferred is not None:
            if isinstance(raw, PendingMail):
                row["raw"] = raw  # its bytes once the batch's mail is made
            self._deferred.append(row)
        else:
            assert isinstance(raw, bytes)
            queue_mails(session, [row])


def _peek_headers(raw: bytes) -> tuple[str | None, str | None, str | None]:
    """Sender, subject and Message-ID from the header section only (cheap; never raises)."""
    from email.parser import BytesHeaderParser
    from email.policy import compat32

    from pbem.mail.address import from_mailbox
    from pbem.mail.decoding import decode_rfc2047

    try:
        headers = BytesHeaderParser(policy=compat32).parsebytes(raw)
        sender = from_mailbox([str(v) for v in headers.get_all("From", [])])[1] or None
        subject = decode_rfc2047(str(headers.get("Subject", "")))[:500] or None
        msg_id = str(headers.get("Message-ID", "")).strip() or None
    except Exception:
        return None, None, None
    return sender, subject, msg_id


def _archive(game_row: m.Game, game: Game, seats: Sequence[_Seated]) -> dict[str, Any]:
    """The JSON archive of a game (`pbem game export`, and the ``archive`` reply)."""
    return to_archive(
        game,
        game_id=game_row.id,
        players=[{"email": s.player.email, "name": s.name} for s in seats],
        status=game_row.status,
        created_at=game_row.created_at.isoformat(),
    )


def archive_bytes(data: dict[str, Any]) -> bytes:
    """An archive as the file `pbem game export` writes."""
    return (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _archive_players(people: Any, seats: int) -> list[tuple[str, str | None]]:
    """The (address, name) of each seat listed in an archive; ServiceError when the list
    is not one valid, distinct address per seat."""
    from pbem.mail.address import is_valid_address, normalize_address

    if not isinstance(people, list) or len(people) != seats:
        raise ServiceError("the archive must list one player per seat")
    out: list[tuple[str, str | None]] = []
    for seat, person in enumerate(people):
        raw = person.get("email") if isinstance(person, dict) else None
        email = normalize_address(raw) if isinstance(raw, str) else ""
        if not email or not is_valid_address(email):
            raise ServiceError(f"the archive's player {seat} has no valid email address")
        name = person.get("name")
        out.append((email, name if isinstance(name, str) and name.strip() else None))
    if len({email for email, _ in out}) != len(out):
        raise ServiceError("the archive lists one address at two seats")
    return out


def _name_seats(message: str, seats: Sequence[_Seated]) -> str:
    """The engine's "seat 1" in a message, as the player's name."""
    import re

    def name(match: re.Match[str]) -> str:
        number = int(match.group(1))
        return seats[number].name if 0 <= number < len(seats) else match.group(0)

    return re.sub(r"\bseat (\d+)\b", name, message)


def describe_legal(game: Game, seat: int, seats: Sequence[_Seated]) -> str:
    """What ``seat`` may do now, in words, for a refusal."""
    if game.is_over:
        return "nothing: the game is over"
    to_act = game.to_act()
    if seat not in to_act:
        names = " and ".join(seats[s].name for s in to_act) or "nobody"
        return f"wait: it is {names}'s turn"
    legal = game.legal_actions(seat)
    if not legal:
        return "nothing right now"
    first = legal[0]
    kind = type(first).__name__
    if kind == "Discard":
        need = len(first.cards)  # type: ignore[union-attr]
        held = " ".join(str(c) for c in sorted(game.holding(seat)))
        return f"discard {need} of {held}"
    if kind in ("Play", "Go"):
        return " or ".join(str(a) for a in legal)
    if kind == "Claim":
        return "count N (the points in your hand), e.g. 'count 8'"
    return " or ".join(str(a) for a in legal)


def _seat_rng(game: Game, seat: int) -> Any:
    import random

    return random.Random(f"{game.seed}/{len(game.actions)}/{seat}")


def _duration(delta: timedelta) -> str:
    hours = delta.total_seconds() / 3600
    if hours < 48:
        return f"{hours:.0f} hours"
    return f"{hours / 24:.0f} days"
