"""The tables of the service, as SQLModel classes.

The schema is created and changed only by the Alembic migrations in `migrations/`; these
classes must always match the newest migration (a test compares them). Every datetime is
aware UTC (`UTCDateTime`); JSON columns hold canonical JSON text (`JSONText`).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import BigInteger, Index, Text, UniqueConstraint, false, text, true
from sqlmodel import Field, SQLModel

# The states a row can be in (enums without SQLAlchemy), importable from here too.
from pbem.store.states import (
    ConfirmationStatus,
    GameStatus,
    InboundStatus,
    InvitationStatus,
    MatchStatus,
    OutboxStatus,
)
from pbem.store.types import ID_TYPE, JSONText, UTCDateTime

# Deterministic constraint names, so later migrations (and SQLite batch mode) can name them.
SQLModel.metadata.naming_convention = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# Tables of their own modules (named as the others): the index of stored mail by
# mailbox, the stored standings, and the raw bytes of stored mail.
from pbem.store.named import MailName  # noqa: E402, F401
from pbem.store.rating_tables import RatedGame, Rating, RatingTotal  # noqa: E402, F401
from pbem.store.rawmail import raw_property  # noqa: E402


class Player(SQLModel, table=True):
    """A person known by an email address (stored stripped and lowercase)."""

    __tablename__ = "player"
    # The daily digest timer reads the players who chose it, not every player.
    __table_args__ = (Index(None, "digest", "digest_day"),)

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    email: str = Field(unique=True)
    display_name: str | None = None
    created_at: datetime = Field(sa_type=UTCDateTime)
    bounce_count: int = 0
    last_bounce_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    last_bounce_reason: str | None = Field(default=None, sa_type=Text)
    # A mail after every move of the game, even one that brings nothing new ("mail all").
    mail_all: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    # Set by the admin (pbem player block): the address starts no game, is invited to
    # none, and its mail is ignored.
    blocked: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    # Which parts the player's mails carry: "both" (text and HTML), "text" or "html".
    mail_parts: str = Field(default="both", sa_column_kwargs={"server_default": "both"})
    # "stop": no mail but the answers to the player's own mail, until "start".
    stopped: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    # "mail replay on|off": whether the game-over mail attaches the replay page; None
    # follows the configuration's mail_replay.
    mail_replay: bool | None = None
    # "away": the player's clocks stand still until then.
    away_until: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # "digest": one mail a day (at the digest_hour setting, UTC) listing the games waiting
    # on the player, instead of the news mails of moves while it is not their turn.
    digest: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    # The UTC day (YYYY-MM-DD) of the last digest sent: at most one a day.
    digest_day: str | None = None


class Game(SQLModel, table=True):
    """One game: its settings and seed; its moves are the `ActionLog` rows.

    `action_count` is the number of logged actions, hence the `seq` of the next one.
    """

    __tablename__ = "game"
    # The reminder and timeout timer reads the games whose clock is due (a finished or
    # aborted game has none), not every game: one index per clock.
    __table_args__ = (Index(None, "next_reminder_at"), Index(None, "deadline_at"))

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    status: str = Field(default=GameStatus.ACTIVE.value, index=True)
    game_type: str = "cribbage"
    settings: dict[str, Any] = Field(sa_type=JSONText)
    # The engine seed K; None while a fair game waits for its players' cuts.
    seed: str | None = None
    # pbem-deal/1 (None: the game's deals are not verifiable, e.g. an admin's --seed):
    # the commitment C = sha256(S), the secret server seed S (revealed only once the
    # game is over or aborted), and the human seats' entropy texts
    # [{"seat": n, "text": E}, ...]; every cut mail received is a `CutMail`.
    commitment: str | None = None
    # The deal protocol of a fair game ("pbem-deal/2"); None: a game committed before
    # the protocol was recorded, dealt by "pbem-deal/1".
    deal_protocol: str | None = None
    server_seed: str | None = None
    entropy: list[dict[str, Any]] | None = Field(default=None, sa_type=JSONText)
    # The server seed of the game that follows this one (its match's next game, or a
    # rematch), made when this one ends: its commitment is in the game-over mail, so
    # each player's answer to that mail (next, rematch, accept) is their cut for it.
    next_seed: str | None = None
    created_at: datetime = Field(sa_type=UTCDateTime)
    updated_at: datetime = Field(sa_type=UTCDateTime)
    finished_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    action_count: int = 0
    state_hash: str | None = None
    outcome: dict[str, Any] | None = Field(default=None, sa_type=JSONText)
    thread_id: str | None = None
    last_move_at: datetime = Field(sa_type=UTCDateTime)
    next_reminder_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    reminders_sent: int = 0
    deadline_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    paused_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # Why the admin last paused, resumed or aborted the game (told to the players).
    status_reason: str | None = Field(default=None, sa_type=Text)
    # Whether ``hint`` is answered: on in a game of one player against the computer,
    # otherwise once every player sent ``hints on`` (see pbem.service.game.hints).
    hints: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    # The match the game belongs to (None: a single game), and where it stood when this
    # game began: {"best_of": 5, "game": 2, "before": [1, 0]} (games won per side so far,
    # see pbem.service.ops.matches); fixed when the game is created.
    match_id: int | None = Field(
        default=None, foreign_key="game_match.id", index=True, sa_type=ID_TYPE
    )
    match_info: dict[str, Any] | None = Field(default=None, sa_type=JSONText)
    # The finished game this one is the rematch (or the next game of the match) of.
    # The id of the game's newest table talk (0: none), so that a mail needs no query to
    # know there is nothing unheard.
    last_talk: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})
    rematch_of: int | None = Field(default=None, foreign_key="game.id", index=True, sa_type=ID_TYPE)
    # What the game that this one follows (``rematch_of``) ended with, fixed when this
    # game is created, for its archive's ``deal_proof.follows``: {"game", "state_hash",
    # "scores", "winner", "dealer" (its last dealer), "rule": "loser-deals-first"}.
    follows: dict[str, Any] | None = Field(default=None, sa_type=JSONText)
    # Whether others may watch the game ("watch GAME"): on for games against the
    # computer, off for challenges until every human player says "observers on".
    observers: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    # When the game's clocks (``next_reminder_at``, ``deadline_at``) started running: the
    # move, or the delivery of the turn mail of the player to move, when that came later
    # (None: the move, ``last_move_at``; see pbem.store.delivery).
    clock_from: datetime | None = Field(default=None, sa_type=UTCDateTime)


class CutMail(SQLModel, table=True):
    """Every cut mail a game received, accepted or refused (a second cut, a cut from
    someone not at the seat, a cut after the deal…), for its archive's
    ``deal_proof.cuts``: what the server did with each player's cut is on the record."""

    __tablename__ = "cut_mail"

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    game_id: int = Field(foreign_key="game.id", index=True, sa_type=ID_TYPE)
    # The seat whose reply address the mail answered.
    seat: int | None = None
    message_id: str | None = None
    received_at: datetime = Field(sa_type=UTCDateTime)
    # The entropy text the mail makes (its Message-ID and cleaned words); None once its
    # player was forgotten, ``sha256`` then standing for it.
    text: str | None = Field(default=None, sa_type=Text)
    # The text's SHA-256 (lowercase hex), kept when the text is removed (None: see text).
    sha256: str | None = None
    accepted: bool = False
    # Why it was refused (None: accepted).
    reason: str | None = Field(default=None, sa_type=Text)


