"""policy: who may make the service act, and whom the service may mail.

Anyone on the internet can write to the service, and anyone can write any From. Every
path that acts on a mail or sends one asks this module, and nothing else decides:

1. **Is this sender proven enough for what they ask?** (`decide`). Intake finds how well
   a mail shows its writer (`prove`: a `Sender` with a `Proof`): a reply token mailed to
   that very mailbox and sent back from it (``TOKEN``), or the From alone (``FROM``).
   When the operator names a trusted server (``trusted_authserv_id``), its verdict counts
   for every mail: a pass is as good as a token, anything else (no verdict, a failed
   one, a header that cannot be read) is ``NONE`` and the mail is refused whatever it
   asks, with no reply. `RULES` says the least proof of each action; a weaker one is
   refused, or — for a request that mails someone — answered with one confirmation
   request (`pbem.service.handle.confirmations`), and done once the sender answers it.
   Before all that, `takes_mail_for` says which envelope recipients are the service's to
   take at all (its own address, with any ``+tag``): the LMTP listener refuses the
   others (550), as the mail server refuses an unknown mailbox.
2. **May the service mail this address now?** (`may_mail`). Consent is per *mailbox*:
   the address lowercased, without a ``+tag`` (`mailbox_of`); the service's own
   addresses and its computer seats are never mailed. An address is mailed when it asked
   (an answer to its own mail), when it is a seated player of a game it joined (the
   admin seated it, or it answered the game's mail), when it watches a game (it
   confirmed), or — at most once per ``invitation_quiet_days``, whoever asks for it —
   when it never confirmed that it reads the service's mail (an invitation, a
   confirmation request, the first mail of a game started in its name, a note). A
   mailbox that said ``decline`` (for ``invitation_quiet_days``), ``never``, or ``stop``
   without being a player (until it says ``start``) gets no mail it did not ask for by a
   proven mail. The day's caps (`take_new_game`, invitations and confirmation requests
   per mailbox) are counted on the mailbox's locked row, so they hold within a batch and
   across workers.

What a refusal says lands in the inbound row's reason (``pbem inbox list``); a mail not
sent is logged at debug level with the reason.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlmodel import Session

from pbem.config import Settings
from pbem.mail.address import is_valid_address
from pbem.mail.authresults import from_verdict
from pbem.mail.reading import IncomingMail, reply_subject
from pbem.service.context import Context, Proof, Sender
from pbem.store import models as m
from pbem.store._sql import update_row
from pbem.store.consent import confirm_mailboxes, find_consent, locked_consent

log = logging.getLogger("pbem.policy")

__all__ = [
    "RULES",
    "Decision",
    "Proof",
    "Rule",
    "Sender",
    "Why",
    "confirm",
    "decide",
    "forgotten_key",
    "joined_seats",
    "lift",
    "mailbox_of",
    "may_invite",
    "may_mail",
    "prove",
    "reachable",
    "suppress",
    "take_new_game",
    "takes_mail_for",
]


# -- mailboxes ---------------------------------------------------------------------------


def mailbox_of(address: str) -> str:
    """The mailbox ``address`` reaches: lowercase, without a ``+tag`` ("V+2@Victim.test"
    → "v@victim.test"). Consent, caps and quiet periods are kept per mailbox."""
    local, at, domain = address.strip().lower().rpartition("@")
    if not at:
        return address.strip().lower()
    base = local.split("+", 1)[0]
    return (base or local) + at + domain


FORGOTTEN_DOMAIN = "forgotten.invalid"
"""The domain of the pseudonyms of forgotten players (``pbem player forget``): a
reserved name (RFC 2606) that no mail reaches, and that the service never mails."""


def forgotten_key(mailbox: str) -> str:
    """The key under which the consent row of a forgotten player's mailbox is kept when
    it must stay on the suppression list (it said ``never``): a one-way hash, so the
    address itself is no longer stored, yet its later mail still finds the row."""
    return "sha256:" + hashlib.sha256(mailbox.encode("utf-8")).hexdigest()


def _find(session: Session, mailbox: str) -> m.Consent | None:
    """The consent row of ``mailbox``: the one kept for it when it was forgotten first
    (its suppression holds), else its own."""
    return find_consent(session, forgotten_key(mailbox)) or find_consent(session, mailbox)


def _locked(session: Session, mailbox: str) -> m.Consent:
    """`_find`'s row, created if new, locked for the transaction."""
    kept = find_consent(session, forgotten_key(mailbox))
    return locked_consent(session, kept.mailbox if kept is not None else mailbox)


