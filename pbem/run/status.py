"""``pbem status``: the service's health on one screen.

What it looks at: whether a daemon runs (SQLite: the daemon's lock file is held;
PostgreSQL: a worker holds the inbox reader's advisory lock), the inbox (pending, failed),
the outbox (queued, failed, the oldest queued), bounced players, stalled games and the
transports' last errors.

What needs attention (exit code 1), each with its line in ``problems``:

- no daemon is running;
- mail is waiting: a pending inbox message older than ``PENDING_LATE``, or mail queued
  whose delivery is overdue by more than ``QUEUED_LATE``;
- mail failed: an inbox message that failed in the last ``RECENT`` (its processing
  raised; ``pbem inbox list --status failed``), or outbox mail that failed for good
  (``pbem outbox retry``);
- a transport's last error is more recent than its last success;
- a game waits because the turn mail (or, before its deal, the cut request) of one of
  its players failed for good (its clocks stopped until a mail to that player is
  delivered: fix the address, then ``pbem outbox retry``).

Bounced players and stalled games are listed but are the players' business, not the
operator's: they do not make the status 1.
"""

from __future__ import annotations

import fcntl
import zlib
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, text
from sqlmodel import Session, col, func, select

from pbem.config import Settings
from pbem.run.lock import lock_for
from pbem.store import models as m
from pbem.store.health import failing, transport_states

PENDING_LATE = timedelta(minutes=5)
QUEUED_LATE = timedelta(minutes=15)
RECENT = timedelta(hours=24)


@dataclass
class Status:
    """What ``pbem status`` reports; ``problems`` empty means healthy."""

    daemon_running: bool
    daemon_detail: str
    inbox_pending: int
    inbox_oldest_pending_seconds: float | None
    inbox_failed: int
    inbox_failed_recently: int
    outbox_queued: int
    outbox_oldest_queued_seconds: float | None
    outbox_overdue_seconds: float | None
    outbox_failed: int
    bounced_players: list[dict[str, Any]] = field(default_factory=list)
    stalled_games: list[int] = field(default_factory=list)
    waiting_games: list[dict[str, Any]] = field(default_factory=list)
    transports: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["healthy"] = self.healthy
        return data


def daemon_state(settings: Settings, db: Engine) -> tuple[bool, str]:
    """(whether a daemon runs, how that is known)."""
    if db.dialect.name == "postgresql":
        key = zlib.crc32(settings.inbound.encode()) & 0x7FFFFFFF
        with db.connect() as connection:
            pid = connection.execute(
                text(
                    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    "AND classid = 0 AND objid = :k AND objsubid = 1"
                ),
                {"k": key},
            ).scalar()
        if pid is None:
            return False, "no worker holds the inbox reader's lock"
        return True, f"a worker reads the inbox (server process {pid})"
    lock = lock_for(settings.db_url)
    if lock is None or not lock.path.exists():
        return False, "no daemon has run here (no lock file)"
    with lock.path.open("r") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = fh.read().strip() or "?"
            return True, f"pid {holder} holds {lock.path.name}"
        fcntl.flock(fh, fcntl.LOCK_UN)
    return False, f"nobody holds {lock.path.name}"


def gather(settings: Settings, db: Engine, now: datetime) -> Status:
    """The service's health at ``now``."""
    running, detail = daemon_state(settings, db)
    inbound = m.InboundStatus
    with Session(db) as session:

        def count(model: Any, *where: Any) -> int:
            return int(session.exec(select(func.count()).select_from(model).where(*where)).one())

        def oldest(column: Any, *where: Any) -> datetime | None:
            value: datetime | None = session.exec(select(func.min(column)).where(*where)).one()
            return value

        pending_where = m.Inbound.status == inbound.PENDING.value
        failed_where = m.Inbound.status == inbound.FAILED.value
        inbox_pending = count(m.Inbound, pending_where)
        first_pending = oldest(col(m.Inbound.received_at), pending_where)
        inbox_failed = count(m.Inbound, failed_where)
        failed_recently = count(
            m.Inbound, failed_where, col(m.Inbound.processed_at) >= now - RECENT
        )
        queued_where = col(m.Outbox.status).in_(
            [m.OutboxStatus.PENDING.value, m.OutboxStatus.SENDING.value]
        )
        outbox_queued = count(m.Outbox, queued_where)
        first_queued = oldest(col(m.Outbox.created_at), queued_where)
        first_due = oldest(col(m.Outbox.next_attempt_at), queued_where)
        outbox_failed = count(m.Outbox, m.Outbox.status == m.OutboxStatus.FAILED.value)
        bounced = [
            {
                "email": p.email,
                "bounces": p.bounce_count,
                "last_bounce_at": p.last_bounce_at.isoformat() if p.last_bounce_at else None,
                "reason": p.last_bounce_reason,
            }
            for p in session.exec(
                select(m.Player)
                .where(m.Player.bounce_count > 0)
                .order_by(col(m.Player.bounce_count).desc())
            )
        ]
        stalled = (
            [
                g
                for g in session.exec(
                    select(m.Game.id)
                    .where(m.Game.status == m.GameStatus.ACTIVE.value)
                    .where(m.Game.last_move_at <= now - timedelta(hours=settings.reminder_hours))
                    .order_by(col(m.Game.last_move_at))
                )
                if g is not None
            ]
            if settings.reminder_hours > 0
            else []
        )
        waiting = [
            {
                "game": seat.game_id,
                "seat": seat.seat,
                "email": email,
                "since": seat.mail_failed_at.isoformat() if seat.mail_failed_at else None,
                "mail": "cut request" if seed is None else "turn mail",  # not dealt yet
            }
            for seat, email, seed in session.exec(
                select(m.Seat, m.Player.email, m.Game.seed)
                .join(m.Player, col(m.Player.id) == col(m.Seat.player_id))
                .join(m.Game, col(m.Game.id) == col(m.Seat.game_id))
                .where(
                    col(m.Seat.mail_failed_at).is_not(None),
                    col(m.Game.status).in_(
                        (
                            m.GameStatus.ACTIVE.value,
                            m.GameStatus.PAUSED.value,
                            m.GameStatus.CUTTING.value,
                        )
                    ),
                )
                .order_by(col(m.Seat.mail_failed_at))
            )
        ]
        transports = [
            {
                "name": t.name,
                "last_error": t.last_error,
                "last_error_at": t.last_error_at.isoformat() if t.last_error_at else None,
                "last_ok_at": t.last_ok_at.isoformat() if t.last_ok_at else None,
                "failing": failing(t),
            }
            for t in transport_states(session)
        ]

    def age(when: datetime | None) -> float | None:
        return None if when is None else max(0.0, (now - when).total_seconds())

    status = Status(
        daemon_running=running,
        daemon_detail=detail,
        inbox_pending=inbox_pending,
        inbox_oldest_pending_seconds=age(first_pending),
        inbox_failed=inbox_failed,
        inbox_failed_recently=failed_recently,
        outbox_queued=outbox_queued,
        outbox_oldest_queued_seconds=age(first_queued),
        outbox_overdue_seconds=age(first_due) if first_due and first_due < now else None,
        outbox_failed=outbox_failed,
        bounced_players=bounced,
        stalled_games=stalled,
        waiting_games=waiting,
        transports=transports,
    )
    status.problems = _problems(status)
    return status


