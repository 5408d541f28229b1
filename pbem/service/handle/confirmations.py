"""confirm: requests done only once their sender proves the address they wrote from.

A From can be forged. When the policy answers a request with "confirm"
(`pbem.service.policy.decide`: ``watch``, a ``challenge`` from a mailbox that never
confirmed, ``start`` after ``never``), `request` stores a `m.Confirmation` naming the mail
that asked and sends one short mail (`policy.Why.CONFIRM`: counted as the mailbox's one
unasked mail when it never confirmed) whose reply address carries a fresh token. Any
reply from that mailbox to it (`answer`) proves the address: the mailbox is confirmed and
the stored request is done as if it had come with a token. ``never`` / ``stop`` /
``no`` in reply refuse it (``never`` and ``stop`` also put the mailbox on the suppression
list). A mailbox has one request waiting at a time; a request lapses after
``invitation_days``.

A confirmation may also carry a new game's deal commitment (``server_seed``: `Offer`):
a challenge's, and the open lobby's welcome, show it, logged first, and the answer is
its writer's cut for that game; a proven challenger gets a request to cut of its own
(`offer_letter`, action ``cut``), whose answer is `Cut`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from sqlmodel import Session, col, select

from engine import InvalidSyntaxError
from pbem.commands import LobbyCommand, parse_lobby
from pbem.mail.reading import IncomingMail, read_message, reply_subject
from pbem.mail.tokens import new_token, reply_address
from pbem.render import MailContext, Notice, RenderedMail, render_error
from pbem.render.page import SENT
from pbem.service import policy
from pbem.service.context import Context, Outcome, Proof, Sender, finish
from pbem.service.game.deals import Offer, answer_cut, new_offer, offer_lines
from pbem.service.send import outside
from pbem.store import models as m

PENDING = m.ConfirmationStatus.PENDING.value

WHAT = {
    "move": "to play in your game",
    "settings": "to change your settings",
    "watch": "to watch a game",
    "unwatch": "to stop sending you a game's board",
    "challenge": "to invite others to a game",
    "rematch": "to invite others to a rematch",
    "cancel": "to withdraw your invitation",
    "start": "to get the service's mail again",
    "never": "to send you no more mail",
    "unsubscribe": "to send you no more mail",
    "stop": "to send you no more mail",
}
"""What each kind of request is, in the confirmation mail's words."""


def confirmation_for(session: Session, tokens: list[str]) -> m.Confirmation | None:
    """The confirmation request one of ``tokens`` names."""
    if not tokens:
        return None
    return session.exec(select(m.Confirmation).where(col(m.Confirmation.token).in_(tokens))).first()


def request(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    action: str,
    now: datetime,
    *,
    asked: str = "",
    game_id: int | None = None,
) -> Outcome:
    """Hold ``row``'s request (``action``; ``asked``: what it said, in the service's
    words, quoted to the mailbox) until its sender confirms; mail them one confirmation
    request if the policy lets it go. The message's final state."""
    assert row.id is not None
    writer = ctx.senders[row.id]
    waiting = session.exec(
        select(m.Confirmation.id).where(
            m.Confirmation.mailbox == writer.mailbox,
            m.Confirmation.status == PENDING,
            col(m.Confirmation.expires_at) > now,
        )
    ).first()
    if waiting is not None:
        return finish(
            ctx,
            session,
            row,
            "ignored",
            f"{action}: a confirmation request to {writer.mailbox} waits already; no mail",
            sender=mail.sender,
            game_id=game_id,
        )
    token = new_token()
    held = m.Confirmation(
        token=token,
        address=mail.sender,
        mailbox=writer.mailbox,
        action=action,
        inbound_id=row.id,
        status=PENDING,
        created_at=now,
        expires_at=now + timedelta(days=ctx.settings.invitation_days),
    )
    session.add(held)
    session.flush()
    inbound_id = row.id

    def letter() -> outside.Letter:
        deal: tuple[str, ...] = ()
        if action in OFFERS and ctx.settings.fair_deals:
            # The game's commitment rides with the confirmation: its answer is the
            # challenger's cut (logged first, as every commitment before a cut).
            held.server_seed = new_offer(session, now)
            session.add(held)
            deal = offer_lines(session, held.server_seed)
        return request_letter(ctx, action, token, inbound_id, mail.message_id, asked, deal)

    why = policy.Why.RESUME if action == "start" else policy.Why.CONFIRM
    if not outside.outside_game(ctx, session, mail.sender, why, now, letter, inbound_id=inbound_id):
        return finish(
            ctx,
            session,
            row,
            "ignored",
            f"{action}: held for confirmation, but {writer.mailbox} may get no "
            "confirmation request now (see the policy); no mail",
            sender=mail.sender,
            game_id=game_id,
        )
    return finish(
        ctx,
        session,
        row,
        "applied",
        f"{action}: held until {writer.mailbox} confirms (confirmation request sent)",
        sender=mail.sender,
        game_id=game_id,
    )