def is_service_mailbox(ctx: Context, address: str) -> bool:
    """Whether ``address`` is the service's own (its address with any tag) or one of its
    computer seats: mail to it would loop."""
    local, _, domain = mailbox_of(address).rpartition("@")
    if domain != ctx.settings.domain.lower():
        return False
    own = ctx.settings.local_part.lower()
    return local == own or re.fullmatch(r"computer\d*", local) is not None


def takes_mail_for(settings: Settings, recipient: str) -> bool:
    """Whether mail to the envelope recipient ``recipient`` is the service's to take: its
    own address ``local_part@domain`` or ``local_part+anything@domain``, in any case.
    Anything else (another mailbox, another domain, a computer seat's name, a quoted or
    routed address) is not: it is refused before a byte of the mail is read."""
    local, at, domain = recipient.strip().rpartition("@")
    if not at or domain.lower() != settings.domain.lower():
        return False
    base, _plus, _tag = local.partition("+")
    return base.lower() == settings.local_part.lower() and not re.search(r'[\s"<>@,:;]', local)


# -- 1. proven enough? -------------------------------------------------------------------


def prove(ctx: Context, mail: IncomingMail, token_owner: str | None) -> Sender:
    """How well ``mail`` proves its From: ``token_owner`` is the address the reply token
    it carries was mailed to (a seat's player, an invitee, a confirmation's address), or
    None when it carries none of ours."""
    address = mail.sender
    box = mailbox_of(address)
    trusted = ctx.settings.trusted_authserv_id
    if trusted:
        verdict = from_verdict(mail.auth_results, trusted, address)
        if not verdict.passed:
            return Sender(address, box, Proof.NONE, f"From not vouched for: {verdict.reason}")
        return Sender(address, box, Proof.TOKEN, verdict.reason)
    if token_owner is not None and mailbox_of(token_owner) == box:
        return Sender(address, box, Proof.TOKEN, "reply token")
    return Sender(address, box, Proof.FROM, "From alone")


@dataclass(frozen=True)
class Rule:
    """The least proof an action needs; ``confirm``: a weaker one (but a From) gets one
    confirmation request, and the action is done once it is answered; ``confirm_unknown``:
    so does a From of a mailbox that never confirmed."""

    proof: Proof
    confirm: bool = False
    confirm_unknown: bool = False


RULES: dict[str, Rule] = {
    # In a game (a token names it, or the From's only game): moves, questions, talk,
    # settings. A seat not joined yet needs its token (see `decide`).
    "move": Rule(Proof.FROM),
    # Ending a game for good: only with the seat's token.
    "resign": Rule(Proof.TOKEN),
    # The sender's own settings, and questions answered to them alone.
    "settings": Rule(Proof.FROM),
    "query": Rule(Proof.FROM),
    # A game against the computer: its first mail (with the seat's token) is the
    # confirmation — the seat joins when its player answers it.
    "new": Rule(Proof.FROM),
    # Invitations mail others: a mailbox that never confirmed confirms first.
    "challenge": Rule(Proof.FROM, confirm_unknown=True),
    "rematch": Rule(Proof.FROM, confirm_unknown=True),
    "cancel": Rule(Proof.FROM),
    # The board of a game after every move: always confirmed by the watcher.
    "watch": Rule(Proof.TOKEN, confirm=True),
    "unwatch": Rule(Proof.FROM),
    # Answers to an invitation or a confirmation request: by their token only.
    "answer": Rule(Proof.TOKEN),
    # Less mail ("never", "stop" from a non-player): a From is enough, it only quietens.
    "quieten": Rule(Proof.FROM),
    # More mail again after "never" or a non-player's stop: only a proven "start" (a
    # reply to one of the service's mails to that mailbox, or the trusted server's pass).
    "unquieten": Rule(Proof.TOKEN),
}


class Verdict(StrEnum):
    ALLOW = "allow"
    REFUSE = "refuse"
    CONFIRM = "confirm"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    reason: str

    @property
    def allowed(self) -> bool:
        return self.verdict == Verdict.ALLOW


def decide(
    ctx: Context,
    session: Session,
    sender: Sender,
    action: str,
    *,
    seat: m.Seat | None = None,
) -> Decision:
    """Whether ``sender`` may do ``action`` (a key of `RULES`); ``seat``: the seat the
    mail acts for, in a game."""
    rule = RULES[action]
    if sender.proof == Proof.NONE:
        return Decision(Verdict.REFUSE, f"{action} refused: {sender.how}; no reply")
    if seat is not None and not seat.joined and sender.proof < Proof.TOKEN:
        return Decision(
            Verdict.REFUSE,
            f"{action} refused: the seat's player has not yet answered the game's mail "
            "from its reply address, and a From alone does not show who wrote",
        )
    if sender.proof >= rule.proof:
        if rule.confirm_unknown and sender.proof < Proof.TOKEN:
            box = _find(session, sender.mailbox)
            if box is None or box.confirmed_at is None:
                return Decision(
                    Verdict.CONFIRM, f"{action}: {sender.address} never confirmed its address"
                )
        return Decision(Verdict.ALLOW, sender.how)
    if rule.confirm and sender.proof == Proof.FROM:
        return Decision(Verdict.CONFIRM, f"{action} needs its sender's confirmation")
    return Decision(
        Verdict.REFUSE, f"{action} needs a reply token ({sender.how} is not enough); no reply"
    )


