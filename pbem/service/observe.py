"""observe: the mails to the people watching a game (``watch GAME``).

After every move of a game open to observers, each watcher gets the public board
(`engine.observer_view` through `pbem.render.render_observer`: never a hand, the crib
before its show, or a card laid away), threaded after their last mail of that game, with
the plain service address to reply to (``unwatch GAME``). A watcher who sent ``stop``,
or whose address is blocked, gets nothing. Nothing here reads mail.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from datetime import datetime

from sqlmodel import Session, col, select

from engine import OBSERVER, Game, observer_view
from pbem.mail.compose import compose
from pbem.mail.reading import IncomingMail
from pbem.render import (
    MailContext,
    Notice,
    RenderedMail,
    clean_name,
    render_error,
    render_observer,
)
from pbem.service.context import Context, Seated, display_name
from pbem.store import models as m
from pbem.store._sql import update_row
from pbem.store.outbox import outbox_row, queue_mails


def watchers_of(session: Session, game_id: int) -> list[tuple[m.Watcher, m.Player]]:
    """Who watches a game, in the order they started."""
    rows = session.exec(
        select(m.Watcher, m.Player)
        .join(m.Player, col(m.Player.id) == col(m.Watcher.player_id))
        .where(m.Watcher.game_id == game_id)
        .order_by(col(m.Watcher.id))
    ).all()
    return [(w, p) for w, p in rows]


def observer_context(game_row: m.Game, seats: Sequence[Seated]) -> MailContext:
    """What an observer's mail knows beyond the view: the players' names."""
    assert game_row.id is not None
    return MailContext(
        game_id=game_row.id,
        names=tuple(s.name for s in seats),
        recipient_seat=OBSERVER,
        reply_hint="",
        paused=game_row.status == m.GameStatus.PAUSED.value,
    )


def observer_mails(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    game: Game,
    seats: Sequence[Seated],
    now: datetime,
) -> int:
    """The public board to every watcher of ``game_row`` with news since their last
    mail; returns how many were queued."""
    if not game_row.observers or game_row.id is None:
        return 0
    sent = 0
    for watcher, player in watchers_of(session, game_row.id):
        told = watcher.mailed_events
        if told is not None and told >= len(game.events):
            continue  # nothing new since their last mail
        if player.stopped or player.blocked:
            continue
        start = told if told is not None else start_of_hand(game)
        mail_to_watcher(ctx, session, game_row, game, seats, watcher, player, start, now)
        sent += 1
    return sent


def start_of_hand(game: Game) -> int:
    """The index of the current hand's first event (its deal): a new watcher's first
    mail tells the hand so far."""
    for i in range(len(game.events) - 1, -1, -1):
        if game.events[i].kind == "deal":
            return i
    return 0


def mail_to_watcher(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    game: Game,
    seats: Sequence[Seated],
    watcher: m.Watcher,
    player: m.Player,
    since: int,
    now: datetime,
    answering: str | None = None,
) -> None:
    """One observer mail: the public board and the public events from ``since``."""
    view = observer_view(game, since)
    about = observer_context(game_row, seats)
    about = MailContext(**{**about.__dict__, "since_event": since})
    mail = render_observer(view, about)
    update_row(session, watcher, mailed_events=len(game.events))
    send(ctx, session, game_row, watcher, player, mail, "observe", now, answering)


def tell_watcher(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    watcher: m.Watcher,
    player: m.Player,
    title: str,
    said: str,
    now: datetime,
    last: bool = False,
) -> None:
    """A short notice to a watcher about the game (e.g. it closed to observers);
    ``last``: the watcher's row is deleted in this transaction (nothing to remember)."""
    assert game_row.id is not None
    about = MailContext(
        game_id=game_row.id,
        names=(display_name(player),),
        recipient_seat=OBSERVER,
        reply_hint="",
        notices=(Notice("info", "", said),),
    )
    mail = render_error(about, None, title)
    send(ctx, session, game_row, watcher, player, mail, "watch", now, remember=not last)