def welcome(
    ctx: Context, session: Session, row: m.Inbound, mail: IncomingMail, now: datetime
) -> bool:
    """The one answer of an open lobby to a stranger who wrote without a command of it:
    how to start. Its reply address carries a token like a confirmation request's, so a
    reply to it ("play computer") proves the address and is then read as the reply's own
    lobby command (`answer`). Whether it went (the policy: a mailbox that never
    confirmed gets one unasked mail per quiet period)."""
    from pbem.render.games import render_welcome

    assert row.id is not None
    inbound_id, writer = row.id, ctx.senders[row.id]

    def letter() -> outside.Letter:
        token = new_token()
        # In a fair lobby the first game's commitment rides with the welcome: the reply
        # that starts a game ("play computer") is the player's cut, and that game's first
        # mail holds the cards.
        seed = new_offer(session, now) if ctx.settings.fair_deals else None
        session.add(
            m.Confirmation(
                token=token,
                address=mail.sender,
                mailbox=writer.mailbox,
                action="welcome",
                inbound_id=inbound_id,
                status=PENDING,
                created_at=now,
                expires_at=now + timedelta(days=ctx.settings.invitation_days),
                server_seed=seed,
            )
        )
        session.flush()
        deal = offer_lines(session, seed) if seed else ()
        welcome = render_welcome(deal_lines=deal)
        return reply_letter(ctx, token, welcome, "welcome", inbound_id, mail.message_id)

    return outside.outside_game(ctx, session, mail.sender, policy.Why.CONFIRM, now, letter)


ASKED_MAX = 160
"""The longest quote of what a held mail asked (the service's reading of it)."""


def request_letter(
    ctx: Context,
    action: str,
    token: str,
    inbound_id: int,
    answering: str | None,
    asked: str = "",
    deal: tuple[str, ...] = (),
) -> outside.Letter:
    """The confirmation request: what was asked, how to confirm, and how to refuse;
    ``deal``: the new game's commitment, when the answer is also the writer's cut."""
    reply_to = reply_address(ctx.settings.local_part, token, ctx.settings.domain)
    what = WHAT.get(action, "a request")
    if asked:
        quoted = asked if len(asked) <= ASKED_MAX else asked[: ASKED_MAX - 1] + "…"
        what += f" (“{quoted}”)"
    about = MailContext(
        game_id=0,
        names=("",),
        recipient_seat=0,
        reply_hint="",
        notices=(
            Notice(
                "info",
                "",
                f"A mail from this address asked the cribbage-by-email service {what}. "
                "Anyone can write any From, so nothing was done yet. If it was you, reply "
                "to this mail (any words will do, or one click below) and it is done.",
            ),
            Notice(
                "info",
                "",
                "If it was not you, ignore this mail: the request lapses and nothing more "
                "is sent about it. Reply 'never' to get no mail from this service at all.",
            ),
        ),
    )
    # The address may not play here yet: nothing to offer but the answer asked for.
    about = replace(about, reply_to=reply_to, deal_lines=deal)
    mail = render_error(
        about,
        None,
        "Please confirm your request",
        footer=(SENT,),
        answers=(("Yes, it was me", "yes"), ("Never mail me", "never")),
    )
    return reply_letter(ctx, token, mail, "confirm", inbound_id, answering)


