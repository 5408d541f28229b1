"""The transports' last errors (``transport_state``), for ``pbem status``."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from pbem.store.models import TransportState

INBOX = "inbox"
OUTBOX = "outbox"


def record_transport_error(db: Engine, name: str, error: str, *, now: datetime) -> None:
    """Remember ``error`` as transport ``name``'s last error, in a transaction of its own."""
    _write(db, name, {"last_error": error[:2000], "last_error_at": now})


def record_transport_ok(db: Engine, name: str, *, now: datetime) -> None:
    """Remember that transport ``name`` worked at ``now`` (after an error)."""
    _write(db, name, {"last_ok_at": now})


def _write(db: Engine, name: str, values: dict[str, object]) -> None:
    statement = update(TransportState).where(col(TransportState.name) == name).values(**values)
    for _ in range(2):
        with Session(db) as session:
            if session.exec(statement).rowcount:
                session.commit()
                return
            session.add(TransportState(name=name, **values))  # type: ignore[arg-type]
            try:
                session.commit()
                return
            except IntegrityError:  # another worker inserted it first: update it
                session.rollback()


def transport_states(session: Session) -> list[TransportState]:
    return list(session.exec(select(TransportState).order_by(col(TransportState.name))))


def failing(state: TransportState) -> bool:
    """Whether the transport of ``state`` is failing: its last error came after its last
    success (or it never worked since its first error)."""
    if state.last_error_at is None:
        return False
    return state.last_ok_at is None or state.last_ok_at < state.last_error_at