def send(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    watcher: m.Watcher,
    player: m.Player,
    mail: RenderedMail,
    kind: str,
    now: datetime,
    answering: str | None = None,
    remember: bool = True,
) -> None:
    """Queue ``mail`` to a watcher, threaded after their last mail of the game (or the
    mail it answers), and remembered as their last (unless not ``remember``). The reply
    address is the plain service address: an observer has no seat and no token."""
    assert game_row.id is not None and watcher.id is not None
    domain = ctx.settings.domain
    msg_id = (
        f"<w{game_row.id}.{watcher.id}.a{game_row.action_count}.{secrets.token_hex(6)}@{domain}>"
    )
    previous = f"<{watcher.last_mail_id}>" if watcher.last_mail_id else None
    previous = previous or (answering.strip() if answering else None)
    references = [f"<{game_row.thread_id}>"] if game_row.thread_id else []
    if previous:
        references.append(previous)
    if remember:
        update_row(session, watcher, last_mail_id=msg_id.strip("<>"))
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
        in_reply_to=previous or (references[0] if references else None),
        references=references,
        reply_to=address,
        loop_value=ctx.settings.loop_value,
        date=now,
        extra_headers={"List-Unsubscribe": f"<mailto:{address}?subject=unwatch%20{game_row.id}>"},
        parts=player.mail_parts,
    )
    row = outbox_row(msg_id, player.email, address, kind, raw, game_row.id, now=now)
    if ctx.deferred is not None:
        ctx.deferred.append(row)  # with the batch's other mail, just before the commit
    else:
        queue_mails(session, [row])


def set_observers(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: Sequence[Seated],
    seat: int,
    on: bool,
    computer: Sequence[int],
    now: datetime,
) -> Notice:
    """``observers on`` / ``observers off`` from ``seat``'s player.

    On: the seat agrees; the game opens to observers when every human seat has agreed.
    Off: any player closes it at once; every vote is cleared, and each watcher is told
    and dropped."""
    assert game_row.id is not None
    command = f"observers {'on' if on else 'off'}"
    if on:
        update_row(session, seats[seat].seat, allows_observers=True)
        waiting = [
            s.name for s in seats if s.seat.seat not in computer and not s.seat.allows_observers
        ]
        if game_row.observers:
            return Notice("already", command, f"Game {game_row.id} is open to observers already.")
        if waiting:
            return Notice(
                "applied",
                command,
                f"You agree to observers; game {game_row.id} opens to them when "
                f"{' and '.join(waiting)} agree too (each replies 'observers on').",
            )
        update_row(session, game_row, observers=True)
        return Notice(
            "applied",
            command,
            f"Game {game_row.id} is open to observers: anyone may write 'watch "
            f"{game_row.id}' to {ctx.settings.address} and get the public board after "
            "every move (never a hidden card).",
        )
    for s in seats:
        if s.seat.allows_observers:
            update_row(session, s.seat, allows_observers=False)
    was_open = game_row.observers
    update_row(session, game_row, observers=False)
    dropped = 0
    for watcher, player in watchers_of(session, game_row.id):
        if not player.stopped and not player.blocked:
            tell_watcher(
                ctx,
                session,
                game_row,
                watcher,
                player,
                "No more watching",
                f"A player closed game {game_row.id} to observers: you no longer watch it.",
                now,
                last=True,
            )
        session.delete(watcher)
        dropped += 1
    if not was_open:
        return Notice("already", command, f"Game {game_row.id} is closed to observers already.")
    told = f" ({dropped} watcher{'s' if dropped != 1 else ''} told and dropped)" if dropped else ""
    return Notice("applied", command, f"Game {game_row.id} is closed to observers{told}.")


def relay_talk(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    speaker: str,
    text: str,
    now: datetime,
) -> int:
    """Table talk (``say …``) to everyone watching ``game_row``: a short mail, "Alice
    says: …", no cards and no board, threaded after the watcher's last mail of the game;
    not to a watcher who said ``stop`` or is blocked, nor when the game is closed to
    observers. ``text`` is the player's own words: the templates escape it. How many
    mails were queued. (The hook for the table talk's followers.)"""
    if not game_row.observers or game_row.id is None:
        return 0
    said = f"{clean_name(speaker, 60)} says: {clean_name(text, 500)}"
    sent = 0
    for watcher, player in watchers_of(session, game_row.id):
        if player.stopped or player.blocked:
            continue
        tell_watcher(ctx, session, game_row, watcher, player, "Table talk", said, now)
        sent += 1
    return sent


_OBSERVER_ID = re.compile(r"w(\d{1,18})\.\d{1,18}\.a\d{1,9}\.[0-9a-f]{12}@(.+)", re.I)


def watched_reply(mail: IncomingMail, domain: str) -> int | None:
    """The game whose observer mail ``mail`` answers (its In-Reply-To, else its newest
    References naming one of our observer mails' Message-IDs, see `send`), or None."""
    for ref in (*mail.in_reply_to, *reversed(mail.references)):
        match = _OBSERVER_ID.fullmatch(ref.strip().strip("<>").strip())
        if match and match.group(2).lower() == domain.lower():
            return int(match.group(1))
    return None