def reply_letter(
    ctx: Context,
    token: str,
    mail: RenderedMail,
    kind: str,
    inbound_id: int,
    answering: str | None,
) -> outside.Letter:
    """``mail`` answering the mail ``answering``, replied to at the address of ``token``,
    with a ``List-Unsubscribe`` to ``never``."""
    reply_to = reply_address(ctx.settings.local_part, token, ctx.settings.domain)
    return outside.Letter(
        mail,
        kind,
        f"<{kind}.{inbound_id}.{secrets.token_hex(8)}@{ctx.settings.domain}>",
        reply_to=reply_to,
        answering=answering,
        extra_headers={"List-Unsubscribe": f"<mailto:{reply_to}?subject=never>"},
    )


def offer_letter(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    player: m.Player,
    title: str,
    notices: list[Notice],
    seed: str,
    now: datetime,
    answering: str | None,
) -> bool:
    """A mail to ``player`` (``title``, ``notices``) that shows the commitment of
    ``seed`` (logged already) and asks for their cut with one click: its reply address
    names a confirmation (action ``cut``) whose answer is the cut (`answer`). Whether it
    went (the policy, as any answer)."""
    assert row.id is not None
    inbound_id = row.id

    def letter() -> outside.Letter:
        token = new_token()
        session.add(
            m.Confirmation(
                token=token,
                address=player.email,
                mailbox=policy.mailbox_of(player.email),
                action=CUT,
                inbound_id=inbound_id,
                status=PENDING,
                created_at=now,
                expires_at=now + timedelta(days=ctx.settings.invitation_days),
                server_seed=seed,
            )
        )
        session.flush()
        about = MailContext(
            game_id=0,
            names=(player.display_name or player.email,),
            recipient_seat=0,
            reply_hint="",
            notices=tuple(notices),
            deal_lines=offer_lines(session, seed),
            reply_to=reply_address(ctx.settings.local_part, token, ctx.settings.domain),
        )
        mail = render_error(about, None, title, answers=(("Cut for the deal", "cut"),))
        return reply_letter(ctx, token, mail, "lobby-invited", inbound_id, answering)

    return outside.outside_game(
        ctx, session, player.email, policy.Why.ANSWER, now, letter, inbound_id=inbound_id
    )


CUT = "cut"
"""The action of a confirmation whose answer is its writer's cut for a game not dealt
yet (a proven challenge's: `offer_letter`)."""

OFFERS = ("challenge",)
"""Requests whose confirmation shows the new game's commitment: the answer that
confirms is the writer's cut (`Offer`)."""

REFUSALS = ("never", "stop", "unsubscribe", "no")


QUIETENING = ("never", "unsubscribe", "stop")
"""Held requests for less mail: done by suppressing the mailbox once confirmed."""

HELD_MAIL = ("move", "settings")
"""Held mails of a player to their game or their settings: read again, proven, once
confirmed."""


@dataclass(frozen=True)
class Proven:
    """A held mail of a player (a move, a setting) its sender confirmed: to be read
    again as if it had come with their token (``ctx.senders`` then holds its sender,
    proven)."""

    mail: IncomingMail


@dataclass(frozen=True)
class Confirmed:
    """A held request its sender confirmed: the mail that asked, and what it asks (for
    the lobby to do, as if it had come with a token)."""

    mail: IncomingMail
    asked: LobbyCommand | InvalidSyntaxError
    offer: Offer | None = None
    """The seed whose commitment the confirmation (or welcome) showed, and the cut its
    answer made: the game the request starts is dealt with that cut in."""


@dataclass(frozen=True)
class Cut:
    """An answer to a mail that asked its writer to cut (`offer_letter`): the
    confirmation answered and the cut (its entropy text) for the game of its seed."""

    held: m.Confirmation
    cut: str


