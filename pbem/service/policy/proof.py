"""proof: is this sender proven enough for what they ask? (`decide`)

`prove` says how well a mail shows its writer (`Proof`: none, From alone, a token or
the trusted server's pass); `RULES` gives the least proof each action needs and what a
weaker one earns (refused, or one confirmation request); `decide` applies it. A proven
mail joins its seat and confirms its mailbox (`confirm`, `reset_bounces`), and
`take_new_game` limits the games one may start by mail.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlmodel import Session

from pbem.mail.authresults import from_verdict
from pbem.mail.reading import IncomingMail
from pbem.service.context import Context, Proof, Sender
from pbem.service.policy.consent import (
    _new_day,
)
from pbem.service.policy.mailboxes import (
    _locked,
    mailbox_of,
)
from pbem.store import models as m
from pbem.store._sql import update_row
from pbem.store.consent import confirm_mailboxes


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
    confirmation request, and the action is done once it is answered."""

    proof: Proof
    confirm: bool = False


RULES: dict[str, Rule] = {
    # Anything that changes a game or anyone's settings needs proof: the seat's reply
    # token (or the trusted server's pass). A From alone gets one confirmation request
    # ("Did you send this? One click to do it"), and the mail is done once answered.
    # In a game (a token names it, or the From's only game): moves, questions, talk,
    # settings. A seat not joined yet needs its token (see `decide`).
    "move": Rule(Proof.TOKEN, confirm=True),
    # Ending a game for good: only with the seat's token.
    "resign": Rule(Proof.TOKEN),
    # The sender's own settings (name, stop, away, digest …).
    "settings": Rule(Proof.TOKEN, confirm=True),
    # Questions answered to the sender alone (games, standings, help): counted in the
    # mailbox's daily answers to unproven mail (`may_mail`).
    "query": Rule(Proof.FROM),
    # A game against the computer: its first mail (with the seat's token) is the
    # confirmation — the seat joins when its player answers it.
    "new": Rule(Proof.FROM),
    # Invitations mail others; cancelling one changes a game: proven, or confirmed.
    "challenge": Rule(Proof.TOKEN, confirm=True),
    "rematch": Rule(Proof.TOKEN, confirm=True),
    "cancel": Rule(Proof.TOKEN, confirm=True),
    # The board of a game after every move, and its end: proven, or confirmed.
    "watch": Rule(Proof.TOKEN, confirm=True),
    "unwatch": Rule(Proof.TOKEN, confirm=True),
    # Answers to an invitation or a confirmation request: by their token only.
    "answer": Rule(Proof.TOKEN),
    # Less mail ("never", "unsubscribe", a non-player's "stop"): proven, or confirmed —
    # a forger must not silence anyone. (The List-Unsubscribe mailto and URL carry the
    # recipient's own token: one-click unsubscribe needs no confirmation.)
    "quieten": Rule(Proof.TOKEN, confirm=True),
    # More mail again after "never" or a non-player's stop: proven, or confirmed.
    "unquieten": Rule(Proof.TOKEN, confirm=True),
}


class Verdict(StrEnum):
    ALLOW = "allow"
    REFUSE = "refuse"
    CONFIRM = "confirm"
    DELAY = "delay"


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
        return Decision(Verdict.ALLOW, sender.how)
    if rule.confirm and sender.proof == Proof.FROM:
        return Decision(
            Verdict.CONFIRM, f"{action}: a From alone does not show who wrote; asked to confirm"
        )
    return Decision(
        Verdict.REFUSE, f"{action} needs a reply token ({sender.how} is not enough); no reply"
    )


def volume(ctx: Context, sender: Sender, this_hour: int) -> Verdict:
    """Whether a mail from ``sender``, who sent ``this_hour`` mails in the hour before it,
    is read now. Mail that proves nothing but its From is capped per sender
    (``max_per_sender_per_hour``: refused, unread and unanswered — a forger's flood costs
    nothing). Proven mail is never dropped: over ``max_proven_per_hour`` it waits until
    the hour allows it (a keen player's every move is applied)."""
    if sender.proof >= Proof.TOKEN:
        over = this_hour >= ctx.settings.max_proven_per_hour
        return Verdict.DELAY if over else Verdict.ALLOW
    return Verdict.REFUSE if this_hour >= ctx.settings.max_per_sender_per_hour else Verdict.ALLOW


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
