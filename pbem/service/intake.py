"""intake: a stored message → a known sender and game, or its final state.

In order: read the mail; drop machines (bounces — counted on the players they name —,
auto-replies, loops) and mail with no sender; answer "too large"; drop a sender over
the hourly cap; then who is this: the reply token names a game and a seat, and the From
must be that seat's player (or the same mailbox with another +tag, by the
`match_plus_tags` setting), vouched for by a trusted server's DMARC verdict when one is
configured. A known player's mail that names no game is routed to their only game, or
answered with their games ("Which game?", or help). Unknown senders get no reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlmodel import Session

from pbem.commands import GAME_VERBS, SETTING_VERBS, Parsed, parse_lobby, parse_reply
from pbem.mail.address import without_tag
from pbem.mail.autoreply import AutoKind, BounceInfo
from pbem.mail.reading import IncomingMail, read_message, reply_subject
from pbem.mail.tokens import find_tokens, reply_address
from pbem.render import GameLine, Notice, render_help_games, render_which_game
from pbem.service import confirm, invitations, lobby, notify, observe, policy, watch
from pbem.service.context import (
    Context,
    Outcome,
    Proof,
    Seated,
    Table,
    finish,
    load_game,
    seats_of,
)
from pbem.service.play import Known
from pbem.service.settings import apply_setting
from pbem.store import models as m
from pbem.store._sql import is_postgresql, update_row
from pbem.store.delivery import fail_bounced
from pbem.store.games import games_for_player, table_by_token, tables_by_tokens
from pbem.store.inbound import count_recent_from, count_recent_many
from pbem.store.outbox import sent_recipients
from pbem.store.players import get_player_by_email, record_bounce


def identify(ctx: Context, session: Session, row: m.Inbound, now: datetime) -> Known | Outcome:
    """Who wrote ``row``, for which game, and what they ask — or the message's final
    state when it goes no further (a machine, too large, too many, an unknown or
    unproven sender, a mail that named no game: answered or not, as the case asks)."""
    assert row.id is not None
    mail = ctx.mails.pop(row.id, None) if ctx.mails is not None else None
    if mail is None:
        mail = read_message(
            row.raw,
            our_addresses={ctx.settings.address},
            loop_value=ctx.settings.loop_value,
        )
    sender = mail.sender
    if mail.auto is not None:
        reason = f"{mail.auto.value}: {mail.auto_reason}"
        if mail.auto == AutoKind.BOUNCE and mail.bounce is not None:
            reason += record_bounces(ctx, session, mail.bounce, reason, now)
        return finish(ctx, session, row, "ignored", reason, sender=sender)
    if not sender:
        return finish(ctx, session, row, "ignored", mail.problem or "no sender address")
    if policy.is_service_mailbox(ctx, sender):
        # Its own address or a computer seat's: never a person, never answered.
        return finish(ctx, session, row, "ignored", "From the service's own address", sender=sender)
    if ctx.settings.trusted_authserv_id:
        # The trusted server's verdict counts for every mail: without its pass the From
        # may be forged, and nothing is done or answered.
        vouched = policy.prove(ctx, mail, None)
        if vouched.proof == Proof.NONE:
            ctx.senders[row.id] = vouched
            return finish(
                ctx,
                session,
                row,
                "rejected",
                f"{vouched.how}: nothing done, no reply",
                sender=sender,
            )
    if row.source.endswith(":oversize") or len(row.raw) > ctx.settings.max_message_bytes:
        ctx.senders[row.id] = policy.prove(ctx, mail, None)
        player = get_player_by_email(session, sender)
        if player is not None:
            limit = ctx.settings.max_message_bytes // 1000
            notify.error_reply(
                ctx,
                session,
                player,
                row.id,
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
                now,
                answering=mail.message_id,
            )
        return finish(
            ctx,
            session,
            row,
            "rejected" if player else "ignored",
            "message too large",
            sender=sender,
        )
    if over_rate(ctx, session, sender, row.id, now):
        return finish(
            ctx,
            session,
            row,
            "ignored",
            f"more than {ctx.settings.max_per_sender_per_hour} mails from this sender in an hour",
            sender=sender,
        )
    table = authenticate(ctx, session, mail)
    tokenless = table is None
    if table is None:
        player = get_player_by_email(session, sender)
        if player is None and ctx.settings.match_plus_tags and without_tag(sender) != sender:
            player = get_player_by_email(session, without_tag(sender))
        if player is not None and player.blocked:
            return finish(ctx, session, row, "ignored", "blocked address: no reply", sender=sender)
        tokens = find_tokens(mail, ctx.settings.local_part, ctx.settings.domain)
        invitation = invitations.invitation_for(session, tokens)
        if invitation is not None:
            ctx.senders[row.id] = policy.prove(ctx, mail, invitation.invitee)
            return invitations.answer(ctx, session, row, mail, invitation, now)
        request = confirm.confirmation_for(session, tokens)
        if request is not None:
            ctx.senders[row.id] = policy.prove(ctx, mail, request.address)
            confirmed = confirm.answer(ctx, session, row, mail, request, player, now)
            if isinstance(confirmed, Outcome):
                return confirmed
            return lobby.handle(ctx, session, row, confirmed.mail, player, confirmed.asked, now)
        ctx.senders[row.id] = policy.prove(ctx, mail, None)
        quieted = quieten(ctx, session, row, mail, player, now)
        if quieted is not None:
            return quieted
        if not tokens:
            asked = parse_lobby(mail.reply_text or "", reply_subject(mail.subject or ""))
            if asked is not None:
                return lobby.handle(ctx, session, row, mail, player, asked, now)
        if player is None and ctx.settings.lobby == "open" and not tokens:
            # Anyone may start here: one welcome (how to start), which the policy lets
            # go once per quiet period to a mailbox that never confirmed.
            sent = confirm.welcome(ctx, session, row, mail, now)
            return finish(
                ctx,
                session,
                row,
                "applied" if sent else "ignored",
                "open lobby: a stranger without a command: "
                + ("welcomed" if sent else "no welcome may go to this mailbox now"),
                sender=sender,
            )
        if player is None:
            # No backscatter: whatever it asks (help included), nobody is answered.
            return finish(
                ctx,
                session,
                row,
                "ignored",
                "unknown sender and no game token: no reply",
                sender=sender,
            )
        table_or_outcome = without_token(ctx, session, row, mail, player, now)
        if isinstance(table_or_outcome, Outcome):
            return table_or_outcome
        table = table_or_outcome
    else:
        game_row, seats, seat = table
        ctx.senders[row.id] = policy.prove(ctx, mail, seats[seat].player.email)
    game_row, seats, seat = table
    if seats[seat].player.blocked:
        return finish(
            ctx,
            session,
            row,
            "ignored",
            "blocked address: no reply",
            sender=sender,
            game_id=game_row.id,
        )
    seat_email = seats[seat].player.email
    if seat_email != sender and without_tag(seat_email) == without_tag(sender):
        # The same mailbox but for a +tag.
        if ctx.settings.match_plus_tags:
            sender = seat_email
        else:
            return tag_mismatch(ctx, session, row, mail, game_row, seats[seat], now)
    if seat_email != sender:
        player = get_player_by_email(session, sender)
        log_stray_cut(session, mail, game_row, seat, now, "not from the seat's player")
        if player is None:
            return finish(
                ctx,
                session,
                row,
                "ignored",
                f"token of game {game_row.id} used by unknown sender {sender}: no reply",
                sender=sender,
                game_id=game_row.id,
            )
        notify.error_reply(
            ctx,
            session,
            player,
            row.id,
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
            now,
            answering=mail.message_id,
        )
        return finish(
            ctx,
            session,
            row,
            "rejected",
            f"sender {sender} is not the player of the token's seat",
            sender=sender,
            game_id=game_row.id,
        )
    parsed = read_commands(mail)
    writer = ctx.senders[row.id]
    seated = seats[seat]
    decision = policy.decide(ctx, session, writer, "move", seat=seated.seat)
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
        tokenless=tokenless,
        inbound_id=row.id,
        message_id=mail.message_id,
    )


def quieten(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    player: m.Player | None,
    now: datetime,
) -> Outcome | None:
    """``never`` / ``unsubscribe`` from anyone, and ``stop`` from someone who is no
    player, to any address of the service that names no game: the mailbox goes on the
    suppression list (`pbem.service.policy.suppress`) and nothing is answered (it asked
    for no mail). None when the mail says none of these."""
    assert row.id is not None
    word = policy.quiet_word(mail)
    writer = ctx.senders[row.id]
    if word == "start" and policy.is_suppressed(session, mail.sender, now):
        # Mail again after "never": only the mailbox itself, proven, may ask for it.
        decision = policy.decide(ctx, session, writer, "unquieten")
        if decision.verdict == policy.Verdict.CONFIRM:
            return confirm.request(ctx, session, row, mail, "start", now)
        if not decision.allowed:
            return finish(ctx, session, row, "ignored", decision.reason, sender=mail.sender)
        policy.lift(ctx, session, mail.sender)
        return finish(ctx, session, row, "applied", "start: off the suppression list")
    if word not in policy.QUIETEN_VERBS and not (word == "stop" and player is None):
        return None
    decision = policy.decide(ctx, session, writer, "quieten")
    if not decision.allowed:
        return finish(ctx, session, row, "ignored", decision.reason, sender=mail.sender)
    policy.suppress(ctx, session, mail.sender, word, now, days=None)
    return finish(
        ctx,
        session,
        row,
        "applied",
        f"{word}: {writer.mailbox} gets no more mail it does not ask for; no reply",
        sender=mail.sender,
    )


def prefetch(ctx: Context, session: Session, rows: Sequence[m.Inbound]) -> None:
    """Read a batch's messages, and the tables their reply tokens name in one query."""
    ctx.mails = {
        row.id: read_message(
            row.raw,
            our_addresses={ctx.settings.address},
            loop_value=ctx.settings.loop_value,
        )
        for row in rows
        if row.id is not None
    }
    tokens = [
        token
        for mail in ctx.mails.values()
        for token in find_tokens(mail, ctx.settings.local_part, ctx.settings.domain)
    ]
    ctx.tables = tables_by_tokens(session, tokens)