def _problems(s: Status) -> list[str]:
    problems: list[str] = []
    if not s.daemon_running:
        problems.append(f"no daemon is running ({s.daemon_detail}): start pbem serve")
    waited = s.inbox_oldest_pending_seconds
    if waited is not None and waited > PENDING_LATE.total_seconds():
        problems.append(
            f"{s.inbox_pending} received messages wait to be processed, the oldest for "
            f"{_span(waited)}"
        )
    if s.inbox_failed_recently:
        problems.append(
            f"{s.inbox_failed_recently} received messages failed in the last "
            f"{_span(RECENT.total_seconds())}: pbem inbox list --status failed"
        )
    if (
        s.outbox_overdue_seconds is not None
        and s.outbox_overdue_seconds > QUEUED_LATE.total_seconds()
    ):
        problems.append(
            f"outgoing mail is overdue by {_span(s.outbox_overdue_seconds)} "
            f"({s.outbox_queued} queued)"
        )
    if s.outbox_failed:
        problems.append(
            f"{s.outbox_failed} outgoing messages failed: pbem outbox list --status failed, "
            "then pbem outbox retry"
        )
    for t in s.transports:
        if t["failing"]:
            problems.append(f"the {t['name']} transport is failing: {t['last_error']}")
    for w in s.waiting_games:
        problems.append(
            f"game {w['game']} waits: the {w['mail']} to {w['email']} failed for good "
            f"(since {w['since']}); its clocks are stopped. Fix the address, then "
            "pbem outbox retry"
        )
    return problems


def _span(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"


def describe(s: Status) -> list[str]:
    """The status as lines of text for a terminal."""
    lines = [
        f"status: {'healthy' if s.healthy else 'NEEDS ATTENTION'}",
        f"daemon: {'running' if s.daemon_running else 'NOT RUNNING'} ({s.daemon_detail})",
        f"inbox: {s.inbox_pending} pending"
        + (
            f" (oldest {_span(s.inbox_oldest_pending_seconds)})"
            if s.inbox_oldest_pending_seconds is not None
            else ""
        )
        + f", {s.inbox_failed} failed ({s.inbox_failed_recently} in the last day)",
        f"outbox: {s.outbox_queued} queued"
        + (
            f" (oldest {_span(s.outbox_oldest_queued_seconds)})"
            if s.outbox_oldest_queued_seconds is not None
            else ""
        )
        + f", {s.outbox_failed} failed",
        f"bounced players: {len(s.bounced_players)}"
        + (
            ": " + ", ".join(f"{p['email']} ({p['bounces']})" for p in s.bounced_players[:5])
            if s.bounced_players
            else ""
        ),
        f"stalled games: {len(s.stalled_games)}"
        + (": " + ", ".join(str(g) for g in s.stalled_games[:10]) if s.stalled_games else ""),
        f"games waiting for mail: {len(s.waiting_games)}"
        + (
            ": " + ", ".join(f"{w['game']} ({w['email']})" for w in s.waiting_games[:10])
            if s.waiting_games
            else ""
        ),
    ]
    if not s.transports:
        lines.append("transports: no error recorded")
    for t in s.transports:
        state = "FAILING" if t["failing"] else "ok"
        lines.append(
            f"{t['name']} transport: {state}; last error {t['last_error_at']}: {t['last_error']}"
        )
    lines.extend(f"! {problem}" for problem in s.problems)
    return lines