class Seat(SQLModel, table=True):
    """A player's place at a game, with the secret token of its reply address."""

    __tablename__ = "seat"
    __table_args__ = (UniqueConstraint("game_id", "seat"),)

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    game_id: int = Field(foreign_key="game.id", sa_type=ID_TYPE)
    seat: int
    player_id: int = Field(foreign_key="player.id", index=True, sa_type=ID_TYPE)
    token: str = Field(unique=True, index=True)
    last_mail_id: str | None = None
    # What the seat's last turn mail told it: the game's event count then (its news reach
    # that far) and a digest of what it could do (see pbem.render.news).
    mailed_events: int | None = None
    mailed_state: str | None = None
    # Days of the game's "away" allowance (setting away_days_per_game) the seat has used.
    away_days: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})
    # The seat's player sent ``hints on`` in this game (and not ``hints off`` since).
    hints_agreed: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    # The id of the last table talk (`Talk`) a game mail to the seat showed.
    heard_talk: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})
    # The seat's player said "observers on" (a human game opens to observers when all did).
    allows_observers: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    # Whether the seat's player joined the game themself: the admin seated them, or a
    # mail of theirs proven by a token (or the trusted DMARC verdict) asked for it or
    # answered its mail. A seat made by a mail proven by its From alone (a game started
    # or a challenge sent to the plain address) is not joined until its player answers
    # with the seat's token; until then it gets the game's first mail and no other
    # (`pbem.service.policy`).
    joined: bool = Field(default=True, sa_column_kwargs={"server_default": true()})
    # How many mails went to the seat while it was not joined.
    unjoined_mails: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})
    # When a turn mail to the seat failed for good (None: its mail gets through): the game
    # waits for it, its clocks stopped, until a mail to the seat is delivered.
    mail_failed_at: datetime | None = Field(default=None, sa_type=UTCDateTime, index=True)
    # Whether the other players were told that the game waits for this seat's mail: None
    # not yet, True told (and, once its mail got through, not yet told that the game goes
    # on), False nobody could be told.
    mail_failed_told: bool | None = Field(default=None, index=True)