def joined_seats(sender: Sender, addresses: list[str]) -> list[str]:
    """Which of a new game's ``addresses`` are joined when ``sender``'s mail started
    it: all of them when the mail is proven, else all but the sender's own (their seat
    joins when they answer the game's first mail with its token)."""
    if sender.proof >= Proof.TOKEN:
        return list(addresses)
    return [a for a in addresses if mailbox_of(a) != sender.mailbox]


def confirm(ctx: Context, session: Session, sender: Sender, now: datetime) -> None:
    """Record that ``sender``'s mailbox reads the service's mail (a proven mail of theirs
    answered it); a ``decline``'s quiet period or a ``never`` stays."""
    if sender.proof >= Proof.TOKEN:
        confirm_mailboxes(session, [sender.mailbox], now)


def seated_by_admin(session: Session, addresses: list[str], now: datetime) -> None:
    """The admin seated these addresses: their mailboxes count as confirmed."""
    confirm_mailboxes(session, [mailbox_of(a) for a in addresses], now)


def reset_bounces(session: Session, player: m.Player) -> None:
    """A proven mail from ``player`` shows their mailbox works: bounces so far no longer
    count against them."""
    if player.bounce_count:
        update_row(session, player, bounce_count=0)


# -- quiet: decline, never, stop, start ----------------------------------------------------


QUIETEN_VERBS = ("never", "unsubscribe")
"""Words that, from anyone, put their mailbox on the suppression list."""


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


# -- 2. may we mail them? ------------------------------------------------------------------


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


CONFIRMATIONS_PER_DAY = 3
"""Confirmation requests one mailbox may get in a day (each answers a request in its
name; one is pending at a time)."""


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
    if why == Why.CONFIRM:
        if hard:
            return False, f"suppressed ({box.suppressed})"
        if box.confirmations_today >= CONFIRMATIONS_PER_DAY:
            return False, "as many confirmation requests today as one mailbox may get"
        if not trusted and not _unasked(ctx, box, now):
            return False, "its one unasked mail went already"
        box.confirmations_today += 1
        session.add(box)
        return True, "a confirmation request"
    if own:
        # An answer to a mail proven by its From alone.
        if trusted:
            return True, "an answer to a confirmed mailbox"
        allowed = _unasked(ctx, box, now)
        session.add(box)
        return allowed, "an answer to a mailbox that never confirmed"
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


def _new_day(box: m.Consent, now: datetime) -> None:
    day = now.strftime("%Y-%m-%d")
    if box.day != day:
        box.day = day
        box.invitations_today = box.games_today = box.confirmations_today = 0


# -- caps and invitations -------------------------------------------------------------------


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


UNJOINED_AT_ONCE = 3
"""Games started by a From alone in one mailbox's name that may wait at once for its
player's first answer (within ``invitation_days``): a forged From starts a few games,
not one a mail, while a player who starts games by plain mail hardly notices."""


def take_new_game(ctx: Context, session: Session, sender: Sender, now: datetime) -> str | None:
    """Count one game started by mail in ``sender``'s name; None when it may start, else
    why not (nothing counted): the mailbox started ``max_new_games_per_day`` today, or —
    for a mail proven by its From alone — `UNJOINED_AT_ONCE` games started that way in
    its name still wait for their player's first answer."""
    box = _locked(session, sender.mailbox)
    _new_day(box, now)
    if box.games_today >= ctx.settings.max_new_games_per_day:
        return "over the daily limit of new games"
    if sender.proof < Proof.TOKEN:
        window = timedelta(days=ctx.settings.invitation_days)
        if box.unjoined_since is None or now - box.unjoined_since >= window:
            box.unjoined_since, box.unjoined_games = now, 0
        if box.unjoined_games >= UNJOINED_AT_ONCE:
            return f"{UNJOINED_AT_ONCE} games started in its name wait for its first answer"
        box.unjoined_games += 1
    box.games_today += 1
    session.add(box)
    session.flush()
    return None


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
