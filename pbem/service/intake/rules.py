"""rules: the small named checks of intake's chain (`pbem.service.intake.chain.CHAIN`).

Each rule takes the `Arrival` (the stored message, its mail and what earlier rules found
out) and either passes it on (None) or ends it: an `Outcome` (the message's final state,
answered or not as the rule says) or — the last rule — a `Known` seat's mail for the
game. A rule asks `pbem.service.policy` wherever proof or consent is in question; it
never decides those itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlmodel import Session

from pbem.commands import parse_lobby
from pbem.mail.address import without_tag
from pbem.mail.autoreply import AutoKind
from pbem.mail.reading import IncomingMail, reply_subject
from pbem.mail.tokens import find_tokens
from pbem.render import Notice
from pbem.service import policy
from pbem.service.context import Context, Outcome, Proof, Seated, Table, finish, game_subject
from pbem.service.game import older
from pbem.service.game.deals import log_stray_cut
from pbem.service.handle import challenge, confirmations, invitations, lobby, plain
from pbem.service.intake.reading import authenticate, read_mail, record_bounces, sent_this_hour
from pbem.service.moves import Known, read_commands
from pbem.service.send import outside
from pbem.store import models as m
from pbem.store._sql import update_row
from pbem.store.inbound import mark_inbound, window_opens_at
from pbem.store.players import get_player_by_email


@dataclass
class Arrival:
    """A stored message on its way down the chain, and what the rules found out so far."""

    ctx: Context
    session: Session
    row: m.Inbound
    mail: IncomingMail
    now: datetime
    # The From's player (a mail that names no seat), by its address or without its +tag.
    player: m.Player | None = None
    # The reply tokens of ours the mail carries, and what they name (`what_it_names`).
    tokens: list[str] = field(default_factory=list)
    table: Table | None = None
    invitation: m.Invitation | None = None
    confirmation: m.Confirmation | None = None
    # Written to the plain address and taken as the player's only game's (`no_game`).
    tokenless: bool = False

    @property
    def inbound_id(self) -> int:
        assert self.row.id is not None
        return self.row.id

    @property
    def sender(self) -> str:
        return self.mail.sender

    @property
    def names(self) -> str:
        """What the mail's reply token names: a seat, an invitation, a confirmation, or
        nothing (written to the plain address)."""
        if self.table is not None:
            return "seat"
        if self.invitation is not None:
            return "invitation"
        if self.confirmation is not None:
            return "confirmation"
        return "nothing"

    def end(self, status: str, reason: str, *, game_id: int | None = None) -> Outcome:
        """The message's final state, from the rule that ends it."""
        return finish(
            self.ctx, self.session, self.row, status, reason, sender=self.sender, game_id=game_id
        )


def arrive(ctx: Context, session: Session, row: m.Inbound, now: datetime) -> Arrival:
    """The stored message ``row``, read, at the top of the chain."""
    return Arrival(ctx, session, row, read_mail(ctx, row), now)


def machine_mail(a: Arrival) -> Outcome | None:
    """A bounce (counted on the players it names), an auto-reply or a loop, or a mail
    with no sender: never a person's, never answered."""
    mail = a.mail
    if mail.auto is not None:
        reason = f"{mail.auto.value}: {mail.auto_reason}"
        if mail.auto == AutoKind.BOUNCE and mail.bounce is not None:
            reason += record_bounces(a.ctx, a.session, mail.bounce, reason, a.now)
        return a.end("ignored", reason)
    if not mail.sender:
        return finish(a.ctx, a.session, a.row, "ignored", mail.problem or "no sender address")
    return None


def own_address(a: Arrival) -> Outcome | None:
    """From the service's own address or a computer seat's: never a person, never
    answered."""
    if policy.is_service_mailbox(a.ctx, a.sender):
        return a.end("ignored", "From the service's own address")
    return None


def trusted_verdict(a: Arrival) -> Outcome | None:
    """With a trusted server named (``trusted_authserv_id``), its verdict counts for
    every mail: without its pass the From may be forged, and nothing is done or
    answered."""
    if not a.ctx.settings.trusted_authserv_id:
        return None
    vouched = policy.prove(a.ctx, a.mail, None)
    if vouched.proof != Proof.NONE:
        return None
    a.ctx.senders[a.inbound_id] = vouched
    return a.end("rejected", f"{vouched.how}: nothing done, no reply")