class Match(SQLModel, table=True):
    """Several games between the same players, the first side to win a majority of
    ``best_of`` game points (a lurch or skunk counts two, a double skunk four) winning.
    ``score`` holds the game points won per side so far."""

    __tablename__ = "game_match"

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    best_of: int
    status: str = Field(default=MatchStatus.ACTIVE.value)
    score: list[int] = Field(sa_type=JSONText)
    winner_side: int | None = None
    created_at: datetime = Field(sa_type=UTCDateTime)
    finished_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class Talk(SQLModel, table=True):
    """One ``say`` of a player at a game: table talk, relayed to the others."""

    __tablename__ = "talk"
    __table_args__ = (Index(None, "game_id", "seat", "created_at"),)

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    game_id: int = Field(foreign_key="game.id", sa_type=ID_TYPE)
    seat: int
    text: str = Field(sa_type=Text)
    # The game's event count when it was said (where it falls in the history).
    events: int = 0
    inbound_id: int | None = Field(default=None, foreign_key="inbound.id", sa_type=ID_TYPE)
    created_at: datetime = Field(sa_type=UTCDateTime)


class Watcher(SQLModel, table=True):
    """An address watching a game ("watch GAME"): it gets the public board after every
    move, threaded after its last mail, and can never act in the game."""

    __tablename__ = "watcher"
    __table_args__ = (UniqueConstraint("game_id", "player_id"),)

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    game_id: int = Field(foreign_key="game.id", sa_type=ID_TYPE)
    player_id: int = Field(foreign_key="player.id", index=True, sa_type=ID_TYPE)
    created_at: datetime = Field(sa_type=UTCDateTime)
    last_mail_id: str | None = None
    # The game's event count at the watcher's last mail (its news reach that far).
    mailed_events: int | None = None


