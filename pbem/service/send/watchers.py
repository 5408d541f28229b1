"""observe: the mails to the people watching a game (``watch GAME``).

After every move of a game open to observers, each watcher gets the public board
(`engine.observer_view` through `pbem.render.render_observer`: never a hand, the crib
before its show, or a card laid away), threaded after their last mail of that game, with
the plain service address to reply to (``unwatch GAME``). One mail a move: the table
talk of the mail that made the move is in it, under its own heading; talk without a
move comes in a short mail of its own (`relay_talk`). A watcher who sent ``stop``, or
whose address is blocked, gets nothing. Nothing here reads mail.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from engine import OBSERVER, Game, observer_view
from pbem.mail.compose import compose
from pbem.mail.reading import IncomingMail
from pbem.render import (
    MailContext,
    Notice,
    RenderedMail,
    Said,
    render_error,
    render_observer,
    render_talk,
)
from pbem.render.mail import observer_footer
from pbem.render.page import lobby_footer
from pbem.render.words import join_words, they_do
from pbem.service.context import (
    Context,
    Seated,
    display_name,
    game_subject,
    seat_levels,
    seat_names,
    seats_of,
)
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


def observer_context(
    game_row: m.Game,
    seats: Sequence[Seated],
    talk: Sequence[Said] = (),
    since: int = 0,
    first: bool = False,
) -> MailContext:
    """What an observer's mail knows beyond the view: the players' names (a computer's
    level for the header), the table talk it carries, where its news starts
    (``since``) and whether it is the watcher's ``first`` mail of the game."""
    assert game_row.id is not None
    return MailContext(
        game_id=game_row.id,
        names=seat_names(seats),
        recipient_seat=OBSERVER,
        reply_hint="",
        paused=game_row.status == m.GameStatus.PAUSED.value,
        levels=seat_levels(game_row, seats),
        talk=tuple(talk),
        since_event=since,
        first_mail=first,
        subject=game_subject(game_row, seats),
    )


