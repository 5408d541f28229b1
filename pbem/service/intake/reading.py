"""reading: what intake reads of a stored message before its rules decide.

The mail itself (`read_mail`: read once; in a batch, read ahead with the games its reply
tokens name, in one query: `prefetch`), the sender's count for the hourly cap
(`recent_counts`, `sent_this_hour`), the seat a reply token names (`authenticate`), the
commands of the mail (`read_commands`), the headers of a raw message read cheaply
(`peek_headers`), and the bounces counted on the players they name (`record_bounces`).
Nothing here answers a mail.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlmodel import Session

from pbem.mail.autoreply import BounceInfo
from pbem.mail.reading import IncomingMail, read_message, stored_headers
from pbem.mail.tokens import find_tokens
from pbem.service.context import Context, Seated, Table
from pbem.store import models as m
from pbem.store._sql import is_postgresql
from pbem.store.delivery import fail_bounced
from pbem.store.games import table_by_token, tables_by_tokens
from pbem.store.inbound import count_recent_from, count_recent_many
from pbem.store.outbox import sent_recipients
from pbem.store.players import record_bounce


def _read_now(ctx: Context, row: m.Inbound) -> IncomingMail:
    assert row.id is not None
    mail = ctx.read_ahead.take(row.id) if ctx.read_ahead is not None else None
    if mail is not None:
        return mail
    return read_message(
        row.raw, our_addresses={ctx.settings.address}, loop_value=ctx.settings.loop_value
    )


def read_mail(ctx: Context, row: m.Inbound) -> IncomingMail:
    """The mail of ``row``: read ahead by `prefetch` in a batch, or when it was stored
    (`ReadAhead`), or read now."""
    assert row.id is not None
    mail = ctx.mails.pop(row.id, None) if ctx.mails is not None else None
    if mail is None and ctx.read_ahead is not None:
        mail = ctx.read_ahead.take(row.id)
    if mail is None:
        mail = read_message(
            row.raw,
            our_addresses={ctx.settings.address},
            loop_value=ctx.settings.loop_value,
        )
    return mail


def prefetch(ctx: Context, session: Session, rows: Sequence[m.Inbound]) -> None:
    """Read a batch's messages, and the tables their reply tokens name in one query."""
    ctx.mails = {row.id: _read_now(ctx, row) for row in rows if row.id is not None}
    tokens = [
        token
        for mail in ctx.mails.values()
        for token in find_tokens(mail, ctx.settings.local_part, ctx.settings.domain)
    ]
    ctx.tables = tables_by_tokens(session, tokens)


def recent_counts(
    ctx: Context, session: Session, rows: Sequence[m.Inbound]
) -> dict[int, tuple[str, int]]:
    """For each message of a batch: its stored sender and what `sent_this_hour` counts."""
    messages = [(row.id, row.sender) for row in rows if row.id is not None and row.sender]
    since = ctx.clock() - timedelta(hours=1)
    counts = count_recent_many(session, messages, since)
    return {inbound_id: (sender, counts[inbound_id]) for inbound_id, sender in messages}


def sent_this_hour(
    ctx: Context, session: Session, sender: str, inbound_id: int, now: datetime
) -> int:
    """How many mails ``sender`` sent in the hour before this message (in a batch,
    counted for all its messages at once, in the hour before the batch began)."""
    counted = ctx.recent.get(inbound_id) if ctx.recent is not None else None
    if counted is not None and counted[0] == sender:
        return counted[1]
    return count_recent_from(session, sender, now - timedelta(hours=1), before=inbound_id)


def authenticate(ctx: Context, session: Session, mail: IncomingMail) -> Table | None:
    """The game a reply token of the mail names, its seats, and the token's seat."""
    sqlite = ctx.tables is not None and not is_postgresql(session)
    for token in find_tokens(mail, ctx.settings.local_part, ctx.settings.domain):
        found = ctx.tables.get(token) if ctx.tables is not None else None
        if found is None and not sqlite:  # (on SQLite the batch's query knew them all)
            # In a batch, a game another worker holds is not waited for (see
            # Service.process_many).
            found = table_by_token(session, token, wait=ctx.deferred is None)
        if found is not None:
            game_row, seated, seat = found
            return game_row, [Seated(s, p) for s, p in seated], seat
    return None


def record_bounces(
    ctx: Context, session: Session, bounce: BounceInfo, reason: str, now: datetime
) -> str:
    """Count a bounce on each player it names whom mail it answers went to (anyone can
    write a bounce: one naming an address but none of our mail to it counts for
    nothing); a turn mail it answers failed for good (`pbem.store.delivery`). What was
    recorded, for the inbound row's reason."""
    sent = sent_recipients(session, bounce.answered_ids)
    notes = ""
    for address in bounce.recipients:
        if address not in sent:
            notes += f" (not counted on {address}: it answers no mail we sent there)"
            continue
        bounced = record_bounce(session, address, reason, now=now)
        if bounced is not None:
            notes += f" (recorded on player {bounced.email})"
        # A turn mail the relay took but that never arrived failed for good.
        if fail_bounced(session, bounce.answered_ids, address, reason, now):
            notes += f" (the turn mail to {address} failed: its game waits)"
    return notes


def peek_headers(raw: bytes) -> tuple[str | None, str | None, str | None]:
    """Sender, subject and Message-ID from the header section only (cheap; never raises)."""
    from email.parser import BytesHeaderParser
    from email.policy import compat32

    try:
        return stored_headers(BytesHeaderParser(policy=compat32).parsebytes(raw))
    except Exception:
        return None, None, None
