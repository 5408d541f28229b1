"""digest: one mail a day to each player in digest mode (``digest``), listing their games
in progress — those waiting on them first — with their reply address for each.

Run by the timers (`pbem.service.timers.run_timers`) at every step of the daemon: from
the ``digest_hour`` setting (UTC) on, each player in digest mode whose digest of the day
has not gone gets it. Exactly once a day, even with several workers: the day is claimed
with one conditional UPDATE of the player's row (``digest_day`` before today → today), in
the transaction that queues the mail, so a second worker's UPDATE waits for the first to
commit and then finds the day taken. A player who sent ``stop``, or is blocked, gets no
digest; one with no game in progress neither (the day is still claimed).

While in digest mode a player gets no turn mail for moves while it is not their turn
(`pbem.service.send.turns.turn_mails`): the news is told in the game's next mail, when it
becomes their turn. Their turn's mail, the game-over mail, and the answers to their own
mail still go at once. Turning digest mode on takes the day's digest as sent
(`start_digests`): the first comes the next day, never at once on top of the answer.
A digest's ``List-Unsubscribe`` sends ``stop``: unsubscribing means less mail.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import or_, update
from sqlmodel import Session, col, select

from pbem.mail.compose import compose
from pbem.render.games import GameLine, render_digest
from pbem.service import policy
from pbem.service.context import Context, display_name
from pbem.service.game.lines import game_line
from pbem.store import models as m
from pbem.store.games import games_for_player
from pbem.store.outbox import outbox_row, queue_mails

IN_PROGRESS = (m.GameStatus.ACTIVE.value, m.GameStatus.PAUSED.value)


def digest_due(hour: int, now: datetime) -> datetime:
    """When the next digests are due: today at ``hour`` (the ``digest_hour`` setting,
    UTC), or tomorrow's when that has passed."""
    today = now.replace(hour=hour, minute=0, second=0, microsecond=0)
    return today if now < today else today + timedelta(days=1)


def send_digests(ctx: Context, session: Session, now: datetime) -> int:
    """The day's digests not sent yet, once ``digest_hour`` has come; how many went."""
    if now.hour < ctx.settings.digest_hour:
        return 0
    day = now.date().isoformat()
    due = session.exec(
        select(m.Player.id).where(
            col(m.Player.digest).is_(True),
            or_(col(m.Player.digest_day).is_(None), col(m.Player.digest_day) < day),
        )
    ).all()
    sent = 0
    for player_id in due:
        if claim(session, player_id, day):
            sent += send_digest(ctx, session, player_id, day, now)
    return sent


def claim(session: Session, player_id: int | None, day: str) -> bool:
    """Take ``day``'s digest of one player: True for the one transaction that does."""
    result = session.connection().execute(
        update(m.Player)
        .where(
            col(m.Player.id) == player_id,
            or_(col(m.Player.digest_day).is_(None), col(m.Player.digest_day) < day),
        )
        .values(digest_day=day)
    )
    return result.rowcount == 1


def send_digest(
    ctx: Context, session: Session, player_id: int | None, day: str, now: datetime
) -> int:
    """Queue one player's digest of ``day``; 1 when one was queued."""

    player = session.get(m.Player, player_id)
    if player is None or player.id is None or player.stopped or player.blocked:
        return 0
    session.refresh(player)
    games = [g for g in games_for_player(session, player.id) if g.status in IN_PROGRESS]
    if not games:
        return 0
    lines = [game_line(ctx, session, g, player) for g in games]
    waiting: list[GameLine] = [line for line in lines if line.turn.startswith("your turn")]
    others = [line for line in lines if not line.turn.startswith("your turn")]
    if not policy.may_mail(ctx, session, player.email, policy.Why.GAME, now):
        return 0
    mail = render_digest(day, waiting, others)
    # One id a player a day: a second insert of the same day's digest cannot happen.
    msg_id = f"<digest.{player.id}.{day}@{ctx.settings.domain}>"
    address = ctx.settings.address
    raw = compose(
        sender=address,
        sender_name=ctx.settings.from_name,
        to=player.email,
        to_name=display_name(player),
        subject=mail.subject,
        text=mail.text,
        html=mail.html,
        message_id=msg_id,
        in_reply_to=None,
        references=[],
        reply_to=address,
        loop_value=ctx.settings.loop_value,
        date=now,
        # Unsubscribing means less mail: "stop", never "digest off" (a mail a move). To
        # the player's own reply address of a game (its token proves the mailbox), so
        # one click stops the mail without a confirmation.
        extra_headers={"List-Unsubscribe": f"<mailto:{lines[0].reply_to}?subject=stop>"},
        parts=player.mail_parts,
    )
    queue_mails(session, [outbox_row(msg_id, player.email, address, "digest", raw, None, now=now)])
    return 1