def recent_counts(
    ctx: Context, session: Session, rows: Sequence[m.Inbound]
) -> dict[int, tuple[str, int]]:
    """For each message of a batch: its stored sender and what `over_rate` counts."""
    messages = [(row.id, row.sender) for row in rows if row.id is not None and row.sender]
    since = ctx.clock() - timedelta(hours=1)
    counts = count_recent_many(session, messages, since)
    return {inbound_id: (sender, counts[inbound_id]) for inbound_id, sender in messages}


def without_token(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    player: m.Player,
    now: datetime,
) -> Table | Outcome:
    """A known player's mail that named no game of theirs.

    A mail carrying no token at all (written to the plain service address) from a
    player with exactly one game in progress is that game's: its table is returned, to
    be checked and applied as if it carried the seat's token — unless it only asks
    for ``help``. Otherwise the player is answered with their games and their own
    reply address for each — with the command language when they asked for ``help`` —
    or, when it only sets the player's own settings (``mail``, ``name``, ``stop``,
    ``start``, ``away``, ``back``), they are applied and confirmed (the other players
    told of ``away`` / ``back``); and the outcome is returned.
    """
    assert row.id is not None and player.id is not None
    named_a_token = bool(find_tokens(mail, ctx.settings.local_part, ctx.settings.domain))
    games = [
        g
        for g in games_for_player(session, player.id)
        if g.status
        in (m.GameStatus.ACTIVE.value, m.GameStatus.PAUSED.value, m.GameStatus.CUTTING.value)
    ]
    parsed = read_commands(mail)
    verbs = {c.verb for c in parsed.commands}
    help_only = "help" in verbs and not verbs & set(GAME_VERBS)
    watched = observe.watched_reply(mail, ctx.settings.domain)
    if watched is not None and verbs & set(GAME_VERBS):
        # A move in answer to an observer mail: never applied, not even to a game of
        # the sender's own.
        return watch.refuse_move(ctx, session, row, mail, player, [watched], now)
    if len(games) == 1 and not named_a_token and not help_only:
        token = next(
            s.seat.token for s in seats_of(session, games[0].id or 0) if s.player.id == player.id
        )
        found = table_by_token(session, token, wait=ctx.deferred is None)
        if found is not None:
            game_row, seated, seat = found
            return game_row, [Seated(s, p) for s, p in seated], seat
    if verbs and verbs <= set(SETTING_VERBS):
        # Only the player's own settings: no game needed.
        decision = policy.decide(ctx, session, ctx.senders[row.id], "settings")
        if not decision.allowed:
            return finish(ctx, session, row, "ignored", decision.reason, sender=player.email)
        notices = [apply_setting(ctx, session, player, c, now) for c in parsed.commands]
        applied = [n.command for n in notices if n.status == "applied"]
        for cmd, notice in zip(parsed.commands, notices, strict=True):
            if notice.status == "applied" and cmd.verb in ("away", "back"):
                notify.tell_away(ctx, session, player, cmd.verb, f"w{row.id}", now)
        notify.error_reply(
            ctx,
            session,
            player,
            row.id,
            "settings",
            "Your settings",
            notices,
            now,
            answering=mail.message_id,
        )
        if applied:
            return finish(
                ctx, session, row, "applied", "settings: " + "; ".join(applied), sender=player.email
            )
        reason = "; ".join(f"{n.command}: {n.message}" for n in notices)
        return finish(ctx, session, row, "rejected", reason[:2000], sender=player.email)
    if not games and verbs & set(GAME_VERBS):
        watching = [g.id for g in watch.watching(session, player.id) if g.id is not None]
        if watching:
            return watch.refuse_move(ctx, session, row, mail, player, watching, now)
    lines = [game_line(ctx, session, g, player) for g in games]
    if "help" in verbs:
        sent = notify.answer(
            ctx, session, player, row.id, "help", render_help_games(lines), now, mail.message_id
        )
        why = (
            "sent: help (no game named)"
            if sent
            else "help: no answer may go now (repeat, or policy)"
        )
        return finish(ctx, session, row, "applied", why, sender=player.email)
    which = render_which_game(lines)
    notify.answer(ctx, session, player, row.id, "no-game", which, now, mail.message_id)
    return finish(ctx, session, row, "rejected", "no valid game token", sender=player.email)


