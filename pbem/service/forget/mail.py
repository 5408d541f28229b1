"""The stored mail of one player, found and scrubbed without reading anyone else's.

`gather` reads what names the player: their rows of ``player`` and ``seat``, and the
stored mails that may name them — those the index of stored mail lists under their
mailbox (`pbem.store.named`: every address a mail names, written when it was stored) and
those of their games (a game's mail names its players by their display names). Only
those rows are read; `scrub_mail` rewrites them (their raw bytes through
`pbem.store.rawmail`) a batch at a time, each batch a short transaction of its own, so a
daemon's moves go on in between.
"""

from __future__ import annotations

import email
import email.policy
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from email.utils import getaddresses

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from pbem.mail.scrub import Traces, scrub_message
from pbem.service.policy import FORGOTTEN_DOMAIN, mailbox_of
from pbem.store import models as m
from pbem.store.db import session_scope
from pbem.store.named import mail_naming
from pbem.store.rawmail import replace_inbound, replace_outbox

KEEP_HEADERS = (
    "From",
    "To",
    "Cc",
    "Subject",
    "Date",
    "Message-ID",
    "In-Reply-To",
    "References",
    "MIME-Version",
    "Content-Type",
    "Content-Transfer-Encoding",
    "Content-Disposition",
)
"""The headers a forgotten player's own stored mail keeps."""

BATCH = 100
"""Stored mails rewritten in one transaction."""


@dataclass
class Found:
    """What names the player: their rows, their games, the stored mails that may name
    them (by id), their own mails among those, their names and their Message-IDs."""

    box: str
    players: list[m.Player] = field(default_factory=list)
    seats: list[m.Seat] = field(default_factory=list)
    games: set[int] = field(default_factory=set)
    inbound: set[int] = field(default_factory=set)
    outbox: set[int] = field(default_factory=set)
    mine: set[int] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    message_ids: dict[str, str] = field(default_factory=dict)  # bare id → its pseudonym
    read: dict[str, int] = field(default_factory=dict)  # rows read, per table

    @property
    def addresses(self) -> set[str]:
        return {self.box, *(p.email for p in self.players)}

    def count_read(self, table: str, n: int) -> None:
        self.read[table] = self.read.get(table, 0) + n


def players_of(session: Session, box: str) -> list[m.Player]:
    """The players whose address reaches mailbox ``box`` (any ``+tag`` of it)."""
    domain = box.rpartition("@")[2]
    rows = session.exec(select(m.Player).where(col(m.Player.email).endswith("@" + domain))).all()
    return [p for p in rows if mailbox_of(p.email) == box]


def seats_of(session: Session, players: Sequence[m.Player]) -> list[m.Seat]:
    ids = [p.id for p in players]
    return list(session.exec(select(m.Seat).where(col(m.Seat.player_id).in_(ids))).all())


def chunks(ids: Iterable[int], size: int = BATCH) -> Iterator[list[int]]:
    ordered = sorted(ids)
    for start in range(0, len(ordered), size):
        yield ordered[start : start + size]


def gather(session: Session, box: str) -> Found:
    """Read what names the player of mailbox ``box`` (see the module's docstring)."""
    found = Found(box)
    found.players = players_of(session, box)
    found.seats = seats_of(session, found.players)
    found.games = {s.game_id for s in found.seats}
    found.names = {p.display_name for p in found.players if p.display_name}
    found.inbound, found.outbox = mail_naming(session.connection(), found.addresses)
    if found.games:
        games = sorted(found.games)
        found.inbound.update(
            i
            for i in session.exec(select(m.Inbound.id).where(col(m.Inbound.game_id).in_(games)))
            if i is not None
        )
        found.outbox.update(
            i
            for i in session.exec(select(m.Outbox.id).where(col(m.Outbox.game_id).in_(games)))
            if i is not None
        )
    for part in chunks(found.inbound, 500):
        rows = session.exec(
            select(m.Inbound.id, m.Inbound.sender).where(col(m.Inbound.id).in_(part))
        ).all()
        found.mine.update(i for i, s in rows if i is not None and s and mailbox_of(s) == box)
    return found


