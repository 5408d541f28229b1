"""invitations: the answers to an invitation (accept, decline, never), and what they start.

The ``challenge`` and ``cancel`` commands that send and withdraw invitations are
`pbem.service.handle.challenge`.

A challenge stores one `Invitation` row per invited address (all sharing the challenge
mail's inbound id) and mails each address ONE invitation with its own reply token, in the
challenge mail's transaction: a crash before the commit leaves neither rows nor mail, and
processing the message again makes them once. The game starts (its first mail to
everyone) when every invitee accepted; a decline cancels the rest (everyone told); the
challenger's ``cancel`` withdraws their open invitations; the timers expire invitations
nobody answered (`pbem.service.timers.expire_invitations`), telling the challenger.

Who may be invited, and whether an invitation or a note may go, the policy decides
(`pbem.service.policy.may_invite`, `policy.may_mail`); the challenger is told only "that
address cannot be invited now". A decline keeps the mailbox from invitations for
``invitation_quiet_days``; ``never`` (or ``stop``) in answer, or the invitation's
``List-Unsubscribe``, for good. The invitation names the challenger and no one else.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from engine.fairness import commitment
from pbem.commands import words_after
from pbem.mail.reading import IncomingMail
from pbem.render import Notice
from pbem.service import policy
from pbem.service.context import Context, Outcome, ServiceError, finish
from pbem.service.game.deals import cut_text, receipt
from pbem.service.handle import confirmations
from pbem.service.ops.matches import levels_of, new_match, next_of
from pbem.service.ops.start import start_game
from pbem.service.send import outside
from pbem.store import models as m
from pbem.store.commitlog import log_lapse
from pbem.store.players import get_player, get_player_by_email

PENDING = m.InvitationStatus.PENDING.value


def tell(
    ctx: Context,
    session: Session,
    address: str,
    inbound_id: int,
    kind: str,
    title: str,
    text: str,
    now: datetime,
    answering: str | None = None,
) -> None:
    """A short note about an invitation to ``address`` (a player or not)."""
    person = get_player_by_email(session, address) or m.Player(email=address, created_at=now)
    outside.error_reply(
        ctx, session, person, inbound_id, kind, title, [Notice("info", "", text)], now, answering
    )


def tell_invited(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    challenger: m.Player,
    text: str,
    settings: dict[str, Any],
    now: datetime,
    answering: str | None,
) -> None:
    """Tell the challenger who was invited (``text``). In a fair game (``settings``
    holds its server seed) the mail says where their cut stands: taken already (by the
    challenge's confirmation, or a rematch's request: its receipt), or — a challenge that
    needed no confirmation — asked for now, with the game's commitment and a one-click
    ``cut`` whose answer is the challenger's cut (`challenger_cut`), so that the game is
    dealt as soon as the last invitee accepts."""
    assert row.id is not None
    notices = [Notice("info", "", text)]
    seed = settings.get("server_seed")
    made = (settings.get("cuts") or {}).get("0")
    if not seed or made:
        if made:
            notices.append(Notice("info", "", receipt(str(made))))
        outside.error_reply(
            ctx,
            session,
            challenger,
            row.id,
            "lobby-invited",
            "Invitations sent",
            notices,
            now,
            answering,
        )
        return
    notices.append(
        Notice(
            "info",
            "",
            'Reply "cut" to this mail, with any words after it you like, and the game is '
            "dealt the moment the last invitee accepts: your reply is your cut for its "
            "deal. If everyone has accepted first, the game's first mail asks you.",
        )
    )
    confirmations.offer_letter(
        ctx, session, row, challenger, "Invitations sent", notices, str(seed), now, answering
    )


def invitation_for(session: Session, tokens: list[str]) -> m.Invitation | None:
    """The invitation one of ``tokens`` names (not locked: `group` locks a challenge's
    invitations together, always in the same order, so two answers cannot deadlock)."""
    if not tokens:
        return None
    return session.exec(select(m.Invitation).where(col(m.Invitation.token).in_(tokens))).first()


def group(session: Session, invitation: m.Invitation) -> list[m.Invitation]:
    """Every invitation of ``invitation``'s challenge, in the order they were made."""
    return list(
        session.exec(
            select(m.Invitation)
            .where(m.Invitation.inbound_id == invitation.inbound_id)
            .order_by(col(m.Invitation.id))
            .with_for_update()
            .execution_options(populate_existing=True)
        ).all()
    )