def size(a: Arrival) -> Outcome | None:
    """Mail over ``max_message_bytes`` is not read; a known player is told."""
    ctx, row = a.ctx, a.row
    if not (row.source.endswith(":oversize") or len(row.raw) > ctx.settings.max_message_bytes):
        return None
    ctx.senders[a.inbound_id] = policy.prove(ctx, a.mail, None)
    player = get_player_by_email(a.session, a.sender)
    if player is not None:
        limit = ctx.settings.max_message_bytes // 1000
        outside.error_reply(
            ctx,
            a.session,
            player,
            a.inbound_id,
            "too-large",
            "Your mail was too large",
            [
                Notice(
                    "refused",
                    "",
                    f"Mail over {limit} kB is not read. Reply with "
                    "just your move, without attachments.",
                )
            ],
            a.now,
            answering=a.mail.message_id,
        )
    return a.end("rejected" if player else "ignored", "message too large")


def volume(a: Arrival) -> Outcome | None:
    """How much the sender wrote this hour (`pbem.service.policy.volume`): mail that
    proves nothing but its From is not read over ``max_per_sender_per_hour``; proven
    mail over ``max_proven_per_hour`` waits until the hour allows it (`delay`)."""
    ctx = a.ctx
    writer = ctx.senders[a.inbound_id]
    this_hour = sent_this_hour(ctx, a.session, a.sender, a.inbound_id, a.now)
    verdict = policy.volume(ctx, writer, this_hour)
    if verdict == policy.Verdict.ALLOW:
        return None
    if verdict == policy.Verdict.DELAY:
        return delay(a, this_hour)
    limit = ctx.settings.max_per_sender_per_hour
    return a.end("ignored", f"more than {limit} unproven mails from this sender in an hour")


def delay(a: Arrival, this_hour: int) -> Outcome:
    """A proven mail over the hourly volume: left pending until as many of the hour's
    mails have left the window as it is over, and its sender told once (identical
    answers within the throttle window are not repeated)."""
    ctx, session = a.ctx, a.session
    limit = ctx.settings.max_proven_per_hour
    hour = timedelta(hours=1)
    opens = window_opens_at(
        session, a.sender, a.now - hour, before=a.inbound_id, leaving=this_hour - limit + 1
    )
    until = max(a.now + timedelta(seconds=1), (opens + hour) if opens else a.now + hour)
    player = a.player if a.table is None else a.table[1][a.table[2]].player
    if player is None:
        player = get_player_by_email(session, a.sender) or m.Player(
            email=a.sender, created_at=a.now
        )
    outside.error_reply(
        ctx,
        session,
        player,
        a.inbound_id,
        "volume",
        "Your mails wait a little",
        [
            Notice(
                "info",
                "",
                f"You sent more than {limit} mails within an hour. The rest wait and are "
                "read in turn as the hour allows: none is lost, and you need not send "
                "them again.",
            )
        ],
        a.now,
        answering=a.mail.message_id,
    )
    reason = f"over {limit} proven mails in an hour: waits until {until:%Y-%m-%d %H:%M:%S}"
    mark_inbound(
        session, a.row, "pending", reason, now=ctx.clock(), rule=ctx.rule, not_before=until
    )
    return Outcome("pending", reason)


def what_it_names(a: Arrival) -> None:
    """Read what the mail's reply token names — a seat, an invitation, a confirmation,
    or nothing — and how well the mail proves its From against the address that token
    was mailed to (`pbem.service.policy.prove`). Passes every mail on."""
    ctx, session = a.ctx, a.session
    a.table = authenticate(ctx, session, a.mail)
    if a.table is not None:
        _, seats, seat = a.table
        ctx.senders[a.inbound_id] = policy.prove(ctx, a.mail, seats[seat].player.email)
        return
    sender = a.sender
    a.player = get_player_by_email(session, sender)
    if a.player is None and ctx.settings.match_plus_tags and without_tag(sender) != sender:
        a.player = get_player_by_email(session, without_tag(sender))
    a.tokens = find_tokens(a.mail, ctx.settings.local_part, ctx.settings.domain)
    a.invitation = invitations.invitation_for(session, a.tokens)
    if a.invitation is None:
        a.confirmation = confirmations.confirmation_for(session, a.tokens)
    owner = (
        a.invitation.invitee
        if a.invitation is not None
        else a.confirmation.address
        if a.confirmation is not None
        else None
    )
    ctx.senders[a.inbound_id] = policy.prove(ctx, a.mail, owner)


def blocked(a: Arrival) -> Outcome | None:
    """A blocked address (the admin's ``players block``) gets nothing done and no reply."""
    if a.table is not None:
        game_row, seats, seat = a.table
        if seats[seat].player.blocked:
            return a.end("ignored", "blocked address: no reply", game_id=game_row.id)
    elif a.player is not None and a.player.blocked:
        return a.end("ignored", "blocked address: no reply")
    return None


def invitation_answer(a: Arrival) -> Outcome | None:
    """An answer to an invitation (`pbem.service.handle.invitations.answer`)."""
    assert a.invitation is not None
    return invitations.answer(a.ctx, a.session, a.row, a.mail, a.invitation, a.now)


