"""Shared tools of the red-team suite: counting the mail that reaches one mailbox (all its
spellings), writing forged mail, and driving the service over 30 days of its test clock
with the timers running.

A *mailbox* is what `pbem.service.policy.mailbox_of` makes of an address: lowercase and
without a ``+tag``, so ``V+3@Victim.TEST`` and ``v@victim.test`` are one mailbox and the
counts here add up every row of the outbox that reaches it.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any

from sqlmodel import Session, col, func, select

from pbem.service import Service
from pbem.service.policy import mailbox_of
from pbem.store import models as m
from tests.e2e.helpers import DOMAIN, SERVICE_ADDRESS, Harness, parse, plain_mail

VICTIM = "v@victim.test"
"""The mailbox the attacks aim at (a stranger to the service, unless a test seats it)."""

BUDGETS = (10, 100, 1000)
"""The attacker's budgets: how many mails they send over the 30 days."""

DAYS = 30
"""How long each attack runs on the test clock."""

TRUSTED = "mx.pbem.test"
"""The authserv-id of the provider the forged-sender tests trust."""

TIMERS: dict[str, Any] = {
    "reminder_hours": 24,
    "timeout_days": 3,
    "invitation_days": 7,
    "render_processes": 0,
}
"""Settings under which the timers really act over 30 days: reminders every day, the
timeout rule after three, invitations lapsing after a week. (No helper process renders
mail: the suite shares two cores, and where a mail is decided does not change.)"""


# -- counting ----------------------------------------------------------------------------


def rows_to(h: Harness, address: str) -> list[m.Outbox]:
    """Every outbox row (queued, sent or failed) whose recipient is ``address``'s mailbox,
    whatever its spelling."""
    box = mailbox_of(address)
    return [row for row in h.outbox() if mailbox_of(row.recipient) == box]


def mails_to(h: Harness, address: str) -> int:
    """How many mails the service wrote to ``address``'s mailbox."""
    return len(rows_to(h, address))


def kinds_to(h: Harness, address: str) -> list[str]:
    """The kinds of the mails to ``address``'s mailbox, oldest first (for messages)."""
    return [row.kind for row in rows_to(h, address)]


def latest_to(h: Harness, address: str) -> EmailMessage:
    """The newest mail the service wrote to exactly ``address`` (cheaper than reading
    back every mail of its Maildir)."""
    with Session(h.db) as session:
        row = session.exec(
            select(m.Outbox).where(m.Outbox.recipient == address).order_by(col(m.Outbox.id).desc())
        ).first()
        assert row is not None, f"nothing was written to {address}"
        return parse(row.raw)


def confirm_latest(h: Harness, address: str, answer: str = "yes") -> None:
    """Answer the newest confirmation request to ``address`` as its owner does (one
    click: a reply to its token), and check the answer was taken."""
    row = h.confirm(address, answer)
    assert row.status == "applied", row.reason


def per_day(rows: Iterable[m.Outbox], kind: str | None = None) -> Counter[str]:
    """How many of ``rows`` (of ``kind`` when given) were queued on each UTC day."""
    return Counter(f"{row.created_at:%Y-%m-%d}" for row in rows if kind is None or row.kind == kind)


def is_service_address(address: str) -> bool:
    """Whether ``address`` is one of the service's own mailboxes (its address with any
    tag, in any case) or one of its computer seats."""
    local, _, domain = mailbox_of(address).rpartition("@")
    own = SERVICE_ADDRESS.split("@", 1)[0]
    return domain == DOMAIN and (local == own or re.fullmatch(r"computer\d*", local) is not None)


def reasons(h: Harness, after: int = 0) -> Counter[str]:
    """The inbound rows' ``status: reason`` (after the row id ``after``), counted: what
    the service did with the attacker's mail."""
    return Counter(f"{row.status}: {row.reason}" for row in h.inbound() if (row.id or 0) > after)


def reasons_from(h: Harness, address: str, after: int = 0) -> Counter[str]:
    """Like `reasons`, for the mail whose From is ``address``'s mailbox."""
    box = mailbox_of(address)
    return Counter(
        f"{row.status}: {row.reason}"
        for row in h.inbound()
        if (row.id or 0) > after and row.sender and mailbox_of(row.sender) == box
    )


def last_inbound_id(h: Harness) -> int:
    """The id of the newest inbound row (0: none): what came after it is the attack's."""
    rows = h.inbound()
    return (rows[-1].id or 0) if rows else 0