def log_stray_cut(
    session: Session,
    mail: IncomingMail,
    game_row: m.Game,
    seat: int,
    now: datetime,
    reason: str,
) -> None:
    """A mail to ``seat``'s reply address that is not taken as the seat's: its cuts, if
    any, go on the game's record of cut mails, refused for ``reason``."""
    from pbem.service.cutting import refuse_cut

    for cmd in read_commands(mail).commands:
        if cmd.verb == "cut":
            refuse_cut(session, game_row, seat, cmd, mail.message_id, now, reason)


def game_line(ctx: Context, session: Session, game_row: m.Game, player: m.Player) -> GameLine:
    """A game in progress as ``player`` sees it from outside, with their reply address."""
    assert game_row.id is not None
    seats = seats_of(session, game_row.id)
    mine = next(s for s in seats if s.player.id == player.id)
    reply_to = reply_address(ctx.settings.local_part, mine.seat.token, ctx.settings.domain)
    others = tuple(s.name for s in seats if s is not mine)
    if game_row.seed is None:  # a fair game waiting for its cuts
        from pbem.service import cutting

        cutters = cutting.waiting(game_row)
        turn = (
            "your cut for the deal"
            if mine.seat.seat in cutters
            else f"waiting for {' and '.join(seats[s].name for s in cutters)} to cut"
        )
        return GameLine(game_id=game_row.id, opponents=others, turn=turn, reply_to=reply_to)
    game = load_game(ctx, session, game_row)
    if game_row.status == m.GameStatus.PAUSED.value:
        turn = "paused by the admin"
    elif mine.seat.seat in game.to_act():
        turn = f"your turn (hand {game.hand_no})"
    else:
        waiting = [seats[s].name for s in game.to_act()]
        turn = f"waiting for {' and '.join(waiting) or 'nobody'} (hand {game.hand_no})"
    info = game_row.match_info
    if info:
        turn += f"; match best of {info.get('best_of')}, game {info.get('game')}"
    return GameLine(
        game_id=game_row.id,
        opponents=tuple(s.name for s in seats if s is not mine),
        turn=turn,
        reply_to=reply_address(ctx.settings.local_part, mine.seat.token, ctx.settings.domain),
    )


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