def observer_mails(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    game: Game,
    seats: Sequence[Seated],
    now: datetime,
    talk: Sequence[Said] = (),
) -> set[int]:
    """The public board to every watcher of ``game_row`` with news since their last
    mail, with ``talk`` (the table talk of the mail that made the move) in it; the ids
    of the watchers mailed (they need no talk mail of their own)."""
    if not game_row.observers or game_row.id is None:
        return set()
    mailed: set[int] = set()
    for watcher, player in watchers_of(session, game_row.id):
        told = watcher.mailed_events
        if told is not None and told >= len(game.events):
            continue  # nothing new since their last mail
        if player.stopped or player.blocked:
            continue
        start = told if told is not None else start_of_hand(game)
        mail_to_watcher(ctx, session, game_row, game, seats, watcher, player, start, now, talk=talk)
        assert watcher.id is not None
        mailed.add(watcher.id)
    return mailed


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
    talk: Sequence[Said] = (),
) -> None:
    """One observer mail: the public board and the public events from ``since``, and
    ``talk`` under its own heading. The watcher's first mail tells the hand "so far"."""
    view = observer_view(game, since)
    first = watcher.mailed_events is None
    about = observer_context(game_row, seats, talk, since, first)
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
    ``last``: the watcher's row is deleted in this transaction (nothing to remember),
    and the footer offers what works outside any game."""
    assert game_row.id is not None
    about = MailContext(
        game_id=game_row.id,
        names=(display_name(player),),
        recipient_seat=OBSERVER,
        reply_hint="",
        notices=(Notice("info", "", said),),
        subject=game_subject(game_row, seats_of(session, game_row.id)),
    )
    closing = lobby_footer(new_games=ctx.settings.lobby != "closed")
    footer = closing if last else observer_footer(game_row.id)
    mail = render_error(about, None, title, footer=footer)
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


@dataclass(frozen=True)
class ObserversChange:
    """What ``observers on|off`` did: the answer to its sender, and what the game's
    other players are told (None: nothing changed that they must know)."""

    notice: Notice
    tell_others: str | None = None


def set_observers(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: Sequence[Seated],
    seat: int,
    on: bool,
    computer: Sequence[int],
    now: datetime,
) -> ObserversChange:
    """``observers on`` / ``observers off`` from ``seat``'s player.

    On: the seat agrees; the game opens to observers when every human seat has agreed.
    Off: any player closes it at once; every vote is cleared, and each watcher is told
    and dropped. The other players are told of a vote they may answer, of the game
    opening and of its closing (`pbem.service.send.answers.tell_others` mails them)."""
    assert game_row.id is not None
    command = f"observers {'on' if on else 'off'}"
    me = seats[seat].name
    if on:
        if game_row.observers:
            update_row(session, seats[seat].seat, allows_observers=True)
            return ObserversChange(
                Notice("already", command, f"Game {game_row.id} is open to observers already.")
            )
        asked_before = seats[seat].seat.allows_observers
        update_row(session, seats[seat].seat, allows_observers=True)
        waiting = [
            s.name for s in seats if s.seat.seat not in computer and not s.seat.allows_observers
        ]
        if waiting:
            each = "each replies" if len(waiting) > 1 else "by replying"
            seconded = any(
                s.seat.allows_observers for s in seats if s.seat.seat not in (seat, *computer)
            )
            if asked_before:
                tell = None  # the others were told the first time
            elif seconded:
                tell = (
                    f"{me} agreed to observers too; game {game_row.id} opens to them once "
                    f"every player has (waiting for {join_words(waiting)}: reply "
                    "'observers on')."
                )
            else:
                tell = (
                    f"{me} would like game {game_row.id} open to observers: anyone could "
                    "then watch its public board after every move (never a hidden card). "
                    "Reply 'observers on' to agree; it opens once every player agrees."
                )
            return ObserversChange(
                Notice(
                    "applied",
                    command,
                    f"You agree to observers; game {game_row.id} opens to them when "
                    f"{they_do(waiting, 'agrees', 'agree')} too ({each} 'observers on').",
                ),
                tell,
            )
        update_row(session, game_row, observers=True)
        watch = (
            f"anyone may write 'watch {game_row.id}' to {ctx.settings.address} and get the "
            "public board after every move (never a hidden card)"
        )
        return ObserversChange(
            Notice("applied", command, f"Game {game_row.id} is open to observers: {watch}."),
            f"{me} agreed too: game {game_row.id} is open to observers now: {watch}. "
            "Reply 'observers off' to close it.",
        )
    others_agreed = any(s.seat.allows_observers for s in seats if s.seat.seat != seat)
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
    again = "It opens again once every player replies 'observers on'."
    if not was_open:
        return ObserversChange(
            Notice("already", command, f"Game {game_row.id} is closed to observers already."),
            f"{me} said 'observers off': game {game_row.id} stays closed to observers, and "
            f"every player's agreement is withdrawn. {again}"
            if others_agreed
            else None,
        )
    told = f" ({dropped} watcher{'s' if dropped != 1 else ''} told and dropped)" if dropped else ""
    return ObserversChange(
        Notice("applied", command, f"Game {game_row.id} is closed to observers{told}."),
        f"{me} closed game {game_row.id} to observers{told}. {again}",
    )


def relay_talk(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    said: Sequence[Said],
    now: datetime,
    told: Collection[int] = (),
) -> int:
    """Table talk (``say …``) to everyone watching ``game_row``: one short mail with
    every line of ``said`` under the heading "Table talk", no cards and no board,
    threaded after the watcher's last mail of the game; not to a watcher whose board
    mail of this move carried it already (``told``: watcher ids), who said ``stop`` or
    is blocked, nor when the game is closed to observers. The words are the players'
    own: the templates escape them. How many mails were queued. (The hook for the
    table talk's followers.)"""
    if not said or not game_row.observers or game_row.id is None:
        return 0
    sent = 0
    subject = game_subject(game_row, seats_of(session, game_row.id))
    for watcher, player in watchers_of(session, game_row.id):
        if watcher.id in told or player.stopped or player.blocked:
            continue
        about = MailContext(
            game_id=game_row.id,
            names=(display_name(player),),
            recipient_seat=OBSERVER,
            reply_hint="",
            talk=tuple(said),
            subject=subject,
        )
        mail = render_talk(about, observer=True)
        send(ctx, session, game_row, watcher, player, mail, "talk", now)
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