def count_rows(h: Harness, table: Any, *where: Any) -> int:
    """How many rows of ``table`` match ``where``."""
    with Session(h.db) as session:
        return session.exec(select(func.count()).select_from(table).where(*where)).one()


def invitations(h: Harness) -> list[m.Invitation]:
    """Every invitation ever made, oldest first."""
    with Session(h.db) as session:
        rows = list(session.exec(select(m.Invitation).order_by(col(m.Invitation.id))).all())
        for row in rows:
            session.expunge(row)
        return rows


def games_of_mailbox(h: Harness, address: str) -> list[m.Game]:
    """The games with a seat whose player's address is ``address``'s mailbox."""
    box = mailbox_of(address)
    with Session(h.db) as session:
        rows = session.exec(
            select(m.Game, m.Player.email)
            .join(m.Seat, col(m.Seat.game_id) == col(m.Game.id))
            .join(m.Player, col(m.Player.id) == col(m.Seat.player_id))
            .order_by(col(m.Game.id))
        ).all()
        found = {game.id: game for game, email in rows if mailbox_of(email) == box}
        for game in found.values():
            session.expunge(game)
        return list(found.values())


def snapshot(h: Harness) -> dict[str, Any]:
    """What a forged mail could change: the players' settings, the games, their seats,
    moves and talk, invitations, watchers, confirmation requests, consent, matches, and
    how many mails were written."""
    with Session(h.db) as session:
        players = sorted(
            (
                p.email,
                p.display_name,
                p.mail_all,
                p.mail_parts,
                p.mail_replay,
                p.stopped,
                p.away_until,
                p.digest,
                p.blocked,
            )
            for p in session.exec(select(m.Player)).all()
        )
        games = sorted(
            (g.id or 0, g.status, g.action_count, g.observers, g.hints, g.state_hash)
            for g in session.exec(select(m.Game)).all()
        )
        seats = sorted(
            (s.id or 0, s.joined, s.allows_observers, s.hints_agreed, s.away_days)
            for s in session.exec(select(m.Seat)).all()
        )
        invitations = sorted(
            (i.id or 0, i.invitee, i.status) for i in session.exec(select(m.Invitation)).all()
        )
        watchers = sorted((w.game_id, w.player_id) for w in session.exec(select(m.Watcher)).all())
        confirmations = sorted(
            (c.id or 0, c.mailbox, c.action, c.status)
            for c in session.exec(select(m.Confirmation)).all()
        )
        consent = sorted(
            (c.mailbox, c.confirmed_at, c.suppressed, c.suppressed_until, c.last_unsolicited_at)
            for c in session.exec(select(m.Consent)).all()
        )
        counts = {
            table.__name__: session.exec(select(func.count()).select_from(table)).one()
            for table in (m.ActionLog, m.Talk, m.Match, m.Outbox)
        }
    return {
        "players": players,
        "games": games,
        "seats": seats,
        "invitations": invitations,
        "watchers": watchers,
        "confirmations": confirmations,
        "consent": consent,
        **counts,
    }


# -- forging -----------------------------------------------------------------------------

_serial = itertools.count(1)


def forged(
    sender: str,
    body: str,
    *,
    to: str = SERVICE_ADDRESS,
    subject: str = "cribbage",
    auth: Sequence[str] = (),
) -> bytes:
    """A fresh mail claiming to be from ``sender`` (anyone can write any From), with a
    Message-ID of its own; ``auth``: Authentication-Results values put at the very top of
    the header, topmost first (as providers prepend theirs)."""
    raw = plain_mail(
        sender,
        to,
        body,
        subject=subject,
        message_id=make_msgid(f"abuse{next(_serial)}", domain="attacker.test"),
    )
    return with_auth(raw, *auth)


def with_auth(raw: bytes, *values: str) -> bytes:
    """``raw`` with ``Authentication-Results`` headers prepended, topmost first."""
    head = b"".join(f"Authentication-Results: {value}\r\n".encode() for value in values)
    return head + raw


def passing(domain: str) -> str:
    """The trusted provider's verdict that the From's domain passed DMARC."""
    return f"{TRUSTED}; dmarc=pass header.from={domain}"