class Invitation(SQLModel, table=True):
    """One invited address's place in a challenge, with the secret token of its reply
    address. The invitations of one challenge share ``inbound_id`` (the challenge mail)
    and ``settings`` (the game to start, with a ``challenge`` key naming it)."""

    __tablename__ = "invitation"

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    settings: dict[str, Any] = Field(sa_type=JSONText)
    challenger_id: int = Field(foreign_key="player.id", index=True, sa_type=ID_TYPE)
    invitee: str = Field(index=True)
    token: str = Field(unique=True)
    status: str = Field(default=InvitationStatus.PENDING.value, index=True)
    inbound_id: int | None = Field(default=None, foreign_key="inbound.id", sa_type=ID_TYPE)
    created_at: datetime = Field(sa_type=UTCDateTime)
    expires_at: datetime = Field(sa_type=UTCDateTime)
    answered_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class Consent(SQLModel, table=True):
    """What one mailbox agreed to, and what was sent to it unasked (`pbem.service.policy`).

    ``mailbox`` is the address folded as the policy folds it: lowercase, without a
    ``+tag``. A mailbox is ``confirmed`` once it proved it reads the service's mail (it
    answered with a token mailed to it, the trusted server vouched for it, or the admin
    seated it); ``suppressed`` (why: "never", "declined", "stop", "unsubscribe") until
    ``suppressed_until`` (None: until it says ``start``). ``last_unsolicited_at``: the last
    mail it got without having confirmed. The day's counters (``day``, UTC) cap what
    anyone may make the service send it, or start in its name, in one day."""

    __tablename__ = "consent"

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    mailbox: str = Field(unique=True)
    confirmed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    suppressed: str | None = None
    suppressed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    suppressed_until: datetime | None = Field(default=None, sa_type=UTCDateTime)
    last_unsolicited_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    day: str | None = None
    invitations_today: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})
    games_today: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})
    confirmations_today: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})
    # Mails today that answered a mail proven by its From alone (confirmation requests
    # included): ``max_unproven_answers_per_day`` caps them.
    answers_today: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})
    # Games started in its name by mails proven by their From alone since
    # ``unjoined_since``, until its player answers one of the service's mails.
    unjoined_since: datetime | None = Field(default=None, sa_type=UTCDateTime)
    unjoined_games: int = Field(default=0, sa_column_kwargs={"server_default": text("0")})


class Confirmation(SQLModel, table=True):
    """A request the service could not act on before its sender proved their address:
    the mail that asked (``inbound_id``) is acted on when ``address`` answers the
    confirmation mail, whose reply address carries ``token``."""

    __tablename__ = "confirmation"

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    token: str = Field(unique=True)
    address: str
    mailbox: str = Field(index=True)
    action: str
    inbound_id: int = Field(foreign_key="inbound.id", index=True, sa_type=ID_TYPE)
    status: str = Field(default=ConfirmationStatus.PENDING.value)
    created_at: datetime = Field(sa_type=UTCDateTime)
    expires_at: datetime = Field(sa_type=UTCDateTime)
    answered_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # A fair game's secret server seed whose commitment the mail showed before the game
    # existed (a challenge's confirmation, the welcome, the mail that says a proven
    # challenge's invitations went): the answer is the writer's cut for its deal.
    server_seed: str | None = None


class Inbound(SQLModel, table=True):
    """A received message, stored raw before anything else happens to it."""

    __tablename__ = "inbound"
    # The hourly cap per sender counts recent mail by sender: keep that a range scan.
    __table_args__ = (Index(None, "sender", "received_at"), Index(None, "pruned_at", "id"))

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    message_key: str = Field(unique=True)
    source: str
    received_at: datetime = Field(sa_type=UTCDateTime)
    status: str = Field(default=InboundStatus.PENDING.value, index=True)
    reason: str | None = Field(default=None, sa_type=Text)
    sender: str | None = None
    subject: str | None = Field(default=None, sa_type=Text)
    game_id: int | None = Field(default=None, foreign_key="game.id", index=True, sa_type=ID_TYPE)
    processed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    attempts: int = 0
    rule: str | None = None  # the rule of intake's chain that ended it
    # A proven mail over the hourly volume waits until then (`pbem.service.intake`).
    not_before: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # When ``raw`` was emptied (`pbem.store.retention`): the mail is done with and kept
    # by its columns alone (the Message-ID in ``message_key`` still deduplicates).
    pruned_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    if TYPE_CHECKING:  # the bytes, in ``inbound_raw`` (`pbem.store.rawmail`): read-only
        raw: bytes = b""


