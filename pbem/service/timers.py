"""timers: reminders for slow players, the timeout rule (forfeit, or the computer
moves for them) once a game's deadline has passed — except while a player to move is
away (``away 5 days``): their clocks then run from their return — the expiry of
invitations nobody answered (the lobby's challenges), and the daily digests
(`pbem.service.send.digest`).

A player's clocks run from the delivery of their turn mail (in a fair game's cut phase,
of their cut request): while it is not delivered (the relay refuses it for now), or once
it failed for good, no reminder, timeout or cut abort falls due — the clocks move along
(`pbem.store.delivery`). A seat whose mail failed for good makes its game wait, and the
other players are told once (`tell_waiting`); ``pbem status`` tells the admin.

Reminders and timeouts are counted for the monitoring (`pbem.store.counts`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, col, select

from engine import Game, Resign, action_to_json, computer, player_view
from engine.audit import TIMEOUT_LEVEL
from pbem.render import Notice, render_reminder
from pbem.service import policy
from pbem.service.context import (
    Context,
    Seated,
    is_computer,
    load_game,
    public_name,
    seats_of,
)
from pbem.service.game.away import clock_start
from pbem.service.handle.invitations import PENDING, group, lapse, tell
from pbem.service.ops import cutting, matches, play
from pbem.service.send import answers, envelope, turns
from pbem.service.send.digest import send_digests
from pbem.store import models as m
from pbem.store._sql import update_row
from pbem.store.counts import REMINDERS, TIMEOUTS, count_event
from pbem.store.db import session_scope
from pbem.store.delivery import postpone_clocks, waiting_mail
from pbem.store.games import mark_aborted
from pbem.store.players import get_player

log = logging.getLogger("pbem.timers")


def run_timers(ctx: Context) -> int:
    """Reminders for slow players and the timeout rule. Returns the number of games touched."""
    from pbem.store.games import stalled_games

    now = ctx.clock()
    touched = 0
    with session_scope(ctx.db) as session:
        touched += expire_invitations(ctx, session, now)
        touched += send_digests(ctx, session, now)
        touched += tell_waiting(ctx, session, now)
        for game_row in stalled_games(session, now):
            if game_row.status == m.GameStatus.CUTTING.value and game_row.id is not None:
                if waiting_for_cut_requests(session, game_row):
                    # A cut request to a player who has not cut is not delivered (or
                    # failed for good): the cut clocks start when it is.
                    postpone_clocks(session, game_row, now)
                    touched += 1
                    continue
                touched += cut_timers(ctx, session, game_row, now)
                continue
            if game_row.status != m.GameStatus.ACTIVE.value or game_row.id is None:
                continue
            game = load_game(ctx, session, game_row)
            seats = seats_of(session, game_row.id)
            to_move = [seats[s].seat for s in game.to_act() if s < len(seats)]
            if waiting_mail(session, game_row, to_move):
                # The turn mail of a player to move is not delivered (or failed for
                # good): their clocks start when it is.
                postpone_clocks(session, game_row, now)
                touched += 1
                continue
            back = clock_start(game, seats, now)
            if back > now:
                # A player to move is away: their clocks start when they are back.
                wait_for_return(ctx, session, game_row, back)
                touched += 1
                continue
            if game_row.deadline_at is not None and game_row.deadline_at <= now:
                touched += timeout(ctx, session, game_row, game, seats, now)
            elif game_row.next_reminder_at is not None and game_row.next_reminder_at <= now:
                waited = now - game_row.last_move_at
                for seat in game.to_act():
                    seated = seats[seat]
                    view = player_view(game, seat, len(game.events))
                    about = turns.mail_context(
                        game_row,
                        seats,
                        seat,
                        [],
                        len(game.events),
                        reply_to=envelope.seat_reply_to(ctx, seated),
                    )
                    mail = render_reminder(view, about, duration(waited))
                    envelope.enqueue(
                        ctx,
                        session,
                        game_row,
                        seated,
                        mail,
                        "reminder",
                        f"m{game_row.reminders_sent}-{game_row.action_count}",
                        now,
                        view_json=view.to_json(),
                        unsolicited=True,
                    )
                game_row.reminders_sent += 1
                game_row.next_reminder_at = now + timedelta(hours=ctx.settings.reminder_hours)
                session.add(game_row)
                count_event(session, REMINDERS)
                touched += 1
    return touched


def waiting_for_cut_requests(session: Session, game_row: m.Game) -> bool:
    """Whether a fair game waiting for its cuts waits for the cut request of a player who
    has not cut: not delivered yet, or failed for good (`pbem.store.delivery`)."""
    assert game_row.id is not None
    seats = seats_of(session, game_row.id)
    pending = [seats[s] for s in cutting.waiting(game_row) if s < len(seats)]
    return waiting_mail(
        session, game_row, [s.seat for s in pending], {s.player.email for s in pending}
    )


def cut_timers(ctx: Context, session: Session, game_row: m.Game, now: datetime) -> int:
    """A fair game still waiting for its cuts: remind those who have not cut, or abort
    it once its deadline has passed (the timeout rule cannot move for a seat that has
    no cards)."""

    assert game_row.id is not None
    seats = seats_of(session, game_row.id)
    if game_row.deadline_at is not None and game_row.deadline_at <= now:
        if ctx.settings.timeout_action == "none":
            update_row(session, game_row, deadline_at=None)
            return 0
        cutting.time_out(ctx, session, game_row, seats, now)
        count_event(session, TIMEOUTS)
        return 1
    if game_row.next_reminder_at is not None and game_row.next_reminder_at <= now:
        cutting.remind(ctx, session, game_row, seats, duration(now - game_row.last_move_at), now)
        update_row(
            session,
            game_row,
            reminders_sent=game_row.reminders_sent + 1,
            next_reminder_at=now + timedelta(hours=ctx.settings.reminder_hours),
        )
        count_event(session, REMINDERS)
        return 1
    return 0


def tell_waiting(ctx: Context, session: Session, now: datetime) -> int:
    """Tell the other players of each game in progress whose seat's turn mail failed for
    good (once per failure) that the game waits for that player, its clocks stopped; and,
    once a mail to that seat got through, that the game goes on. Through
    `envelope.enqueue`, so the policy is asked (they are seated players: the game's mail);
    the player whose mail fails is not mailed about it. Returns the games told about."""
    failed = _seats_of_games_in_progress(
        session, col(m.Seat.mail_failed_at).is_not(None), col(m.Seat.mail_failed_told).is_(None)
    )
    through = _seats_of_games_in_progress(
        session, col(m.Seat.mail_failed_told).is_(True), col(m.Seat.mail_failed_at).is_(None)
    )
    for seat in failed:
        cut = _cutting(session, seat)
        log.warning(
            "game %s waits: the %s to seat %s failed for good (pbem outbox list "
            "--status failed; pbem outbox retry once the address is fixed)",
            seat.game_id,
            "cut request" if cut else "turn mail",
            seat.seat,
        )
        told = tell_others(
            ctx,
            session,
            seat,
            (
                "The mail asking {name} to cut for the deal"
                if cut
                else "The mail telling {name} it is their turn"
            )
            + " could not be delivered: the game waits for them, with their clock stopped, "
            "until their mail gets through. The service's admin has been told.",
            f"f{seat.seat}-{now:%Y%m%d%H%M%S%f}",
            now,
        )
        update_row(session, seat, mail_failed_told=told > 0)
    for seat in through:
        log.info("game %s goes on: mail to seat %s got through", seat.game_id, seat.seat)
        tell_others(
            ctx,
            session,
            seat,
            "{name}'s mail gets through again: the game goes on, their clock running from "
            "the delivery of their turn mail.",
            f"g{seat.seat}-{now:%Y%m%d%H%M%S%f}",
            now,
        )
        update_row(session, seat, mail_failed_told=None)
    return len(failed) + len(through)


def _cutting(session: Session, seat: m.Seat) -> bool:
    """Whether ``seat``'s game is not dealt yet (it waits for its cuts)."""
    game_row = session.get(m.Game, seat.game_id)
    return game_row is not None and game_row.seed is None


IN_PROGRESS = (m.GameStatus.ACTIVE.value, m.GameStatus.PAUSED.value, m.GameStatus.CUTTING.value)
"""The games that wait for a seat whose mail failed for good: in play, paused, or
waiting for their cuts."""


def _seats_of_games_in_progress(session: Session, *where: Any) -> Sequence[m.Seat]:
    """The seats meeting ``where`` of games in progress (`IN_PROGRESS`), in seat id
    order: read from the games in progress (by the index of their status, which SQLite
    keeps to with statistics too, `pbem.run.due`), never from the history's seats."""
    in_progress = select(m.Game.id).where(col(m.Game.status).in_(IN_PROGRESS))
    return session.exec(
        select(m.Seat).where(*where, col(m.Seat.game_id).in_(in_progress)).order_by(col(m.Seat.id))
    ).all()


def tell_others(
    ctx: Context, session: Session, about_seat: m.Seat, said: str, tag: str, now: datetime
) -> int:
    """A status mail with ``said`` (``{name}``: the seat's player, by their public name)
    to each other player of ``about_seat``'s game whose own mail gets through (and who
    may be mailed: `envelope.enqueue`); returns how many were queued."""
    game_row = session.get(m.Game, about_seat.game_id)
    assert game_row is not None and game_row.id is not None
    seats = seats_of(session, game_row.id)
    name = public_name(seats[about_seat.seat].player)
    if game_row.seed is None:  # not dealt yet (cutting): no game to show
        return cutting.tell_others(
            ctx, session, game_row, seats, about_seat.seat, said.format(name=name), tag, now
        )
    game = load_game(ctx, session, game_row)
    return answers.tell_others(
        ctx, session, game_row, game, seats, about_seat.seat, [said.format(name=name)], tag, now
    )


def wait_for_return(ctx: Context, session: Session, game_row: m.Game, back: datetime) -> None:
    """Move a game's due reminder and deadline to run from ``back``, when the player to
    move returns."""
    changes: dict[str, Any] = {}
    if game_row.next_reminder_at is not None:
        later = back + timedelta(hours=ctx.settings.reminder_hours)
        changes["next_reminder_at"] = max(game_row.next_reminder_at, later)
    if game_row.deadline_at is not None:
        later = back + timedelta(days=ctx.settings.timeout_days)
        changes["deadline_at"] = max(game_row.deadline_at, later)
    update_row(session, game_row, **changes)


def timeout(
    ctx: Context, session: Session, game_row: m.Game, game: Game, seats: list[Seated], now: datetime
) -> int:
    assert game_row.id is not None
    if not any(s.seat.joined for s in seats if not is_computer(game_row, s.seat.seat)):
        # Started in the name of someone who never answered its mail (a From alone can
        # be forged): dropped quietly, nobody mailed.
        reason = "nobody joined the game: its player never answered its mail"
        mark_aborted(session, game_row, reason, now)
        count_event(session, TIMEOUTS)
        return 1
    action_kind = ctx.settings.timeout_action
    if action_kind == "none":
        game_row.deadline_at = None
        session.add(game_row)
        return 0
    since = len(game.events)
    new_actions: list[tuple[int | None, dict[str, Any], bool]] = []
    made: list[list[int]] = []
    for seat in game.to_act():
        if game.is_over:
            break
        if action_kind == "forfeit":
            action: Any = Resign(seat, "timeout")
        else:
            view = computer.computer_view(game, seat)
            action = computer.computer_move(view, TIMEOUT_LEVEL)
            made.append([len(game.actions) + 1, seat])  # its number in the archive
        game.apply(action)
        new_actions.append((seat, action_to_json(action), True))
    new_actions.extend(play.auto_moves(game, game_row))
    if not new_actions:
        return 0
    if made:
        # The archive lists them (``timeouts``): its audit re-derives them as it does the
        # computer seats' moves (`engine.audit`).
        earlier = list(game_row.settings.get("timeouts", []))
        update_row(session, game_row, settings={**game_row.settings, "timeouts": earlier + made})
    play.log_moves(ctx, session, game_row, game, new_actions, None, now, seats)
    count_event(session, TIMEOUTS)
    note = Notice(
        "info",
        "",
        "A player ran out of time: "
        + (
            "the game is forfeited." if action_kind == "forfeit" else "the computer moved for them."
        ),
    )
    turns.turn_mails(
        ctx, session, game_row, game, seats, since, {s.seat.seat: [note] for s in seats}, None, now
    )
    if game.is_over:
        matches.after_game(ctx, session, game_row, game, now)
    return 1


def duration(delta: timedelta) -> str:
    hours = delta.total_seconds() / 3600
    if hours < 48:
        return f"{hours:.0f} hours"
    return f"{hours / 24:.0f} days"


def expire_invitations(ctx: Context, session: Session, now: datetime) -> int:
    """Expire unanswered invitations past their time; tell each challenger once per
    challenge. Returns the number of invitations expired."""
    lapsed = session.exec(
        select(m.Invitation)
        .where(m.Invitation.status == PENDING, col(m.Invitation.expires_at) <= now)
        .order_by(col(m.Invitation.id))
        .with_for_update()
    ).all()
    told: set[int | None] = set()
    for invitation in lapsed:
        invitation.status = m.InvitationStatus.EXPIRED.value
        session.add(invitation)
        # An invitation left unanswered: no other for the quiet period, from anyone.
        policy.suppress(
            ctx, session, invitation.invitee, "lapsed", now, days=ctx.settings.invitation_quiet_days
        )
        if invitation.inbound_id in told:
            continue
        told.add(invitation.inbound_id)
        lapse(session, invitation, now)
        for other in group(session, invitation):
            if other.status == m.InvitationStatus.ACCEPTED.value:
                other.status = m.InvitationStatus.CANCELLED.value
                session.add(other)
        challenger = get_player(session, invitation.challenger_id)
        if challenger is not None:
            lapsed_here = [i.invitee for i in lapsed if i.inbound_id == invitation.inbound_id]
            tell(
                ctx,
                session,
                challenger.email,
                invitation.inbound_id or 0,
                "invite-expired",
                "Invitation expired",
                f"Nobody answered for {ctx.settings.invitation_days:g} days: the invitation "
                f"to {', '.join(lapsed_here)} expired, and the game is off.",
                now,
            )
    return len(lapsed)