def tag_mismatch(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    game_row: m.Game,
    seated: Seated,
    now: datetime,
) -> Outcome:
    """Refuse a reply from the seat's player's address with another +tag (the
    `match_plus_tags` setting is off), telling the sender: the same mailbox, so
    answering it mails nobody who did not write."""
    assert row.id is not None
    sender = mail.sender
    stand_in = m.Player(email=sender, display_name=seated.player.display_name, created_at=now)
    notify.error_reply(
        ctx,
        session,
        stand_in,
        row.id,
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
        now,
        answering=mail.message_id,
    )
    return finish(
        ctx,
        session,
        row,
        "rejected",
        f"sender {sender} is the seat's player {seated.player.email} with another "
        "+tag, and +tags do not match (match_plus_tags): told the sender",
        sender=sender,
        game_id=game_row.id,
    )


def over_rate(ctx: Context, session: Session, sender: str, inbound_id: int, now: datetime) -> bool:
    """Whether ``sender`` sent more than the hourly cap before this message (in a batch,
    counted for all its messages at once, in the hour before the batch began)."""
    counted = ctx.recent.get(inbound_id) if ctx.recent is not None else None
    if counted is not None and counted[0] == sender:
        count = counted[1]
    else:
        count = count_recent_from(session, sender, now - timedelta(hours=1), before=inbound_id)
    return count >= ctx.settings.max_per_sender_per_hour


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


def peek_headers(raw: bytes) -> tuple[str | None, str | None, str | None]:
    """Sender, subject and Message-ID from the header section only (cheap; never raises)."""
    from email.parser import BytesHeaderParser
    from email.policy import compat32

    from pbem.mail.address import from_mailbox
    from pbem.mail.decoding import decode_rfc2047

    try:
        headers = BytesHeaderParser(policy=compat32).parsebytes(raw)
        sender = from_mailbox([str(v) for v in headers.get_all("From", [])])[1] or None
        subject = decode_rfc2047(str(headers.get("Subject", "")))[:500] or None
        msg_id = str(headers.get("Message-ID", "")).strip() or None
    except Exception:
        return None, None, None
    return sender, subject, msg_id


def read_commands(mail: IncomingMail) -> Parsed:
    """The commands of a mail: its reply text's, or its subject's when the text holds
    none — never one of the service's own subjects (`pbem.commands.reads_subject`)."""
    return parse_reply(mail.reply_text or "", reply_subject(mail.subject or ""))
