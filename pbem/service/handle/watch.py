"""watch: ``watch GAME`` and ``unwatch GAME`` by mail to the plain service address.

A known player (whatever the ``lobby`` setting: watching starts no game; a stranger only
when it is ``open``) may watch a game in progress whose players allow observers (`m.Game.observers`:
on for games against the computer, off for challenges until every human player says
``observers on``), up to ``max_observers_per_game`` watchers a game and
``max_watched_games`` games an address. A player of the game cannot watch it. The
watcher's first mail is the answer: the public board and the hand so far
(`pbem.service.send.watchers`). An observer can never act in the game: a move from them is
refused with the reason (`refuse_move`). Called from `pbem.service.handle.lobby`.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, col, func, select

from pbem.commands import LobbyCommand
from pbem.mail.reading import IncomingMail
from pbem.render import Notice
from pbem.service.context import Context, Outcome, finish, load_game, seats_of
from pbem.service.send import outside
from pbem.service.send import watchers as watcher_mail
from pbem.store import models as m
from pbem.store.players import get_or_create_player

IN_PROGRESS = (m.GameStatus.ACTIVE.value, m.GameStatus.PAUSED.value)


def watching(session: Session, player_id: int) -> list[m.Game]:
    """The games in progress ``player_id`` watches."""
    return list(
        session.exec(
            select(m.Game)
            .join(m.Watcher, col(m.Watcher.game_id) == col(m.Game.id))
            .where(m.Watcher.player_id == player_id, col(m.Game.status).in_(IN_PROGRESS))
            .order_by(col(m.Game.id))
        ).all()
    )


def handle(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    player: m.Player | None,
    asked: LobbyCommand,
    now: datetime,
) -> Outcome:
    """``watch N`` or ``unwatch N`` from ``mail``'s sender; the message's final state."""
    assert row.id is not None and asked.game is not None
    sender = player.email if player is not None else mail.sender
    if player is None:
        if asked.verb == "unwatch":
            return finish(ctx, session, row, "ignored", "unwatch: unknown sender", sender=sender)
        # Only an open lobby lets a stranger in (lobby.handle checked it).
        player = get_or_create_player(session, sender, mail.sender_name or None, now=now)
    if asked.verb == "unwatch":
        return unwatch(ctx, session, row, mail, player, asked.game, now)
    return watch(ctx, session, row, mail, player, asked.game, now)


def watch(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    player: m.Player,
    game_id: int,
    now: datetime,
) -> Outcome:
    assert player.id is not None
    game_row = session.get(m.Game, game_id)
    seats = seats_of(session, game_id) if game_row is not None else []

    def refuse(why: str, reason: str) -> Outcome:
        tell(ctx, session, player, row, mail, "watch-refused", "Not watching", "refused", why, now)
        return finish(
            ctx, session, row, "rejected", f"watch {game_id}: {reason}", sender=player.email
        )

    if game_row is None or game_row.status not in IN_PROGRESS or not game_row.observers:
        # The same answer whether the game exists or not: nothing is learnt of private games.
        return refuse(
            f"Game {game_id} cannot be watched: it is not in progress, or its players "
            "do not allow observers.",
            "not open to observers",
        )
    if any(s.player.id == player.id for s in seats):
        return refuse(f"You play in game {game_id}: your own mails show it.", "a player")
    existing = session.exec(
        select(m.Watcher).where(m.Watcher.game_id == game_id, m.Watcher.player_id == player.id)
    ).first()
    if existing is not None:
        tell(
            ctx,
            session,
            player,
            row,
            mail,
            "watch",
            "Watching",
            "already",
            f"You watch game {game_id} already.",
            now,
        )
        return finish(
            ctx, session, row, "applied", f"watch {game_id}: already", sender=player.email
        )
    # The game's row is locked before counting (FOR UPDATE on PostgreSQL; SQLite's write
    # transactions are serial): two watch mails taken by two workers at once count one
    # after the other, so the limit holds.
    session.exec(select(m.Game.id).where(m.Game.id == game_id).with_for_update()).all()
    watchers = session.exec(
        select(func.count()).select_from(m.Watcher).where(m.Watcher.game_id == game_id)
    ).one()
    if watchers >= ctx.settings.max_observers_per_game:
        return refuse(
            f"Game {game_id} has as many observers as it may "
            f"({ctx.settings.max_observers_per_game}).",
            "too many observers",
        )
    if len(watching(session, player.id)) >= ctx.settings.max_watched_games:
        return refuse(
            f"You watch {ctx.settings.max_watched_games} games already, as many as one may: "
            "'unwatch' one first.",
            "watches too many games",
        )
    watcher = m.Watcher(game_id=game_id, player_id=player.id, created_at=now)
    session.add(watcher)
    session.flush()
    if player.stopped:
        tell(
            ctx,
            session,
            player,
            row,
            mail,
            "watch",
            "Watching",
            "applied",
            f"You watch game {game_id}, but you said 'stop': send 'start' to get its mails.",
            now,
        )
    else:
        game = load_game(ctx, session, game_row)
        start = watcher_mail.start_of_hand(game)
        watcher_mail.mail_to_watcher(
            ctx, session, game_row, game, seats, watcher, player, start, now, mail.message_id
        )
    return finish(
        ctx, session, row, "applied", f"watch {game_id}", sender=player.email, game_id=game_id
    )


def unwatch(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    player: m.Player,
    game_id: int,
    now: datetime,
) -> Outcome:
    existing = session.exec(
        select(m.Watcher).where(m.Watcher.game_id == game_id, m.Watcher.player_id == player.id)
    ).first()
    if existing is None:
        tell(
            ctx,
            session,
            player,
            row,
            mail,
            "watch",
            "Not watching",
            "already",
            f"You do not watch game {game_id}.",
            now,
        )
        return finish(
            ctx, session, row, "rejected", f"unwatch {game_id}: not watching", sender=player.email
        )
    session.delete(existing)
    tell(
        ctx,
        session,
        player,
        row,
        mail,
        "watch",
        "No more watching",
        "applied",
        f"You no longer watch game {game_id}.",
        now,
    )
    return finish(ctx, session, row, "applied", f"unwatch {game_id}", sender=player.email)


def refuse_move(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    player: m.Player,
    games: list[int],
    now: datetime,
) -> Outcome:
    """A move from someone who only watches (or in answer to an observer mail of
    ``games``): refused, saying so."""
    ids = ", ".join(str(g) for g in games)
    tell(
        ctx,
        session,
        player,
        row,
        mail,
        "observer-move",
        "Observers cannot move",
        "refused",
        f"You watch game {ids}: an observer sees the public board and cannot move in the "
        "game. No move was made.",
        now,
    )
    return finish(
        ctx, session, row, "rejected", f"observer of game {ids}: no move", sender=player.email
    )


def tell(
    ctx: Context,
    session: Session,
    player: m.Player,
    row: m.Inbound,
    mail: IncomingMail,
    kind: str,
    title: str,
    status: str,
    said: str,
    now: datetime,
) -> None:
    """Answer a watch command, threaded after it."""
    assert row.id is not None
    outside.error_reply(
        ctx,
        session,
        player,
        row.id,
        kind,
        title,
        [Notice(status, "", said)],
        now,
        answering=mail.message_id,
    )