def lapse(session: Session, invitation: m.Invitation, now: datetime) -> None:
    """The challenge ``invitation`` belongs to is off (declined, expired or withdrawn):
    when its fair game's commitment was offered (the log holds an ``offer`` of it: made
    by `challenge.send_invitations`, or by the challenge's confirmation), its fate —
    aborted before the deal — and its revealed server seed enter the public commitment
    log, once per offer (`pbem.store.commitlog.log_lapse`). A
    rematch's invitations that show the commitment of its game's ``next`` seed (which a
    later rematch may still use) made no offer: nothing is logged for them."""
    seed = invitation.settings.get("server_seed")
    if seed:
        log_lapse(session, commitment(str(seed)), str(seed), now)


def answer(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    invitation: m.Invitation,
    now: datetime,
) -> Outcome:
    """An invitee's answer (``accept`` / ``decline``) to their invitation."""
    assert row.id is not None
    sender = mail.sender
    writer = ctx.senders[row.id]
    decision = policy.decide(ctx, session, writer, "answer")
    if not decision.allowed or writer.mailbox != policy.mailbox_of(invitation.invitee):
        return finish(
            ctx,
            session,
            row,
            "ignored",
            f"invitation token used by another address ({decision.reason}): no reply",
            sender=sender,
        )
    sender = invitation.invitee  # the address invited (the same mailbox)
    said = policy.quiet_word(mail)
    if said == "start":
        # Back from "never": a reply to the service's own mail proves the mailbox.
        policy.lift(ctx, session, sender)
    accepted = said in ("accept", "accepted", "yes", "ok", "okay")
    never = said in ("never", "stop", "unsubscribe")
    declined = never or said in ("decline", "declined", "no", "reject")
    if declined:
        # No invitation for the quiet period, from anyone ("never": until "start").
        policy.suppress(
            ctx,
            session,
            sender,
            said if never else "declined",
            now,
            days=None if never else ctx.settings.invitation_quiet_days,
        )
    everyone = group(session, invitation)  # locked, and read again: another answer may
    # have changed them since the token was looked up
    if invitation.status != PENDING:
        tell(
            ctx,
            session,
            sender,
            row.id,
            "invite-closed",
            "This invitation is closed",
            f"This invitation is no longer open (it was {invitation.status}).",
            now,
            mail.message_id,
        )
        return finish(
            ctx, session, row, "rejected", f"invitation {invitation.status}", sender=sender
        )
    if not accepted and not declined:
        tell(
            ctx,
            session,
            sender,
            row.id,
            "invite-what",
            "Accept or decline?",
            "Reply with 'accept' to play, or 'decline'.",
            now,
            mail.message_id,
        )
        return finish(
            ctx, session, row, "rejected", "invitation: neither accept nor decline", sender=sender
        )
    challenger = get_player(session, invitation.challenger_id)
    assert challenger is not None
    invitation.answered_at = now
    if declined:
        invitation.status = m.InvitationStatus.DECLINED.value
        session.add(invitation)
        lapse(session, invitation, now)
        for other in everyone:
            if other.id != invitation.id and other.status in (
                PENDING,
                m.InvitationStatus.ACCEPTED.value,
            ):
                other.status = m.InvitationStatus.CANCELLED.value
                session.add(other)
                tell(
                    ctx,
                    session,
                    other.invitee,
                    row.id,
                    "invite-off",
                    "The game is off",
                    "Someone invited to it declined, so the game will not start.",
                    now,
                )
        tell(
            ctx,
            session,
            challenger.email,
            row.id,
            "invite-declined",
            "Invitation declined",
            f"{sender} declined your invitation; the game is off.",
            now,
        )
        tell(
            ctx,
            session,
            sender,
            row.id,
            "invite-bye",
            "Declined",
            (
                "You declined: nothing more will be sent about this game, and nobody can "
                "invite you for "
                f"{ctx.settings.invitation_quiet_days:g} days. Reply 'never' to get no "
                "invitations from this service at all."
            )
            if not never
            else "You will get no more invitations or other mail from this service "
            "unless you ask for it: write 'start' to it if you change your mind.",
            now,
            mail.message_id,
        )
        return finish(ctx, session, row, "applied", "invitation declined", sender=sender)
    invitation.status = m.InvitationStatus.ACCEPTED.value
    if invitation.settings.get("server_seed"):
        # The invitation showed the game's deal commitment: this answer is the invitee's
        # cut for its deal (its Message-ID and the words after the first).
        cut = cut_text(
            mail.message_id,
            words_after(first_line(mail.reply_text or ""), said),
            f"<no-message-id.invitation.{invitation.id}>",
        )
        invitation.settings = {**invitation.settings, "cut": cut}
    session.add(invitation)
    # Accepted from the invited mailbox: it asked to play, and reads the service's mail.
    policy.confirm(ctx, session, writer, now)
    waiting = [i.invitee for i in everyone if i.status == PENDING and i.id != invitation.id]
    if waiting:
        tell(
            ctx,
            session,
            sender,
            row.id,
            "invite-wait",
            "Accepted",
            "Thank you. The game starts when everyone invited has accepted.",
            now,
            mail.message_id,
        )
        return finish(ctx, session, row, "applied", "invitation accepted", sender=sender)
    rules = invitation.settings
    people: list[tuple[str, str | None]] = [(challenger.email, challenger.display_name)]
    people += [(i.invitee, mail.sender_name if i.id == invitation.id else None) for i in everyone]
    if rules.get("seats"):
        # A rematch: everyone in the seats of the game it follows.
        people = [(email, name_of(session, email)) for email in rules["seats"]]

    try:
        game_id = start_game(
            ctx,
            session,
            people,
            target=int(rules["target"]),
            muggins=bool(rules["muggins"]),
            skunk=str(rules["skunk"]),
            answering=(sender, mail.message_id),
            server_seed=str(rules["server_seed"]) if rules.get("server_seed") else None,
            computer=[int(s) for s in rules.get("computer", ())],
            levels=levels_of(rules),
            first_dealer=rules.get("first_dealer"),
            joined=[i.invitee for i in everyone]
            + ([challenger.email] if rules.get("challenger_joined", True) else []),
            cuts=invitation_cuts(rules, [email for email, _ in people], everyone),
            **rematch_and_match(session, rules, now),
        )
    except ServiceError as exc:
        tell(
            ctx,
            session,
            sender,
            row.id,
            "invite-fail",
            "No game",
            str(exc),
            now,
            mail.message_id,
        )
        return finish(ctx, session, row, "rejected", f"invitation: {exc}", sender=sender)
    ctx.fault("before-mark")
    return finish(
        ctx,
        session,
        row,
        "applied",
        f"invitation accepted: started game {game_id}",
        sender=sender,
        game_id=game_id,
    )


