"""lobby: games started by mail to the plain service address.

A mail that carries no game token and whose first command is a lobby command (see
`pbem.commands.LobbyCommand`) comes here from intake, in the message's transaction:
``new`` / ``play computer`` starts a game against the computer at once, at the level
asked for (``level hard``; its first mail is the answer, threaded after the request),
``games`` answers with the sender's games.

Anyone on the internet can write, so the ``lobby`` setting says who may start games:
``open`` (anyone), ``invite-only`` (the default: players of a game already), ``closed``
(the admin only: known players are told so, strangers get nothing). A blocked address
(``pbem player block``) is never answered. A player starts at most
``max_new_games_per_day`` games a day.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, col, select

from engine import InvalidSyntaxError
from engine import Settings as GameSettings
from pbem.commands import LobbyCommand, words_after
from pbem.mail.reading import IncomingMail
from pbem.mail.tokens import reply_address
from pbem.render import Notice
from pbem.render.games import render_my_games
from pbem.service import policy
from pbem.service.context import Context, Outcome, ServiceError, finish, seats_of
from pbem.service.game.deals import Offer
from pbem.service.game.lines import game_line
from pbem.service.handle import challenge, confirmations, rematch, watch
from pbem.service.ops import matches
from pbem.service.ops.start import STARTED, limit_words, start_game
from pbem.service.send import outside
from pbem.service.send.standings import send_standings
from pbem.store import models as m
from pbem.store.games import games_for_player
from pbem.store.players import get_player


def handle(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    player: m.Player | None,
    asked: LobbyCommand | InvalidSyntaxError,
    now: datetime,
    offer: Offer | None = None,
) -> Outcome:
    """Answer a lobby command from ``mail``'s sender (``player``: None for a stranger),
    and mark the message done; its final state. ``offer``: the mail answered a mail that
    showed a new game's commitment (a confirmation, the welcome) — the game it starts is
    dealt from that seed, with this answer as the writer's cut."""
    sender = player.email if player is not None else mail.sender  # (+tags matched)
    mode = ctx.settings.lobby
    if player is None and mode != "open":
        # No backscatter: a stranger's mail may carry a forged From.
        return finish(
            ctx, session, row, "ignored", f"lobby {mode}: unknown sender, no reply", sender=sender
        )
    if player is None and not isinstance(asked, LobbyCommand):
        return finish(
            ctx,
            session,
            row,
            "ignored",
            f"unknown sender, unreadable lobby command: {asked}",
            sender=sender,
        )
    if isinstance(asked, LobbyCommand) and asked.verb in ("watch", "unwatch"):
        # Watching starts no game: a closed lobby does not stop it.
        held = ask_policy(ctx, session, row, mail, asked, now)
        if held is not None:
            return held
        return watch.handle(ctx, session, row, mail, player, asked, now)
    if player is not None and mode == "closed":
        refuse(
            ctx,
            session,
            player,
            row,
            mail,
            "lobby-closed",
            "Games are started by the admin",
            "Games are not started by mail here: the admin starts games. Write to "
            "the admin if you would like a game.",
            now,
        )
        return finish(ctx, session, row, "rejected", "lobby closed: told the sender", sender=sender)
    if isinstance(asked, InvalidSyntaxError):
        assert player is not None
        refuse(ctx, session, player, row, mail, "lobby-syntax", "Not understood", str(asked), now)
        return finish(ctx, session, row, "rejected", f"lobby: {asked}", sender=sender)
    held = ask_policy(ctx, session, row, mail, asked, now)
    if held is not None:
        return held
    if asked.verb == "new":
        return new_against_computer(ctx, session, row, mail, player, asked, now, offer)
    if asked.verb == "games":
        if player is None:
            return finish(
                ctx, session, row, "ignored", "games: unknown sender, no games", sender=sender
            )
        return my_games(ctx, session, row, mail, player, now)
    if asked.verb == "standings":
        if player is None:
            return finish(
                ctx, session, row, "ignored", "standings: unknown sender, no reply", sender=sender
            )

        assert row.id is not None
        send_standings(ctx, session, player, row.id, now, mail.message_id)
        return finish(ctx, session, row, "applied", "sent: standings", sender=sender)
    if asked.verb == "challenge":
        return challenge.challenge(ctx, session, row, mail, player, asked, now, offer)
    if asked.verb == "rematch":
        if player is None:
            return finish(ctx, session, row, "ignored", "rematch: unknown sender", sender=sender)
        return rematch.request(
            ctx,
            session,
            row,
            player,
            asked.game_id,
            asked.best_of,
            mail.message_id,
            cut_words=words_after(asked.line, "rematch"),
        )
    if player is None:
        return finish(ctx, session, row, "ignored", "cancel: unknown sender", sender=sender)
    return challenge.cancel(ctx, session, row, mail, player, now)


