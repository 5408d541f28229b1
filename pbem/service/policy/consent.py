"""consent: may the service mail this address now? (`may_mail`)

Per mailbox: suppressed ones (``never``, ``unsubscribe``: `suppress`, `lift`,
`is_suppressed`) get nothing; an address is mailed when it asked, when it plays a game
it joined or watches one, or — once per quiet period, whoever asks — when it never
confirmed that it reads the service's mail; confirmation requests and invitations are
counted by the day (`Why` says why a mail would go). `reachable` and `may_invite`
answer the lobby before anything is written.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from enum import StrEnum

from sqlmodel import Session

from pbem.mail.address import is_valid_address
from pbem.mail.reading import IncomingMail, reply_subject
from pbem.service.context import Context, Proof
from pbem.service.policy.mailboxes import (
    FORGOTTEN_DOMAIN,
    _find,
    _locked,
    is_service_mailbox,
    mailbox_of,
)
from pbem.store import models as m
from pbem.store._sql import update_row

QUIETEN_VERBS = ("never", "unsubscribe")
"""Words that, from anyone, put their mailbox on the suppression list."""

log = logging.getLogger("pbem.policy")


def first_word(text: str) -> str:
    """The first word of a reply's text, lowercase, without punctuation."""
    for line in text.splitlines():
        words = line.strip().lower().split()
        if words:
            return words[0].strip(".,;:!'\"")
    return ""


def quiet_word(mail: IncomingMail) -> str:
    """The first word of a mail's text, or of its subject when the text has none (a
    ``List-Unsubscribe`` mailto writes only a subject), lowercase — never of one of the
    service's own subjects (`pbem.mail.reading.reply_subject` leaves nothing of them)."""
    return first_word(mail.reply_text or "") or first_word(reply_subject(mail.subject or ""))


def suppress(
    ctx: Context, session: Session, address: str, why: str, now: datetime, *, days: float | None
) -> None:
    """Put ``address``'s mailbox on the suppression list. ``days`` None ("never", a
    non-player's "stop", an invitation's unsubscribe): until it says ``start``, it gets
    no mail but one answer to its own mail per quiet period and what its proven mail
    asks for. ``days`` set (a decline, a lapsed invitation): no invitation for that
    long. A longer suppression already there stays."""
    box = _locked(session, mailbox_of(address))
    until = None if days is None else now + timedelta(days=days)
    if box.suppressed and (
        box.suppressed_until is None or (until is not None and box.suppressed_until >= until)
    ):
        return
    box.suppressed, box.suppressed_at, box.suppressed_until = why, now, until
    session.add(box)
    session.flush()


def lift(ctx: Context, session: Session, address: str) -> bool:
    """Take ``address``'s mailbox off the suppression list; whether it was on it."""
    box = _find(session, mailbox_of(address))
    if box is None or box.suppressed is None:
        return False
    box = _locked(session, box.mailbox)
    box.suppressed = box.suppressed_at = box.suppressed_until = None
    session.add(box)
    session.flush()
    return True


def is_suppressed(session: Session, address: str, now: datetime) -> bool:
    """Whether ``address``'s mailbox is on the suppression list now."""
    box = _find(session, mailbox_of(address))
    if box is None or not box.suppressed:
        return False
    return box.suppressed_until is None or box.suppressed_until > now


class Why(StrEnum):
    """Why the service would mail an address."""

    ANSWER = "answer"
    """An answer to a mail (``inbound_id``); to anyone but its proven writer, a note."""
    GAME = "game"
    """A game's mail to a seated player (``seat``), or a player's digest."""
    WATCH = "watch"
    """A game's board to a confirmed watcher."""
    INVITE = "invite"
    """An invitation to a game."""
    NOTE = "note"
    """A note about something the address took part in (an invitation withdrawn…)."""
    CONFIRM = "confirm"
    """A request to confirm a request made in the address's name."""
    RESUME = "resume"
    """A request to confirm a suppressed mailbox's own ``start`` (mail again)."""


def may_mail(
    ctx: Context,
    session: Session,
    address: str,
    why: Why,
    now: datetime,
    *,
    inbound_id: int | None = None,
    seat: m.Seat | None = None,
) -> bool:
    """Whether the service may mail ``address`` now, for ``why``; a mail it may send is
    counted where it counts (a mailbox's one unasked mail, the day's invitations…), so
    ask only for a mail about to be queued."""
    allowed, reason = _may_mail(ctx, session, address, why, now, inbound_id, seat)
    if not allowed:
        log.debug("not mailed: %s (%s): %s", mailbox_of(address), why.value, reason)
    return allowed