def their_words(session: Session, found: Found, tag: str) -> None:
    """The display names the player wrote in their own mails' From, and each of their
    mails' Message-ID with the pseudonym that replaces it (a pruned mail keeps its
    Message-ID in its key, and no From to read)."""
    for part in chunks(found.mine):
        rows = session.exec(select(m.Inbound).where(col(m.Inbound.id).in_(part))).all()
        found.count_read("inbound", len(rows))
        for row in rows:
            head = email.message_from_bytes(row.raw, policy=email.policy.compat32)
            for name, _ in getaddresses([str(v) for v in head.get_all("From", [])]):
                if name.strip():
                    found.names.add(name.strip())
            for key in (str(head.get("Message-ID", "")), row.message_key):
                bare = key.strip().strip("<>").strip()
                if bare and not bare.startswith("sha256:"):
                    found.message_ids[bare] = f"forgotten-{tag}-{row.id}@{FORGOTTEN_DOMAIN}"
        session.expunge_all()


def scrub_mail(
    db: Engine, found: Found, traces: Traces, pseudonym: str, tag: str
) -> tuple[dict[str, int], set[int]]:
    """Rewrite the stored mails ``found`` lists, ``BATCH`` to a transaction: the player's
    own keep only `KEEP_HEADERS` and the pseudonym as sender; every one is scrubbed of
    ``traces``; outgoing mail to the player not sent yet is cancelled. The rows rewritten
    per table, and the games of the mails read."""
    rewritten: dict[str, int] = {}
    games: set[int] = set()
    for part in chunks(found.inbound):
        with session_scope(db) as session:
            rows = session.exec(select(m.Inbound).where(col(m.Inbound.id).in_(part))).all()
            found.count_read("inbound", len(rows))
            for row in rows:
                if row.game_id is not None:
                    games.add(row.game_id)
                assert row.id is not None
                before = (row.sender, row.subject, row.reason, row.message_key)
                raw = row.raw
                if row.id in found.mine:
                    if raw:
                        raw = scrub_message(raw, traces, keep_headers=KEEP_HEADERS)
                    row.sender = pseudonym
                    row.message_key = f"<forgotten-{tag}-{row.id}@{FORGOTTEN_DOMAIN}>"
                elif raw:
                    raw = scrub_message(raw, traces)
                row.subject = _text(traces, row.subject)
                row.reason = _text(traces, row.reason)
                changed = (row.sender, row.subject, row.reason, row.message_key) != before
                if raw != row.raw:
                    replace_inbound(session.connection(), row.id, raw)
                if changed or raw != row.raw:
                    session.add(row)
                    rewritten["inbound"] = rewritten.get("inbound", 0) + 1
    for part in chunks(found.outbox):
        with session_scope(db) as session:
            outs = session.exec(select(m.Outbox).where(col(m.Outbox.id).in_(part))).all()
            found.count_read("outbox", len(outs))
            for out in outs:
                if out.game_id is not None:
                    games.add(out.game_id)
                assert out.id is not None
                before_out = (out.recipient, out.last_error, out.status)
                if mailbox_of(out.recipient) == found.box:
                    out.recipient = pseudonym
                    if out.status != m.OutboxStatus.SENT.value:
                        out.status = m.OutboxStatus.CANCELLED.value
                raw = scrub_message(out.raw, traces) if out.raw else out.raw
                out.last_error = _text(traces, out.last_error)
                if raw != out.raw:
                    replace_outbox(session.connection(), out.id, raw)
                if (out.recipient, out.last_error, out.status) != before_out or raw != out.raw:
                    session.add(out)
                    rewritten["outbox"] = rewritten.get("outbox", 0) + 1
    return rewritten, games


def _text(traces: Traces, value: str | None) -> str | None:
    return traces.text(value) if value else value