def ask_policy(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    asked: LobbyCommand,
    now: datetime,
) -> Outcome | None:
    """The policy's word on ``asked`` from this mail's sender: None to go on, else the
    message's final state (refused without a reply, or held for their confirmation)."""
    assert row.id is not None
    action = ACTIONS.get(asked.verb, "query")
    decision = policy.decide(ctx, session, ctx.senders[row.id], action)
    if decision.verdict == policy.Verdict.CONFIRM:
        return confirmations.request(ctx, session, row, mail, action, now)
    if not decision.allowed:
        return finish(ctx, session, row, "ignored", decision.reason, sender=mail.sender)
    return None


ACTIONS = {
    "new": "new",
    "challenge": "challenge",
    "rematch": "rematch",
    "cancel": "cancel",
    "watch": "watch",
    "unwatch": "unwatch",
    "games": "query",
    "standings": "query",
}
"""The policy's action (`pbem.service.policy.RULES`) of each lobby verb."""


def new_against_computer(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    player: m.Player | None,
    asked: LobbyCommand,
    now: datetime,
    offer: Offer | None = None,
) -> Outcome:
    """Start a game of the sender against the computer; its first mail answers them.

    A fair game's first mail asks its player to cut for the deal — unless the mail that
    asked for the game answered one that showed the game's commitment (``offer``: the
    welcome), as a rematch answers a game-over mail: that answer is the cut, the game is
    dealt at once and its first mail holds the cards."""
    sender = player.email if player is not None else mail.sender  # (+tags matched)
    assert row.id is not None
    writer = ctx.senders[row.id]
    if writer.proof < policy.Proof.TOKEN and not policy.reachable(ctx, session, sender, now):
        # Its first mail could not go (a mailbox that never confirmed, mailed unasked in
        # the quiet period, or one that said "never"): no game is made.
        return finish(
            ctx,
            session,
            row,
            "ignored",
            "lobby: the game's first mail may not go to this mailbox now; no game, no reply",
            sender=sender,
        )
    over = policy.take_new_game(ctx, session, writer, now)
    if over is not None:
        if player is None:
            return finish(ctx, session, row, "ignored", f"lobby: {over}")
        refuse(
            ctx,
            session,
            player,
            row,
            mail,
            "lobby-limit",
            "No more games today" if "daily" in over else "Answer your new games first",
            limit_words(ctx, over),
            now,
        )
        return finish(ctx, session, row, "rejected", f"lobby: {over}", sender=sender)
    seats = asked.players or 2
    people: list[tuple[str, str | None]] = [(sender, mail.sender_name or None)]
    for n in range(1, seats):
        suffix = "" if n == 1 else str(n)
        people.append((f"computer{suffix}@{ctx.settings.domain}", f"Computer{suffix}"))

    dealt = offer if offer is not None and ctx.settings.fair_deals else None
    try:
        game_id = start_game(
            ctx,
            session,
            people,
            target=asked.target,
            muggins=asked.muggins,
            skunk=asked.skunk,
            computer=range(1, seats),
            answering=(sender, mail.message_id),
            level=asked.level,
            joined=policy.joined_seats(writer, [p for p, _ in people]),
            **matches.new_match(session, asked.best_of, now),
            server_seed=dealt.server_seed if dealt is not None else None,
            cuts={0: dealt.cut} if dealt is not None else None,
        )
    except ServiceError as exc:
        if player is None:
            return finish(ctx, session, row, "ignored", f"lobby: {exc}", sender=sender)
        refuse(ctx, session, player, row, mail, "lobby-new", "No game started", str(exc), now)
        return finish(ctx, session, row, "rejected", f"lobby: {exc}", sender=sender)
    ctx.fault("before-mark")
    return finish(
        ctx,
        session,
        row,
        "applied",
        f"{STARTED} {game_id} against the computer",
        sender=sender,
        game_id=game_id,
    )