def _may_mail(
    ctx: Context,
    session: Session,
    address: str,
    why: Why,
    now: datetime,
    inbound_id: int | None,
    seat: m.Seat | None,
) -> tuple[bool, str]:
    box_name = mailbox_of(address)
    if is_service_mailbox(ctx, box_name) or not is_valid_address(address):
        return False, "the service's own address, or not an address"
    if box_name.endswith("@" + FORGOTTEN_DOMAIN):
        return False, "a forgotten player's pseudonym"
    asker = ctx.senders.get(inbound_id) if inbound_id is not None else None
    own = asker is not None and asker.mailbox == box_name
    if why == Why.WATCH:
        return True, "a watcher (confirmed)"
    if why == Why.GAME and seat is not None and seat.joined:
        return True, "a joined seat"  # the hot path: no query
    if own and asker is not None and asker.proof >= Proof.TOKEN:
        return True, "an answer to a proven mail"
    if own and asker is not None and asker.proof == Proof.NONE:
        return False, "an answer to an unproven mail"
    box = _locked(session, box_name)
    hard = bool(box.suppressed) and box.suppressed_until is None
    # A mailbox that confirmed, and did not say "never" since, may get more than the one
    # unasked mail.
    trusted = box.confirmed_at is not None and not hard
    _new_day(box, now)
    if why == Why.GAME and seat is not None:
        # A seat its player did not join: the game's first mail, and no other.
        if hard:
            return False, f"suppressed ({box.suppressed})"
        if seat.unjoined_mails > 0:
            return False, "a seat not joined: its first mail went already"
        if not trusted and not _unasked(ctx, box, now):
            return False, "its one unasked mail went already"
        update_row(session, seat, unjoined_mails=seat.unjoined_mails + 1)
        session.add(box)
        return True, "the first mail of a seat not joined"
    if why in (Why.CONFIRM, Why.RESUME):
        if hard and not (why == Why.RESUME and own and _unasked(ctx, box, now, take=False)):
            # A suppressed mailbox's own "start" may be answered once per quiet period
            # (a forger's "start" earns it no more); nothing else reaches it.
            return False, f"suppressed ({box.suppressed})"
        if not _answers_left(ctx, box):
            return False, "as many answers to unproven mail today as one mailbox may get"
        if (hard or not trusted) and not _unasked(ctx, box, now):
            return False, "its one unasked mail went already"
        box.confirmations_today += 1
        box.answers_today += 1
        session.add(box)
        return True, "a confirmation request"
    if own:
        # An answer to a mail proven by its From alone: a few a day, whatever it asks.
        if not _answers_left(ctx, box):
            return False, "as many answers to unproven mail today as one mailbox may get"
        if not trusted and not _unasked(ctx, box, now):
            return False, "an answer to a mailbox that never confirmed: its one went already"
        box.answers_today += 1
        session.add(box)
        return True, "an answer to unproven mail, within the day's few"
    if hard:
        return False, f"suppressed ({box.suppressed})"
    if why == Why.INVITE:
        if box.suppressed_until is not None and box.suppressed_until > now:
            return False, f"quiet ({box.suppressed}) until {box.suppressed_until:%Y-%m-%d}"
        if box.invitations_today >= ctx.settings.max_invitations_per_address_per_day:
            return False, "as many invitations today as one mailbox may get"
        if not trusted and not _unasked(ctx, box, now):
            return False, "its one unasked mail went already"
        box.invitations_today += 1
        session.add(box)
        return True, "an invitation"
    if trusted:
        return True, "a note to a confirmed mailbox"
    allowed = _unasked(ctx, box, now)
    session.add(box)
    return allowed, "a note to a mailbox that never confirmed"


def _unasked(ctx: Context, box: m.Consent, now: datetime, *, take: bool = True) -> bool:
    """Whether a mailbox that never confirmed may get one unasked mail now (none in the
    last ``invitation_quiet_days``); ``take``: count this one."""
    quiet = timedelta(days=ctx.settings.invitation_quiet_days)
    if box.last_unsolicited_at is not None and now - box.last_unsolicited_at < quiet:
        return False
    if take:
        box.last_unsolicited_at = now
    return True


def _answers_left(ctx: Context, box: m.Consent) -> bool:
    """Whether a mailbox may get one more answer today to a mail proven by its From
    alone (``max_unproven_answers_per_day``): a forged From earns its victim a few
    mails a day at most, whatever it writes."""
    return box.answers_today < ctx.settings.max_unproven_answers_per_day


def _new_day(box: m.Consent, now: datetime) -> None:
    day = now.strftime("%Y-%m-%d")
    if box.day != day:
        box.day = day
        box.invitations_today = box.games_today = box.confirmations_today = 0
        box.answers_today = 0


