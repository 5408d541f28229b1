"""The commitment log's rows (`engine.commitlog`): one per entry, and its head.

An append costs O(1) whatever the log's length: the head row holds the last entry's
number and hash, and is locked (``SELECT … FOR UPDATE``; on SQLite the write lock) for
the append, so that two workers append one after the other, never from the same head.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session as OrmSession
from sqlmodel import Field, Session, SQLModel
from sqlmodel import select as select_rows

from engine.commitlog import GENESIS, fate_of, make_entry
from pbem.store.types import ID_TYPE, UTCDateTime


class CommitmentEntry(SQLModel, table=True):
    """One entry of the public commitment log (`engine.commitlog`)."""

    __tablename__ = "commitment_log"

    seq: int = Field(primary_key=True, sa_type=ID_TYPE, sa_column_kwargs={"autoincrement": False})
    game: int = Field(index=True, sa_type=ID_TYPE)
    event: str
    commitment: str = Field(index=True)
    fate: str | None = None
    server_seed: str | None = None
    at: datetime = Field(sa_type=UTCDateTime)
    prev: str
    hash: str


class CommitmentHead(SQLModel, table=True):
    """The log's head: its one row (id 1) holds the last entry's number and hash."""

    __tablename__ = "commitment_head"

    id: int = Field(primary_key=True, sa_type=ID_TYPE, sa_column_kwargs={"autoincrement": False})
    seq: int = 0
    hash: str = GENESIS


def append(
    session: Session,
    game: int,
    event: str,
    commitment: str,
    now: datetime,
    *,
    fate: str | None = None,
    server_seed: str | None = None,
) -> dict[str, Any]:
    """Append an entry in the session's transaction, after the head (locked until the
    transaction ends); the entry as `engine.commitlog` writes it."""
    head = _locked_head(session)
    if head is None:  # the log's first entry: make the head, once, whoever races for it
        try:
            with session.begin_nested():
                session.add(CommitmentHead(id=1))
        except IntegrityError:
            pass  # another worker made it first (and committed): lock theirs
        head = _locked_head(session)
        assert head is not None
    entry = make_entry(
        head.seq + 1,
        head.hash,
        game,
        event,
        commitment,
        now.isoformat(),
        fate=fate,
        server_seed=server_seed,
    )
    session.add(
        CommitmentEntry(
            seq=entry["seq"],
            game=game,
            event=event,
            commitment=commitment,
            fate=fate,
            server_seed=server_seed,
            at=now,
            prev=entry["prev"],
            hash=entry["hash"],
        )
    )
    head.seq, head.hash = entry["seq"], entry["hash"]
    session.add(head)
    session.flush()
    return entry


def _locked_head(session: Session) -> CommitmentHead | None:
    """The head row, locked until the transaction ends (``SELECT … FOR UPDATE``: a
    second worker's append waits here for the first one's commit)."""
    query = select_rows(CommitmentHead).where(CommitmentHead.id == 1).with_for_update()
    return session.exec(query).first()


def head_of(connection: Connection | OrmSession) -> tuple[int, str]:
    """The log's head: the number of entries and the last one's hash."""
    table = CommitmentHead.__table__  # type: ignore[attr-defined]
    row = connection.execute(select(table.c.seq, table.c.hash).where(table.c.id == 1)).first()
    return (int(row[0]), str(row[1])) if row is not None else (0, GENESIS)


def entries(connection: Connection | OrmSession) -> list[dict[str, Any]]:
    """Every entry in order, as `engine.commitlog` writes them (``at`` in ISO form)."""
    table = CommitmentEntry.__table__  # type: ignore[attr-defined]
    rows = connection.execute(select(table).order_by(table.c.seq)).mappings().all()
    return [{**dict(row), "at": row["at"].isoformat()} for row in rows]


def _logged(session: Session, game: int, event: str) -> bool:
    table = CommitmentEntry.__table__  # type: ignore[attr-defined]
    found = session.connection().execute(
        select(table.c.seq).where(table.c.game == game, table.c.event == event).limit(1)
    )
    return found.first() is not None


def log_commit(session: Session, game: int, commitment: str, now: datetime) -> None:
    """A fair game was created: its commitment enters the log, before anyone cuts."""
    append(session, game, "commit", commitment, now)


def log_lapse(session: Session, commitment: str, server_seed: str, now: datetime) -> bool:
    """The offer that showed ``commitment`` ended without a game (declined, expired or
    withdrawn): its fate (aborted before the deal) and revealed seed enter the log,
    once, under the offer's own number; nothing for a commitment the log never offered
    (one shown before offers were logged). Whether it was logged now. Found by the
    log's index of commitments, not by reading the log."""
    table = CommitmentEntry.__table__  # type: ignore[attr-defined]
    found = session.connection().execute(
        select(table.c.game, table.c.event).where(table.c.commitment == commitment)
    )
    events = {row[1]: row[0] for row in found}
    if "offer" not in events or "lapse" in events or "commit" in events:
        return False
    append(
        session,
        int(events["offer"]),
        "lapse",
        commitment,
        now,
        fate=fate_of(None, True),
        server_seed=server_seed,
    )
    return True


def log_end(
    session: Session,
    game: int,
    commitment: str | None,
    server_seed: str | None,
    *,
    dealt: bool,
    aborted: bool,
    now: datetime,
) -> None:
    """A fair game ended (played out, or aborted before or after its deal): its fate and
    revealed seed enter the log, once; nothing for a game the log never committed (one
    from before the log, or imported from another service)."""
    if commitment is None or server_seed is None:
        return
    if not _logged(session, game, "commit") or _logged(session, game, "end"):
        return
    fate = fate_of("dealt" if dealt else None, aborted)
    append(session, game, "end", commitment, now, fate=fate, server_seed=server_seed)
