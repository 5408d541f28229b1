"""A player's clock runs from the delivery of their turn mail, and a game waits for a
seat whose turn mail failed for good. The same holds for the cut phase of a fair game:
its first cut requests are queued with ``starts_clock`` (`pbem.service.ops.cutting`), the
cut clocks run from their delivery, and a seat whose cut request failed for good makes
the game wait.

A turn mail to a player to move is queued with ``starts_clock`` (the move's
transaction, `pbem.service.send.answers`). The game's clocks (``next_reminder_at``,
``deadline_at``) are first set from the move, and ``clock_from`` says from when they run.
When that mail is delivered (accepted by the relay) later than ``clock_from``, the clocks
move by the delivery delay (`start_clock`); while it is not delivered, the timers move
them along (`postpone_clocks`), so no reminder or timeout falls due for a turn its player
was never told of.

A turn mail that fails for good (a permanent refusal, ``outbox_max_age`` of temporary
failures, or a bounce of a mail the relay had taken: `fail_bounced`) marks its seat
(`hold_for_mail`): the game then waits, its clocks stopped, and the timers tell the
other players once. The first mail to that seat delivered afterwards (``pbem outbox
retry`` after the address was fixed, or the answer to a mail of the player's) clears the
mark (`clear_failed`), the clocks run from that delivery, and the timers tell the
others that the game goes on.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, bindparam, select, update
from sqlmodel import Session, col
from sqlmodel import select as select_rows

from pbem.store.models import Game, GameStatus, Outbox, OutboxStatus, Player, Seat

# A delivery this soon after its mail was queued leaves the clocks as they are (a delay
# of seconds against clocks of hours and days): the usual case costs no write.
CLOCK_SLACK = timedelta(minutes=1)

_GAME = Game.__table__  # type: ignore[attr-defined]
_SEAT = Seat.__table__  # type: ignore[attr-defined]
_PLAYER = Player.__table__  # type: ignore[attr-defined]
_OUTBOX = Outbox.__table__  # type: ignore[attr-defined]

# The games whose clocks a delivery starts: in play, or waiting for their cuts.
_CLOCKED = (GameStatus.ACTIVE.value, GameStatus.CUTTING.value)


def _shifted(
    reminder: datetime | None, deadline: datetime | None, start: datetime, now: datetime
) -> dict[str, Any]:
    """The clock columns moved by ``now - start``, running from ``now``."""
    delay = now - start
    values: dict[str, Any] = {"clock_from": now}
    if reminder is not None:
        values["next_reminder_at"] = reminder + delay
    if deadline is not None:
        values["deadline_at"] = deadline + delay
    return values


def start_clock(connection: Connection, game_id: int, queued_at: datetime, now: datetime) -> bool:
    """A turn mail (or cut request) queued at ``queued_at`` for a player to move (to
    cut) in game ``game_id`` was delivered at ``now``: the game's clocks now run from
    ``now`` (moved by the delay) unless they already run from later (the player is
    away), the mail is an older move's, or the game is neither active nor cutting.
    Whether the clocks moved."""
    row = connection.execute(
        select(
            _GAME.c.status,
            _GAME.c.last_move_at,
            _GAME.c.clock_from,
            _GAME.c.next_reminder_at,
            _GAME.c.deadline_at,
        ).where(_GAME.c.id == game_id)
    ).first()
    if row is None or row.status not in _CLOCKED or queued_at < row.last_move_at:
        return False
    start = row.clock_from or row.last_move_at
    if now <= start:
        return False
    values = _shifted(row.next_reminder_at, row.deadline_at, start, now)
    connection.execute(update(_GAME).where(_GAME.c.id == game_id).values(**values))
    return True


def postpone_clocks(session: Session, game: Game, now: datetime) -> None:
    """The turn mail of a player to move in ``game`` is not delivered yet (or failed for
    good): its clocks run from ``now`` at the earliest (moved by the time waited)."""
    start = game.clock_from or game.last_move_at
    if now <= start:
        return
    for name, value in _shifted(game.next_reminder_at, game.deadline_at, start, now).items():
        setattr(game, name, value)
    session.add(game)


def waiting_mail(
    session: Session,
    game: Game,
    seats: Iterable[Seat],
    recipients: Collection[str] | None = None,
) -> bool:
    """Whether ``game`` waits for mail to one of ``seats`` (the players to move, or to
    cut): a seat whose turn mail failed for good, or a turn mail (cut request) of the
    current move not delivered — to one of ``recipients`` if given (the players who have
    not cut: a cut request to one who cut already holds nothing)."""
    if any(seat.mail_failed_at is not None for seat in seats):
        return True
    assert game.id is not None
    if recipients is not None and not recipients:
        return False
    where = [
        col(Outbox.game_id) == game.id,
        col(Outbox.starts_clock).is_(True),
        col(Outbox.created_at) >= game.last_move_at,
        col(Outbox.status).in_(
            [OutboxStatus.PENDING.value, OutboxStatus.SENDING.value, OutboxStatus.FAILED.value]
        ),
    ]
    if recipients is not None:
        where.append(col(Outbox.recipient).in_(sorted(recipients)))
    pending = session.exec(select_rows(Outbox.id).where(*where).limit(1)).first()
    return pending is not None


def _seat_of(game_id: int, recipient: str) -> Any:
    return (
        select(_SEAT.c.id)
        .join(_PLAYER, _PLAYER.c.id == _SEAT.c.player_id)
        .where(_SEAT.c.game_id == game_id, _PLAYER.c.email == recipient.strip().lower())
        .scalar_subquery()
    )


def hold_for_mail(session: Session, row: Outbox, now: datetime) -> bool:
    """``row`` failed for good: if it is a turn mail to a player to move, of the game's
    latest move, their seat is marked (the game waits for it; the timers tell the
    others). Whether it was."""
    if not row.starts_clock or row.game_id is None:
        return False
    last_move = (
        session.connection()
        .execute(select(_GAME.c.last_move_at).where(_GAME.c.id == row.game_id))
        .scalar()
    )
    if last_move is None or row.created_at < last_move:
        return False  # an older move's mail: the game went on without it
    result = session.connection().execute(
        update(_SEAT)
        .where(_SEAT.c.id == _seat_of(row.game_id, row.recipient), _SEAT.c.mail_failed_at.is_(None))
        .values(mail_failed_at=now, mail_failed_told=None)
    )
    return bool(result.rowcount)


def failed_seats(connection: Connection, game_ids: Sequence[int]) -> set[tuple[int, str]]:
    """(game id, player address) of the seats of these games whose mail failed for good."""
    if not game_ids:
        return set()
    rows = connection.execute(_FAILED_SEATS, {"ids": sorted(set(game_ids))})
    return {(int(game_id), str(address).lower()) for game_id, address in rows}


_FAILED_SEATS = (
    select(_SEAT.c.game_id, _PLAYER.c.email)
    .join(_PLAYER, _PLAYER.c.id == _SEAT.c.player_id)
    .where(
        _SEAT.c.game_id.in_(bindparam("ids", expanding=True)),
        _SEAT.c.mail_failed_at.is_not(None),
    )
)


def clear_failed(connection: Connection, game_id: int, recipient: str) -> None:
    """A mail to the player ``recipient`` of game ``game_id`` was delivered: their seat's
    mail gets through again (if the others were told it did not, the timers tell them
    that it does)."""
    connection.execute(
        update(_SEAT)
        .where(_SEAT.c.id == _seat_of(game_id, recipient))
        .values(mail_failed_at=None)  # (told stays: the timers tell the others)
    )


def fail_bounced(
    session: Session, message_ids: Sequence[str], recipient: str, reason: str, now: datetime
) -> int:
    """A bounce says our turn mail(s) ``message_ids`` to ``recipient`` never arrived,
    though the relay took them: each is 'failed' (``pbem outbox retry`` sends it again)
    and its seat held (`hold_for_mail`). Returns how many turn mails were failed."""
    if not message_ids:
        return 0
    ids = sorted({f"<{i.strip().strip('<>')}>" for i in message_ids} | set(message_ids))
    rows = list(
        session.exec(
            select_rows(Outbox).where(
                col(Outbox.message_id).in_(ids),
                col(Outbox.recipient) == recipient.strip().lower(),
                col(Outbox.starts_clock).is_(True),
                col(Outbox.status) == OutboxStatus.SENT.value,
            )
        )
    )
    for row in rows:
        row.status = OutboxStatus.FAILED.value
        row.last_error = f"bounced: {reason}"[:2000]
        row.next_attempt_at = now
        session.add(row)
        session.flush()
        hold_for_mail(session, row, now)
    return len(rows)