def my_games(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    player: m.Player,
    now: datetime,
) -> Outcome:
    """Answer ``games``: the player's games in progress (each with their own reply
    address), the invitations waiting (sent and received), the last finished games."""

    assert player.id is not None and row.id is not None
    mine = games_for_player(session, player.id)
    going = [
        g
        for g in mine
        if g.status
        in (m.GameStatus.ACTIVE.value, m.GameStatus.PAUSED.value, m.GameStatus.CUTTING.value)
    ]
    lines = [game_line(ctx, session, g, player) for g in going]
    done = [g for g in mine if g.status == m.GameStatus.FINISHED.value]
    done.sort(key=lambda g: g.finished_at or g.updated_at, reverse=True)
    finished = [result_line(session, g, player) for g in done[:FINISHED_SHOWN]]
    render = render_my_games(lines, waiting_lines(ctx, session, player), finished)
    sent = outside.answer(ctx, session, player, row.id, "games", render, now, mail.message_id)
    why = "sent: games" if sent else "games: no answer may go now (repeat, or policy)"
    return finish(ctx, session, row, "applied", why, sender=player.email)


FINISHED_SHOWN = 5
"""How many finished games ``games`` shows."""


def waiting_lines(ctx: Context, session: Session, player: m.Player) -> list[str]:
    """The open invitations ``player`` sent, and those sent to them (with the address to
    answer each)."""
    pending = m.InvitationStatus.PENDING.value
    sent = session.exec(
        select(m.Invitation)
        .where(m.Invitation.challenger_id == player.id, m.Invitation.status == pending)
        .order_by(col(m.Invitation.id))
    ).all()
    received = session.exec(
        select(m.Invitation)
        .where(m.Invitation.invitee == player.email, m.Invitation.status == pending)
        .order_by(col(m.Invitation.id))
    ).all()
    out = [
        f"You invited {i.invitee}: no answer yet (lapses {i.expires_at:%Y-%m-%d})." for i in sent
    ]
    for i in received:
        challenger = get_player(session, i.challenger_id)
        who = challenger.email if challenger is not None else "someone"
        address = reply_address(ctx.settings.local_part, i.token, ctx.settings.domain)
        out.append(f"{who} invited you: write accept or decline to {address}")
    return out


def result_line(session: Session, game_row: m.Game, player: m.Player) -> str:
    """A finished game in one line: the opponents, won or lost, the scores."""

    assert game_row.id is not None
    seats = seats_of(session, game_row.id)
    mine = next(s.seat.seat for s in seats if s.player.id == player.id)
    others = ", ".join(s.name for s in seats if s.player.id != player.id)
    outcome = game_row.outcome or {}
    won = mine in outcome.get("winner_seats", ())
    target = GameSettings.from_json(game_row.settings).target
    scores = "–".join(str(min(int(n), target)) for n in outcome.get("scores", ()))
    line = f"Game {game_row.id} v {others}: you {'won' if won else 'lost'} {scores}".rstrip()
    info = game_row.match_info
    if info:
        line += f" (match best of {info.get('best_of')}, game {info.get('game')})"
    return line


def refuse(
    ctx: Context,
    session: Session,
    player: m.Player,
    row: m.Inbound,
    mail: IncomingMail,
    kind: str,
    title: str,
    why: str,
    now: datetime,
) -> None:
    """Tell a known player why their lobby command was not done, threaded after it."""
    assert row.id is not None
    outside.error_reply(
        ctx,
        session,
        player,
        row.id,
        kind,
        title,
        [Notice("refused", "", why)],
        now,
        answering=mail.message_id,
    )