def confirmation_answer(a: Arrival) -> Outcome | None:
    """An answer to a confirmation request: what was held is done
    (`pbem.service.handle.confirmations.answer`), then read as a lobby command."""
    assert a.confirmation is not None
    confirmed = confirmations.answer(
        a.ctx, a.session, a.row, a.mail, a.confirmation, a.player, a.now
    )
    if isinstance(confirmed, Outcome):
        return confirmed
    if isinstance(confirmed, confirmations.Cut):
        # The challenger's cut for the game of their invitations.
        return challenge.challenger_cut(
            a.ctx, a.session, a.row, a.mail, confirmed.held, confirmed.cut, a.now
        )
    if isinstance(confirmed, confirmations.Proven):
        # A player's held mail (a move, a setting), now proven: read again as it was
        # written, by the rules that follow (its game's seat, or the player's settings).
        a.mail = confirmed.mail
        sender = a.mail.sender
        player = get_player_by_email(a.session, sender)
        if player is None and a.ctx.settings.match_plus_tags and without_tag(sender) != sender:
            player = get_player_by_email(a.session, without_tag(sender))
        if player is None:
            return a.end("ignored", "the confirmed mail's sender plays no more")
        found = plain.without_token(a.ctx, a.session, a.row, a.mail, player, a.now)
        if isinstance(found, Outcome):
            return found
        a.table, a.tokenless = found, True
        return None
    return lobby.handle(
        a.ctx, a.session, a.row, confirmed.mail, a.player, confirmed.asked, a.now, confirmed.offer
    )


def quieten(a: Arrival) -> Outcome | None:
    """``never`` / ``unsubscribe`` from anyone, and ``stop`` from someone who is no
    player, to an address of the service that names no game: the mailbox goes on the
    suppression list (`pbem.service.policy.suppress`) and nothing is answered (it asked
    for no mail); ``start`` from a suppressed mailbox, proven, takes it off."""
    ctx, session, row, mail, now = a.ctx, a.session, a.row, a.mail, a.now
    word = policy.quiet_word(mail)
    writer = ctx.senders[a.inbound_id]
    if word == "start" and policy.is_suppressed(session, mail.sender, now):
        # Mail again after "never": only the mailbox itself, proven, may ask for it.
        decision = policy.decide(ctx, session, writer, "unquieten")
        if decision.verdict == policy.Verdict.CONFIRM:
            return confirmations.request(ctx, session, row, mail, "start", now, asked="start")
        if not decision.allowed:
            return a.end("ignored", decision.reason)
        policy.lift(ctx, session, mail.sender)
        return finish(ctx, session, row, "applied", "start: off the suppression list")
    if word not in policy.QUIETEN_VERBS and not (word == "stop" and a.player is None):
        return None
    decision = policy.decide(ctx, session, writer, "quieten")
    if decision.verdict == policy.Verdict.CONFIRM:
        # Anyone can write any From: the mailbox itself confirms before it is silenced.
        return confirmations.request(ctx, session, row, mail, word, now, asked=word)
    if not decision.allowed:
        return a.end("ignored", decision.reason)
    policy.suppress(ctx, session, mail.sender, word, now, days=None)
    return a.end(
        "applied", f"{word}: {writer.mailbox} gets no more mail it does not ask for; no reply"
    )


def lobby_command(a: Arrival) -> Outcome | None:
    """A lobby command (``new``, ``challenge``, ``games``, ``watch`` …) to the plain
    address (`pbem.service.handle.lobby`)."""
    if a.tokens:
        return None
    asked = parse_lobby(a.mail.reply_text or "", reply_subject(a.mail.subject or ""))
    if asked is None:
        return None
    return lobby.handle(a.ctx, a.session, a.row, a.mail, a.player, asked, a.now)


def stranger(a: Arrival) -> Outcome | None:
    """Someone who is no player and named no game: in an open lobby one welcome (how to
    start, which the policy lets go once per quiet period to a mailbox that never
    confirmed); otherwise nothing — whatever it asks, help included: no backscatter."""
    if a.player is not None:
        return None
    if a.ctx.settings.lobby == "open" and not a.tokens:
        sent = confirmations.welcome(a.ctx, a.session, a.row, a.mail, a.now)
        return a.end(
            "applied" if sent else "ignored",
            "open lobby: a stranger without a command: "
            + ("welcomed" if sent else "no welcome may go to this mailbox now"),
        )
    return a.end("ignored", "unknown sender and no game token: no reply")


def no_game(a: Arrival) -> Outcome | None:
    """A known player's mail that named no game of theirs: their only game's when they
    have one (then read as that seat's), else their settings or "Which game?"
    (`pbem.service.handle.plain`)."""
    assert a.player is not None
    found = plain.without_token(a.ctx, a.session, a.row, a.mail, a.player, a.now)
    if isinstance(found, Outcome):
        return found
    a.table, a.tokenless = found, True
    return None