FORGERIES: dict[str, tuple[str, ...]] = {
    # No verdict of the trusted server at all.
    "no-header": (),
    # The trusted server says DMARC failed.
    "dmarc-fail": (f"{TRUSTED}; dmarc=fail header.from=example.com",),
    # The trusted server's own (topmost) header cannot be read — too long to be real —
    # and a forged pass with the same authserv-id sits below it.
    "long-top": (
        f"{TRUSTED}; dmarc=pass header.from=example.com (" + "x" * 8100 + ")",
        passing("example.com"),
    ),
    # The topmost header carries garbage after the authserv-id; a forged pass below.
    "garbage-top": (
        f"{TRUSTED} )( garbage; dmarc=pass header.from=example.com",
        passing("example.com"),
    ),
}
"""Authentication-Results that do not vouch for the From, whatever sits below them."""


def spellings(address: str) -> Callable[[int], str]:
    """The ``n``-th spelling of ``address``'s mailbox: +tags, upper and mixed case."""
    local, _, domain = address.partition("@")

    def spell(n: int) -> str:
        match n % 5:
            case 0:
                return address
            case 1:
                return f"{local}+{n}@{domain.upper()}"
            case 2:
                return f"{local.upper()}@{domain}"
            case 3:
                return f"{local.title()}+Tag{n}@{domain.title()}"
            case _:
                return f"{local}+x{n}@{domain}"

    return spell


# -- batches and workers ------------------------------------------------------------------


def one_batch(h: Harness, mails: Sequence[bytes]) -> None:
    """Store ``mails`` and process them all as ONE batch (one transaction, its writes
    held back until the commit), as a daemon does with what it fetched at once."""
    received = h.service.receive_many([(raw, False) for raw in mails], "abuse")
    h.service.process_many([inbound_id for inbound_id, _ in received])
    assert not h.service.pending_ids(1)


CHUNK = 10
"""How many messages a worker takes to a transaction (the daemon's ``PROCESS_CHUNK``)."""


def two_workers(h: Harness, mails: Sequence[bytes]) -> None:
    """Store ``mails`` and let two workers (two services on the one database, each in its
    own thread) process them at once, taking turns through the batch: one the even
    messages, the other the odd, ten to a transaction as the daemon does."""
    received = h.service.receive_many([(raw, False) for raw in mails], "abuse")
    ids = [inbound_id for inbound_id, _ in received]
    workers = [Service(h.settings, h.db, clock=h.clock) for _ in range(2)]
    start = threading.Barrier(len(workers))
    errors: list[BaseException] = []

    def run(service: Service, share: list[int]) -> None:
        try:
            start.wait()
            for at in range(0, len(share), CHUNK):
                service.process_many(share[at : at + CHUNK])
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=run, args=(worker, ids[n :: len(workers)]))
        for n, worker in enumerate(workers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    # What one worker left for another (a game it held) is taken up afterwards.
    while pending := h.service.pending_ids():
        h.service.process_many(pending)


# -- the 30 days -------------------------------------------------------------------------


def drain(h: Harness, *, limit: int = 100) -> None:
    """Daemon steps until no stored message waits (each step takes a batch of up to a
    hundred, sends its mail and runs the timers)."""
    for _ in range(limit):
        h.step()
        if not h.service.pending_ids(1):
            return
    raise AssertionError("messages still pending after many steps")


@dataclass
class Campaign:
    """An attacker's ``budget`` mails spread over `DAYS` days of the test clock: each
    day's share is dropped into the inbox at once and taken in a few daemon steps (a
    batch each), then the clock moves a day on; every step runs the timers (reminders,
    timeouts, cut deadlines, expiry). The last step is within 30 days of the first, so
    a mailbox's one unasked mail in ``invitation_quiet_days`` (30) may not come twice.

    ``mail(i)`` writes the attacker's ``i``-th mail; ``each_day(day)``, when given, runs
    after that day's mail is processed (a player who answers, a count taken...)."""

    h: Harness
    budget: int
    mail: Callable[[int], bytes]
    each_day: Callable[[int], None] | None = None
    days: int = DAYS
    sent: int = field(default=0, init=False)

    def run(self) -> None:
        for day in range(self.days):
            upto = (self.budget * (day + 1)) // self.days
            for i in range(self.sent, upto):
                self.h.send(self.mail(i))
            self.sent = upto
            drain(self.h)
            if self.each_day is not None:
                self.each_day(day)
            if day < self.days - 1:
                self.h.clock.advance(timedelta(days=1))
        assert self.sent == self.budget