def answer(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    held: m.Confirmation,
    player: m.Player | None,
    now: datetime,
) -> Outcome | Confirmed | Proven | Cut:
    """A reply to a confirmation request: the message's final state when it is refused
    or ends here, else the confirmed request — a lobby command (`Confirmed`) or a
    player's held mail (`Proven`); ``ctx.senders`` then holds its sender, proven."""
    assert row.id is not None
    writer = ctx.senders[row.id]
    decision = policy.decide(ctx, session, writer, "answer")
    if not decision.allowed or writer.mailbox != held.mailbox:
        return finish(
            ctx,
            session,
            row,
            "ignored",
            f"confirmation token used by another address ({decision.reason}): no reply",
            sender=mail.sender,
        )
    held = session.exec(
        select(m.Confirmation)
        .where(m.Confirmation.id == held.id)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).one()
    word = policy.quiet_word(mail)
    # An answer to a mail that showed a new game's commitment is the writer's cut.
    cut = answer_cut(
        mail.message_id, mail.reply_text or "", f"<no-message-id.confirmation.{held.id}>"
    )
    if held.action == CUT and held.status == m.ConfirmationStatus.CONFIRMED.value:
        # A second answer to a request to cut: told where the cut stands.
        return Cut(held, cut)
    if held.status != PENDING or held.expires_at <= now:
        return finish(
            ctx,
            session,
            row,
            "ignored",
            f"confirmation {held.id} is no longer open ({held.status}): no reply",
            sender=mail.sender,
        )
    held.answered_at = now
    if word in REFUSALS:
        held.status = m.ConfirmationStatus.REFUSED.value
        session.add(held)
        if word != "no":
            policy.suppress(ctx, session, mail.sender, word, now, days=None)
        return finish(
            ctx,
            session,
            row,
            "applied",
            f"confirmation refused ({word}); no reply",
            sender=mail.sender,
        )
    held.status = m.ConfirmationStatus.CONFIRMED.value
    session.add(held)
    policy.confirm(ctx, session, writer, now)
    if held.action == "start":
        policy.lift(ctx, session, mail.sender)
        outside.error_reply(
            ctx,
            session,
            player or m.Player(email=mail.sender, created_at=now),
            row.id,
            "start",
            "Mail again",
            [Notice("applied", "start", "You will get the service's mail again.")],
            now,
            answering=mail.message_id,
        )
        return finish(ctx, session, row, "applied", "start: off the suppression list")
    if held.action in QUIETENING:
        policy.suppress(ctx, session, held.address, held.action, now, days=None)
        return finish(
            ctx,
            session,
            row,
            "applied",
            f"{held.action}: confirmed; {writer.mailbox} gets no more mail it does not ask "
            "for; no reply",
            sender=mail.sender,
        )
    offer = Offer(held.server_seed, cut) if held.server_seed else None
    if held.action == CUT:
        return Cut(held, cut)
    if held.action == "welcome":
        # A reply to the welcome: the address is proven; the reply itself says what
        # it wants.
        ctx.senders[row.id] = Sender(mail.sender, writer.mailbox, Proof.TOKEN, "welcomed")
        mine = parse_lobby(mail.reply_text or "", reply_subject(mail.subject or ""))
        if mine is None:
            return finish(
                ctx, session, row, "ignored", "a reply to the welcome without a lobby command"
            )
        return Confirmed(mail, mine, offer)
    asked_row = session.get(m.Inbound, held.inbound_id)
    assert asked_row is not None
    asked_mail = read_message(
        asked_row.raw, our_addresses={ctx.settings.address}, loop_value=ctx.settings.loop_value
    )
    if held.action in HELD_MAIL:
        ctx.senders[row.id] = Sender(asked_mail.sender, writer.mailbox, Proof.TOKEN, "confirmed")
        return Proven(asked_mail)
    asked = parse_lobby(asked_mail.reply_text or "", reply_subject(asked_mail.subject or ""))
    if asked is None:
        return finish(ctx, session, row, "ignored", "the confirmed mail asks nothing now")
    # The request is done as if it had come with a token: its sender has shown it.
    ctx.senders[row.id] = Sender(asked_mail.sender, writer.mailbox, Proof.TOKEN, "confirmed")
    return Confirmed(asked_mail, asked, offer)