def first_line(text: str) -> str:
    """The first line of a reply's text that holds a word."""
    return next((line for line in text.splitlines() if line.strip()), "")


def invitation_cuts(
    rules: dict[str, Any], emails: list[str], everyone: Sequence[m.Invitation]
) -> dict[int, str]:
    """The cuts made already for the game of a challenge: each invitee's ``accept`` (and,
    in a rematch, the asking player's ``rematch``), by seat. Empty for a game whose
    deals are not verifiable."""
    if not rules.get("server_seed"):
        return {}
    cuts = {int(seat): str(text) for seat, text in (rules.get("cuts") or {}).items()}
    for invitation in everyone:
        cut = invitation.settings.get("cut")
        if cut and invitation.invitee in emails:
            cuts[emails.index(invitation.invitee)] = str(cut)
    return cuts


def name_of(session: Session, email: str) -> str | None:
    player = get_player_by_email(session, email)
    return player.display_name if player is not None else None


def rematch_and_match(session: Session, rules: dict[str, Any], now: datetime) -> dict[str, Any]:
    """The match (``best_of``) and the game rematched (``rematch_of``) of an accepted
    invitation's game, as `start_game` takes them. Raises ``ServiceError`` when the game
    was rematched meanwhile."""

    out: dict[str, Any] = {}
    rematch_of = rules.get("rematch_of")
    if rematch_of is not None:
        later = next_of(session, int(rematch_of))
        if later is not None:
            raise ServiceError(f"game {rematch_of} is already rematched: game {later.id}")
        out["rematch_of"] = int(rematch_of)
    best = rules.get("best_of")
    out.update(new_match(session, int(best) if best else None, now))
    return out