def reachable(ctx: Context, session: Session, address: str, now: datetime) -> bool:
    """Whether a mail that ``address`` did not ask for by a proven mail could reach it
    now (nothing is counted): it never said ``never``, and it confirmed or got no unasked
    mail in the quiet period."""
    box = _find(session, mailbox_of(address))
    if box is None:
        return not is_service_mailbox(ctx, address)
    if box.suppressed and box.suppressed_until is None:
        return False
    return box.confirmed_at is not None or _unasked(ctx, box, now, take=False)


def may_invite(
    ctx: Context, session: Session, challenger: m.Player, address: str, now: datetime
) -> tuple[bool, str]:
    """Whether ``address`` may be invited by ``challenger`` now, and if not why (for the
    inbound row; the challenger is only told it "cannot be invited now"). Nothing is
    counted: `may_mail` counts the invitation when it is queued.

    Not the challenger's own mailbox, not the service's, only the ``lobby_domains`` when
    set; not a blocked player, one whose mail bounces or who said ``stop``; not a
    mailbox that said ``never`` (or declined or let an invitation lapse, for
    ``invitation_quiet_days``); not one invited as often today as one may be; not one
    that never confirmed and got its one unasked mail in the quiet period."""
    from pbem.store.players import get_player_by_email

    box_name = mailbox_of(address)
    if not is_valid_address(address):
        return False, "not a plain address"
    if box_name == mailbox_of(challenger.email):
        return False, "the challenger's own mailbox"
    if is_service_mailbox(ctx, box_name):
        return False, "the service's own address"
    domains = [d.lower() for d in ctx.settings.lobby_domains]
    if domains and box_name.rsplit("@", 1)[-1] not in domains:
        return False, "not one of the lobby_domains"
    for email in {address, box_name}:
        known = get_player_by_email(session, email)
        if known is not None and (known.blocked or known.bounce_count > 0 or known.stopped):
            return False, "blocked, bouncing or stopped"
    # Locked: two workers inviting one mailbox at once decide one after the other, and
    # `may_mail` then counts what this found.
    box = _locked(session, box_name)
    if box.suppressed and (box.suppressed_until is None or box.suppressed_until > now):
        return False, f"suppressed ({box.suppressed})"
    today = box.day == now.strftime("%Y-%m-%d")
    if today and box.invitations_today >= ctx.settings.max_invitations_per_address_per_day:
        return False, "invited as often today as one mailbox may be"
    if box.confirmed_at is None and not _unasked(ctx, box, now, take=False):
        return False, "never confirmed, and mailed unasked in the quiet period"
    return True, ""


def describe(ctx: Context, session: Session, address: str, now: datetime) -> list[tuple[str, str]]:
    """What the policy holds about ``address``'s mailbox, as (what, state and why) lines
    for the admin (``pbem player show``); nothing is counted or changed."""
    box_name = mailbox_of(address)
    lines = [("mailbox", box_name)]
    if is_service_mailbox(ctx, box_name):
        return [*lines, ("mail", "never: one of the service's own addresses")]
    box = _find(session, box_name)
    if box is None:
        return [
            *lines,
            ("confirmed", "no: it never answered the service's mail"),
            ("suppressed", "no"),
            ("mail", "one unasked mail per quiet period, and answers to its own mail"),
        ]
    if box.confirmed_at is None:
        confirmed = "no: it never answered the service's mail with a token"
    else:
        confirmed = f"yes, {box.confirmed_at:%Y-%m-%d %H:%M} UTC"
    if not box.suppressed:
        suppressed = "no"
    elif box.suppressed_until is None:
        since = f"{box.suppressed_at:%Y-%m-%d %H:%M} UTC" if box.suppressed_at else "?"
        suppressed = f"yes ({box.suppressed}, since {since}), until it says start"
    elif box.suppressed_until > now:
        suppressed = f"quiet ({box.suppressed}) until {box.suppressed_until:%Y-%m-%d %H:%M} UTC"
    else:
        suppressed = f"no (a quiet period for {box.suppressed} ended)"
    today = box.day == now.strftime("%Y-%m-%d")
    limit = ctx.settings.max_unproven_answers_per_day
    counts = (
        f"{box.answers_today if today else 0} of {limit} answers to unproven mail, "
        f"{box.invitations_today if today else 0} invitations, "
        f"{box.games_today if today else 0} games started in its name"
    )
    unasked = (
        f"{box.last_unsolicited_at:%Y-%m-%d %H:%M} UTC" if box.last_unsolicited_at else "never"
    )
    hard = bool(box.suppressed) and box.suppressed_until is None
    if hard:
        mail = "nothing it did not ask for by a proven mail (pbem player unsuppress lifts it)"
    elif box.confirmed_at is not None:
        mail = "its games, watched games, invitations and answers"
    else:
        mail = "one unasked mail per quiet period, and answers to its own mail"
    return [
        *lines,
        ("confirmed", confirmed),
        ("suppressed", suppressed),
        ("today", counts),
        ("last unasked mail", unasked),
        ("mail", mail),
    ]
