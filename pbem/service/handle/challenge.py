"""challenge: ``challenge`` and ``cancel`` by mail to the plain address.

A player invites others to a game (``challenge ADDR … [to 61] [best of 3]``): each
address gets one invitation with its own reply token, where the policy lets it go
(`send_invitations`, through `pbem.service.send.outside.outside_game`), and the
challenger is told who was invited; ``cancel`` withdraws the invitations still open.
The answers to an invitation are `pbem.service.handle.invitations`'.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, col, func, select

from engine.fairness import commitment
from pbem.commands import CUT_VERB, Command, LobbyCommand
from pbem.mail.reading import IncomingMail
from pbem.mail.tokens import new_token, reply_address
from pbem.render.board import house_rules
from pbem.render.invite import render_invite
from pbem.service import policy
from pbem.service.context import Context, Outcome, display_name, finish, seats_of
from pbem.service.game.deals import (
    NOT_NEEDED,
    SECOND_CUT,
    Offer,
    answer_words,
    log_offer,
    new_server_seed,
    receipt,
    refuse_cut,
)
from pbem.service.handle.invitations import PENDING, lapse, tell, tell_invited
from pbem.service.moves import Known
from pbem.service.ops import cutting
from pbem.service.send import outside
from pbem.store import models as m
from pbem.store.commitlog import log_lapse
from pbem.store.players import get_or_create_player


def challenge(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    player: m.Player | None,
    asked: LobbyCommand,
    now: datetime,
    offer: Offer | None = None,
) -> Outcome:
    """Store and mail the invitations of ``asked``; answer the challenger.

    In a fair game the challenger's cut rides with the challenge's confirmation
    (``offer``: the server seed that mail showed, and the cut its answer made); a
    challenge that needed none is answered with the commitment and a one-click ``cut``
    (`tell_invited`). Either way, once every invitee has accepted — each ``accept`` is
    a cut — the game is dealt at once when the challenger has cut."""
    assert row.id is not None
    writer = ctx.senders[row.id]
    challenger = player or get_or_create_player(session, mail.sender, mail.sender_name, now=now)
    sender = challenger.email  # the address they play as (+tags matched)
    assert challenger.id is not None

    def refuse(why: str, reason: str) -> Outcome:
        if offer is not None and offer.server_seed:
            # The confirmation showed this commitment (an offer): no game, so it lapses.
            seed = str(offer.server_seed)
            log_lapse(session, commitment(seed), seed, now)
        tell(
            ctx,
            session,
            sender,
            row.id or 0,
            "lobby-challenge",
            "No invitation sent",
            why,
            now,
            mail.message_id,
        )
        return finish(ctx, session, row, "rejected", f"challenge: {reason}", sender=sender)

    mailboxes = [policy.mailbox_of(a) for a in asked.invitees]
    if len(set(mailboxes)) != len(mailboxes):
        return refuse(
            "Each person is invited once: two of those addresses are one mailbox.",
            "one mailbox named twice",
        )
    open_now = open_count(session, challenger)
    if open_now + len(asked.invitees) > ctx.settings.max_open_invitations:
        return refuse(
            f"You may have at most {ctx.settings.max_open_invitations} open invitations; "
            f"you have {open_now}. Write 'cancel' to withdraw them.",
            "over the open invitations limit",
        )
    for address in asked.invitees:
        if waiting_for(session, challenger, address):
            return refuse(
                f"Your invitation to {address} still waits for an answer: one at a time. "
                "Write 'cancel' to withdraw your open invitations.",
                f"{address} invited already",
            )
        allowed, why = policy.may_invite(ctx, session, challenger, address, now)
        if not allowed:
            return refuse(f"{address} cannot be invited now.", f"{address}: {why}")
    settings: dict[str, Any] = {
        "players": len(asked.invitees) + 1,
        "target": asked.target,
        "muggins": asked.muggins,
        "skunk": asked.skunk,
        "partners": len(asked.invitees) == 3,
        "challenge": secrets.token_hex(6),
        # Whether the challenger's seat is joined from the start: their challenge was
        # proven (a token, or the trusted server's pass), not only their From.
        "challenger_joined": writer.proof >= policy.Proof.TOKEN,
    }
    if asked.best_of is not None:
        settings["best_of"] = asked.best_of
    if offer is not None and ctx.settings.fair_deals:
        # The confirmation showed this seed's commitment: its answer is the challenger's
        # cut (the challenger sits first).
        settings["server_seed"] = offer.server_seed
        settings["cuts"] = {"0": offer.cut}
    rules = house_rules(len(asked.invitees) + 1, asked.target, asked.muggins, asked.skunk)
    if asked.best_of is not None:
        rules += f"; a match, best of {asked.best_of}"
    sent = send_invitations(
        ctx, session, row, challenger, mail.sender_name, asked.invitees, settings, rules, now
    )
    if not sent:
        return refuse("Those addresses cannot be invited now.", "no invitation could go")
    asked = replace(asked, invitees=tuple(sent))
    tell_invited(
        ctx,
        session,
        row,
        challenger,
        f"Invited: {', '.join(asked.invitees)} ({rules}). The game starts when everyone "
        "accepted; write 'cancel' to withdraw.",
        settings,
        now,
        mail.message_id,
    )
    ctx.fault("before-mark")
    return finish(
        ctx,
        session,
        row,
        "applied",
        f"challenge: invited {', '.join(asked.invitees)}",
        sender=sender,
    )


def open_count(session: Session, challenger: m.Player) -> int:
    """How many of ``challenger``'s invitations wait for an answer.

    Called before inviting more: it first locks the challenger's row (``FOR UPDATE`` on
    PostgreSQL; SQLite's write transactions are serial already), so two workers taking
    two challenges of the same player at once count one after the other and cannot
    both pass the ``max_open_invitations`` limit."""
    session.exec(select(m.Player.id).where(m.Player.id == challenger.id).with_for_update()).all()
    return session.exec(
        select(func.count())
        .select_from(m.Invitation)
        .where(m.Invitation.challenger_id == challenger.id, m.Invitation.status == PENDING)
    ).one()


def waiting_for(session: Session, challenger: m.Player, address: str) -> bool:
    """Whether ``challenger`` has an invitation to ``address``'s mailbox (any spelling of
    it) still waiting for an answer (a second one would only mail the same person again)."""
    box = policy.mailbox_of(address)
    waiting = session.exec(
        select(m.Invitation.invitee).where(
            m.Invitation.challenger_id == challenger.id, m.Invitation.status == PENDING
        )
    ).all()
    return any(policy.mailbox_of(invitee) == box for invitee in waiting)


def send_invitations(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    challenger: m.Player,
    challenger_name: str | None,
    invitees: Sequence[str],
    settings: dict[str, Any],
    rules: str,
    now: datetime,
) -> list[str]:
    """Store one invitation per address of ``invitees`` to the game of ``settings``
    (``rules`` in words), and mail each its invitation with its own reply token, where
    the policy lets it go (`policy.may_mail`, which counts it); the addresses invited."""
    assert row.id is not None and challenger.id is not None
    offered = ctx.settings.fair_deals and "server_seed" not in settings
    if offered:
        # The invitations already carry the commitment of the game's secret server seed
        # (kept with the invitations, never mailed, until the game is over or off).
        settings["server_seed"] = new_server_seed()
    expires = now + timedelta(days=ctx.settings.invitation_days)
    challenger_id, inbound_id = challenger.id, row.id
    sent: list[str] = []
    for address in invitees:

        def letter(address: str = address) -> outside.Letter:
            invitation = m.Invitation(
                settings=settings,
                challenger_id=challenger_id,
                invitee=address,
                token=new_token(),
                status=PENDING,
                inbound_id=inbound_id,
                created_at=now,
                expires_at=expires,
            )
            session.add(invitation)
            session.flush()
            reply_to = reply_address(ctx.settings.local_part, invitation.token, ctx.settings.domain)
            invite = render_invite(
                challenger_name or display_name(challenger),
                challenger.email,
                rules,
                expires.strftime("%Y-%m-%d"),
                commitment=commitment(str(settings["server_seed"]))
                if "server_seed" in settings
                else None,
                quiet_days=round(ctx.settings.invitation_quiet_days),
                reply_to=reply_to,
            )
            return outside.Letter(
                invite,
                "invite",
                f"<inv.{invitation.id}.{secrets.token_hex(8)}@{ctx.settings.domain}>",
                reply_to=reply_to,
                extra_headers=never_headers(
                    ctx.settings.unsubscribe_url, invitation.token, reply_to
                ),
            )

        if outside.outside_game(ctx, session, address, policy.Why.INVITE, now, letter):
            sent.append(address)
    if offered and sent:
        # Each "accept" is a cut: the commitment enters the public log in this
        # transaction, before the invitations leave (nothing shown, nothing offered).
        log_offer(session, str(settings["server_seed"]), now)
    return sent


def never_headers(unsubscribe_url: str, token: str, reply_to: str) -> dict[str, str]:
    """The ``List-Unsubscribe`` headers of an invitation: ``never`` by mail to its own
    reply address (RFC 2369), and with ``unsubscribe_url`` set RFC 8058's one-click URI
    ending in the invitation's token (`pbem.listen.unsubscribe`): either puts the mailbox on the
    suppression list."""
    mailto = f"<mailto:{reply_to}?subject=never>"
    if not unsubscribe_url:
        return {"List-Unsubscribe": mailto}
    return {
        "List-Unsubscribe": f"<{unsubscribe_url}/{token}>, {mailto}",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    }


def cancel(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    player: m.Player,
    now: datetime,
) -> Outcome:
    """The challenger withdraws their open invitations; the invitees are told."""
    assert row.id is not None
    mine = session.exec(
        select(m.Invitation)
        .where(m.Invitation.challenger_id == player.id, m.Invitation.status == PENDING)
        .order_by(col(m.Invitation.id))
        .with_for_update()
    ).all()
    if not mine:
        tell(
            ctx,
            session,
            player.email,
            row.id,
            "cancel-none",
            "Nothing to cancel",
            "You have no open invitations.",
            now,
            mail.message_id,
        )
        return finish(
            ctx, session, row, "rejected", "cancel: no open invitations", sender=player.email
        )
    for invitation in mine:
        invitation.status = m.InvitationStatus.CANCELLED.value
        invitation.answered_at = now
        session.add(invitation)
        lapse(session, invitation, now)  # once per offer
        tell(
            ctx,
            session,
            invitation.invitee,
            row.id,
            "invite-off",
            "Invitation withdrawn",
            f"{player.email} withdrew the invitation to a game of cribbage by email.",
            now,
        )
    tell(
        ctx,
        session,
        player.email,
        row.id,
        "cancel-done",
        "Invitations withdrawn",
        f"Withdrawn: {', '.join(i.invitee for i in mine)}.",
        now,
        mail.message_id,
    )
    return finish(
        ctx,
        session,
        row,
        "applied",
        f"cancel: {len(mine)} invitations withdrawn",
        sender=player.email,
    )


def challenger_cut(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    held: m.Confirmation,
    cut: str,
    now: datetime,
) -> Outcome:
    """The challenger answers the mail that said their invitations went (one that
    needed no confirmation: `tell_invited`): their cut for the game's deal. While an
    invitation is open the cut is kept with the invitations (the last ``accept`` then
    deals at once, its first mail holding the cards); once the game waits for its cuts
    it is the challenger's cut there; after the deal nothing is to cut."""
    assert row.id is not None
    seed = held.server_seed or ""
    everyone = session.exec(
        select(m.Invitation)
        .where(m.Invitation.inbound_id == held.inbound_id)
        .order_by(col(m.Invitation.id))
        .with_for_update()
        .execution_options(populate_existing=True)
    ).all()
    if any(i.status == PENDING for i in everyone):
        taken = next((i.settings.get("cuts", {}).get("0") for i in everyone), None)
        if taken is None:
            for invitation in everyone:
                cuts = {**(invitation.settings.get("cuts") or {}), "0": cut}
                invitation.settings = {**invitation.settings, "cuts": cuts}
                session.add(invitation)
        said = receipt(cut) if taken is None else SECOND_CUT_WORDS
        tell(ctx, session, held.address, row.id, "cut", "Your cut", said, now, mail.message_id)
        return finish(
            ctx,
            session,
            row,
            "applied" if taken is None else "rejected",
            "the challenger's cut, kept with the invitations" if taken is None else SECOND_CUT,
            sender=held.address,
        )
    game_row = challenge_game(session, held.address, seed)
    if game_row is None or game_row.id is None:
        tell(
            ctx, session, held.address, row.id, "cut", "No cut needed", CLOSED, now, mail.message_id
        )
        return finish(ctx, session, row, "rejected", "cut: the challenge is closed")
    seats = seats_of(session, game_row.id)
    mine = next(s.seat.seat for s in seats if s.player.email == held.address)
    words = answer_words(mail.reply_text or "")
    known = Known(
        game_row,
        seats,
        mine,
        held.address,
        (Command(CUT_VERB, (words,) if words else (), f"cut {words}".strip()),),
        (),
        inbound_id=row.id,
        message_id=mail.message_id,
    )
    if game_row.status != m.GameStatus.CUTTING.value:
        refuse_cut(session, game_row, mine, known.commands[0], mail.message_id, now, "dealt")
        tell(ctx, session, held.address, row.id, "cut", "No cut needed", NOT_NEEDED, now)
        return finish(ctx, session, row, "rejected", "cut: dealt already", game_id=game_row.id)
    move = cutting.play_cut(ctx, session, known, mail.message_id)
    cutting.answer_cut(ctx, session, move, row.id, now)
    status, reason, applied = cutting.verdict(move)
    return finish(
        ctx,
        session,
        row,
        status,
        reason,
        sender=held.address,
        game_id=game_row.id,
        applied=applied,
    )


SECOND_CUT_WORDS = "You have cut already; your first cut counts."
CLOSED = "Your invitations are closed (declined, withdrawn or lapsed): there is no game to cut for."


def challenge_game(session: Session, address: str, seed: str) -> m.Game | None:
    """The game of ``address``'s challenge whose server seed is ``seed`` (None: not
    started, or no longer waiting)."""
    if not seed:
        return None
    want = commitment(seed)
    rows = session.exec(
        select(m.Game)
        .join(m.Seat, col(m.Seat.game_id) == col(m.Game.id))
        .join(m.Player, col(m.Player.id) == col(m.Seat.player_id))
        .where(m.Player.email == address, m.Game.commitment == want)
    ).all()
    return rows[0] if rows else None