class ActionLog(SQLModel, table=True):
    """One applied engine action; append-only. `seq` counts from 0 within a game."""

    __tablename__ = "action_log"
    __table_args__ = (UniqueConstraint("game_id", "seq"),)

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    game_id: int = Field(foreign_key="game.id", sa_type=ID_TYPE)
    seq: int
    seat: int | None = None
    action: dict[str, Any] = Field(sa_type=JSONText)
    auto: bool = False
    inbound_id: int | None = Field(
        default=None, foreign_key="inbound.id", index=True, sa_type=ID_TYPE
    )
    created_at: datetime = Field(sa_type=UTCDateTime)


class Outbox(SQLModel, table=True):
    """A fully rendered outgoing message waiting for (or done with) delivery."""

    __tablename__ = "outbox"
    __table_args__ = (Index(None, "status", "next_attempt_at"), Index(None, "pruned_at", "id"))

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    message_id: str = Field(unique=True)
    game_id: int | None = Field(default=None, foreign_key="game.id", index=True, sa_type=ID_TYPE)
    recipient: str
    sender: str
    kind: str
    status: str = OutboxStatus.PENDING.value
    attempts: int = 0
    next_attempt_at: datetime = Field(sa_type=UTCDateTime)
    last_error: str | None = Field(default=None, sa_type=Text)
    created_at: datetime = Field(sa_type=UTCDateTime)
    sent_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # A turn mail to a player to move: its delivery starts the game's clocks.
    starts_clock: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    # When ``pbem outbox retry`` queued it again: its time to retry runs from then.
    retried_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # When ``raw`` was emptied, the mail delivered or cancelled (`pbem.store.retention`).
    pruned_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    if TYPE_CHECKING:  # the bytes, in ``outbox_raw`` (`pbem.store.rawmail`): read-only
        raw: bytes = b""


Inbound.raw = raw_property(Inbound.id, outgoing=False)
Outbox.raw = raw_property(Outbox.id, outgoing=True)


class ErrorThrottle(SQLModel, table=True):
    """When an error reply of one kind last went to one address."""

    __tablename__ = "error_throttle"
    __table_args__ = (UniqueConstraint("address", "kind"),)

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    address: str
    kind: str
    last_sent_at: datetime = Field(sa_type=UTCDateTime)


class MailboxCursor(SQLModel, table=True):
    """How far an IMAP mailbox has been read."""

    __tablename__ = "mailbox_cursor"

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    name: str = Field(unique=True)
    uidvalidity: int = Field(sa_type=BigInteger)
    last_uid: int = Field(sa_type=BigInteger)
    updated_at: datetime = Field(sa_type=UTCDateTime)


class WorkerLease(SQLModel, table=True):
    """A named job held by one worker until `expires_at`."""

    __tablename__ = "worker_lease"

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    name: str = Field(unique=True)
    holder: str
    expires_at: datetime = Field(sa_type=UTCDateTime)


class TransportState(SQLModel, table=True):
    """The last error of the inbox or the outbox transport (``name``), and when that
    transport last worked after an error; for ``pbem status``."""

    __tablename__ = "transport_state"

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    name: str = Field(unique=True)
    last_error: str | None = Field(default=None, sa_type=Text)
    last_error_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    last_ok_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class EventCount(SQLModel, table=True):
    """A counter of the monitoring over the installation's life (`pbem.store.counts`)."""

    __tablename__ = "event_count"
    name: str = Field(primary_key=True)
    value: int = Field(default=0, sa_type=BigInteger, sa_column_kwargs={"server_default": "0"})


# The public commitment log's tables (kept in their own module: registered here).
from pbem.store.commitlog import CommitmentEntry, CommitmentHead  # noqa: E402, F401