def seat(a: Arrival) -> Known | Outcome:
    """The mail of a seat: from the seat's player (or the same mailbox with another
    +tag, by ``match_plus_tags``), and proven enough for a move (`policy.decide`). A
    proven mail joins the seat, confirms the mailbox and forgives its bounces."""
    assert a.table is not None
    ctx, session, row, mail, now = a.ctx, a.session, a.row, a.mail, a.now
    game_row, seats, seat = a.table
    sender = a.sender
    seat_email = seats[seat].player.email
    if seat_email != sender and without_tag(seat_email) == without_tag(sender):
        # The same mailbox but for a +tag.
        if ctx.settings.match_plus_tags:
            sender = seat_email
        else:
            return tag_mismatch(a, game_row, seats[seat])
    if seat_email != sender:
        return wrong_seat(a, game_row, seat)
    parsed = read_commands(mail, sent=game_subject(game_row, seats))
    writer = ctx.senders[a.inbound_id]
    seated = seats[seat]
    decision = policy.decide(ctx, session, writer, "move", seat=seated.seat)
    if decision.verdict == policy.Verdict.CONFIRM:
        # Written to the plain address: its From alone does not show who wrote. The
        # player confirms with one click, and the mail is done then (`confirmation_answer`).
        log_stray_cut(session, mail, game_row, seat, now, decision.reason)
        asked = "; ".join(str(c) for c in parsed.commands) or "(no command)"
        return confirmations.request(
            ctx,
            session,
            row,
            mail,
            "move",
            now,
            asked=f"game {game_row.id}: {asked}",
            game_id=game_row.id,
        )
    if not decision.allowed:
        # Not answered: its From may be forged.
        log_stray_cut(session, mail, game_row, seat, now, decision.reason)
        return finish(
            ctx, session, row, "ignored", decision.reason, sender=sender, game_id=game_row.id
        )
    if writer.proof >= Proof.TOKEN:
        # A proven mail of the seat's player: the seat is joined, the mailbox confirmed,
        # and its bounces so far forgiven.
        if not seated.seat.joined:
            update_row(session, seated.seat, joined=True)
            policy.confirm(ctx, session, writer, now)
        policy.reset_bounces(session, seated.player)
        if any(c.verb == "start" for c in parsed.commands):
            policy.lift(ctx, session, sender)  # back from "never", by a proven mail
    return Known(
        game_row,
        seats,
        seat,
        sender,
        parsed.commands,
        parsed.ignored,
        tokenless=a.tokenless,
        inbound_id=row.id,
        message_id=mail.message_id,
        answered_turn=older.answered_turn(mail, seated.seat.token, ctx.settings.domain),
    )


def wrong_seat(a: Arrival, game_row: m.Game, seat: int) -> Outcome:
    """A seat's reply address used by someone else: a known player is told it was not
    their reply address; an unknown sender gets nothing."""
    ctx, session, sender = a.ctx, a.session, a.sender
    player = get_player_by_email(session, sender)
    log_stray_cut(session, a.mail, game_row, seat, a.now, "not from the seat's player")
    if player is None:
        return a.end(
            "ignored",
            f"token of game {game_row.id} used by unknown sender {sender}: no reply",
            game_id=game_row.id,
        )
    outside.error_reply(
        ctx,
        session,
        player,
        a.inbound_id,
        "wrong-seat",
        "Not your reply address",
        [
            Notice(
                "refused",
                "",
                "This mail answered an email addressed to another "
                "player, so no move was made. Reply to your own game email.",
            )
        ],
        a.now,
        answering=a.mail.message_id,
    )
    return a.end(
        "rejected",
        f"sender {sender} is not the player of the token's seat",
        game_id=game_row.id,
    )


def tag_mismatch(a: Arrival, game_row: m.Game, seated: Seated) -> Outcome:
    """Refuse a reply from the seat's player's address with another +tag (the
    `match_plus_tags` setting is off), telling the sender: the same mailbox, so
    answering it mails nobody who did not write."""
    sender = a.sender
    stand_in = m.Player(email=sender, display_name=seated.player.display_name, created_at=a.now)
    outside.error_reply(
        a.ctx,
        a.session,
        stand_in,
        a.inbound_id,
        "plus-tag",
        "Not your game address",
        [
            Notice(
                "refused",
                "",
                f"This mail came from {sender}, but you play game {game_row.id} as "
                f"{seated.player.email}, so no move was made. Reply from "
                f"{seated.player.email}.",
            )
        ],
        a.now,
        answering=a.mail.message_id,
    )
    return a.end(
        "rejected",
        f"sender {sender} is the seat's player {seated.player.email} with another "
        "+tag, and +tags do not match (match_plus_tags): told the sender",
        game_id=game_row.id,
    )
