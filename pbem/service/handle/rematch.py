"""rematch: ``rematch`` and ``next`` written in a game's thread.

A finished game's mail offers ``rematch`` (another game with the same players, or a
match with ``rematch best of N``) and, in a match that goes on, ``next`` (the cut for
the match's next game). A rematch against the computer starts at once; one between
people invites the others (`pbem.service.handle.invitations`). The policy limits how
many games one may start (`pbem.service.policy.take_new_game`).
"""

from __future__ import annotations

import secrets
from dataclasses import replace

from sqlmodel import Session, col, select

from engine import InvalidSyntaxError
from engine.match import first_dealer_after
from pbem.commands import CUT_VERB, Command, rematch_words, words_after
from pbem.render.board import house_rules
from pbem.service import policy
from pbem.service.context import Context, Outcome, ServiceError, finish, load_game, seats_of
from pbem.service.game.deals import cut_text
from pbem.service.handle import challenge, invitations
from pbem.service.moves import Known
from pbem.service.ops import cutting
from pbem.service.ops.matches import new_match, next_of, start_again
from pbem.service.ops.start import STARTED, limit_words
from pbem.store import models as m


def from_thread(
    ctx: Context, session: Session, row: m.Inbound, known: Known, command: Command
) -> Outcome:
    """``rematch`` written in a game's thread: of that game unless it names another."""
    player = known.seats[known.seat].player
    try:
        game_id, length = rematch_words(command.args)
    except InvalidSyntaxError as exc:
        return refuse(ctx, session, row, player, known.message_id, str(exc), str(exc))
    return request(
        ctx,
        session,
        row,
        player,
        game_id if game_id is not None else known.game_row.id,
        length,
        known.message_id,
        cut_words=words_after(command.line, command.line.split()[0] if command.line else ""),
    )


def next_cut(
    ctx: Context, session: Session, row: m.Inbound, known: Known, command: Command
) -> Outcome:
    """``next`` in answer to the game-over mail of a game of a match: the player's cut
    for the match's next game (whose commitment that mail showed). The last cut deals;
    its first mail holds the cards."""
    assert row.id is not None and known.game_row.id is not None
    player = known.seats[known.seat].player
    following = next_of(session, known.game_row.id)
    if following is None or following.id is None:
        return refuse(
            ctx,
            session,
            row,
            player,
            known.message_id,
            f"No game follows game {known.game_row.id}: reply “rematch” for another game.",
            "next: no next game",
            known.game_row.id,
        )
    seats = seats_of(session, following.id)
    cut = Command(CUT_VERB, command.args, command.line)
    move = cutting.play_cut(
        ctx,
        session,
        replace(known, game_row=following, seats=seats, commands=(cut,), ignored=()),
        known.message_id,
    )
    # The answer reports on what the player wrote ("next"), not on the cut it stood for.
    move.notices[:] = [
        replace(n, command=str(command)) if n.command == str(cut) else n for n in move.notices
    ]
    now = ctx.clock()
    cutting.answer_cut(ctx, session, move, row.id, now)
    status, reason, applied = cutting.verdict(move)
    return finish(
        ctx,
        session,
        row,
        status,
        f"next (game {following.id}): {reason}",
        sender=player.email,
        game_id=following.id,
        applied=applied,
    )


def refuse(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    player: m.Player,
    answering: str | None,
    why: str,
    reason: str,
    game_id: int | None = None,
) -> Outcome:
    """Tell ``player`` why there is no rematch, threaded after their mail."""
    assert row.id is not None
    invitations.tell(
        ctx, session, player.email, row.id, "rematch", "No rematch", why, ctx.clock(), answering
    )
    return finish(
        ctx, session, row, "rejected", f"rematch: {reason}", sender=player.email, game_id=game_id
    )


def request(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    player: m.Player,
    game_id: int | None,
    length: int | None,
    answering: str | None,
    cut_words: str = "",
) -> Outcome:
    """A player asks for a rematch of ``game_id`` (a match of ``length`` games when
    given): started at once against the computer, else the others are invited.

    A fair game's rematch is dealt from the seed whose commitment its game-over mail
    showed, and this request (its Message-ID ``answering`` and ``cut_words``) is the
    asking player's cut: against the computer alone it is dealt at once."""

    assert row.id is not None and player.id is not None
    now = ctx.clock()
    writer = ctx.senders.get(row.id) or policy.Sender(
        player.email, policy.mailbox_of(player.email), policy.Proof.FROM, "From alone"
    )
    if ctx.settings.lobby == "closed":
        return refuse(
            ctx,
            session,
            row,
            player,
            answering,
            "Games are not started by mail here: the admin starts games.",
            "lobby closed",
        )
    if game_id is None:
        return refuse(
            ctx,
            session,
            row,
            player,
            answering,
            "Rematch which game? Reply 'rematch' to the finished game's mail, or write "
            "'rematch N' (N: the game's number; 'games' lists yours).",
            "no game named",
        )
    game_row = session.get(m.Game, game_id)
    seats = seats_of(session, game_id) if game_row is not None else []
    if game_row is None or not any(s.player.id == player.id for s in seats):
        return refuse(
            ctx,
            session,
            row,
            player,
            answering,
            f"Game {game_id} is not one of your games.",
            f"game {game_id} is not the sender's",
        )
    if game_row.status != m.GameStatus.FINISHED.value:
        return refuse(
            ctx,
            session,
            row,
            player,
            answering,
            f"Game {game_id} is not over ({game_row.status}): only a finished game is rematched.",
            f"game {game_id} is {game_row.status}",
            game_id,
        )
    later = next_of(session, game_id)
    if later is not None:
        return refuse(
            ctx,
            session,
            row,
            player,
            answering,
            f"Game {game_id} is already rematched: game {later.id}.",
            f"already rematched: game {later.id}",
            game_id,
        )
    emails = [s.player.email for s in seats]
    if waiting_rematch(session, game_id, emails):
        return refuse(
            ctx,
            session,
            row,
            player,
            answering,
            f"A rematch of game {game_id} is already waiting for the players' answers.",
            f"a rematch of game {game_id} is already asked",
            game_id,
        )
    game = load_game(ctx, session, game_row)
    settings = game.settings
    robots = sorted(int(s) for s in game_row.settings.get("computer", ()))
    dealer = first_dealer_after(game)
    others = [s for s in seats if s.seat.seat not in robots and s.player.id != player.id]
    # The asking player's cut for the rematch's deal, when the game-over mail showed its
    # commitment (seats keep their order in a rematch).
    mine = next(s.seat.seat for s in seats if s.player.id == player.id)
    cuts = (
        {mine: cut_text(answering, cut_words, f"<no-message-id.rematch.{row.id}>")}
        if game_row.next_seed
        else {}
    )
    if not others:
        over = policy.take_new_game(ctx, session, writer, now)
        if over is not None:
            return refuse(
                ctx, session, row, player, answering, limit_words(ctx, over), over, game_id
            )
        try:
            new_id = start_again(
                ctx,
                session,
                game_row,
                game,
                answering=(player.email, answering),
                joined=policy.joined_seats(writer, [s.player.email for s in seats]),
                **({"server_seed": game_row.next_seed, "cuts": cuts} if cuts else {}),
                **new_match(session, length, now),
            )
        except ServiceError as exc:
            return refuse(ctx, session, row, player, answering, str(exc), str(exc), game_id)
        ctx.fault("before-mark")
        return finish(
            ctx,
            session,
            row,
            "applied",
            f"{STARTED} {new_id}: rematch of game {game_id}",
            sender=player.email,
            game_id=new_id,
        )
    open_now = challenge.open_count(session, player)
    if open_now + len(others) > ctx.settings.max_open_invitations:
        return refuse(
            ctx,
            session,
            row,
            player,
            answering,
            f"You may have at most {ctx.settings.max_open_invitations} open invitations; "
            f"you have {open_now}. Write 'cancel' to withdraw them.",
            "over the open invitations limit",
            game_id,
        )
    for seated in others:
        allowed, why = policy.may_invite(ctx, session, player, seated.player.email, now)
        if not allowed:
            return refuse(
                ctx,
                session,
                row,
                player,
                answering,
                f"{seated.player.email} cannot be invited now.",
                f"{seated.player.email}: {why}",
                game_id,
            )
    rules = house_rules(settings.players, settings.target, settings.muggins, settings.skunk)
    rules += f"; a rematch of game {game_id}"
    if length is not None:
        rules += f"; a match, best of {length}"
    stored = {
        "players": settings.players,
        "target": settings.target,
        "muggins": settings.muggins,
        "skunk": settings.skunk,
        "partners": settings.players == 4,
        "challenge": secrets.token_hex(6),
        "rematch_of": game_id,
        "first_dealer": dealer,
        "seats": emails,
        "computer": robots,
        "levels": game_row.settings.get("levels") or {},
        "best_of": length,
        "challenger_joined": writer.proof >= policy.Proof.TOKEN,
    }
    if cuts:
        # The invitations show the commitment the game-over mail showed: each invitee's
        # "accept" is their cut, as this request is the asking player's.
        stored["server_seed"] = game_row.next_seed
        stored["cuts"] = {str(seat): text for seat, text in cuts.items()}
    invited = challenge.send_invitations(
        ctx, session, row, player, None, [s.player.email for s in others], stored, rules, now
    )
    if not invited:
        return refuse(
            ctx,
            session,
            row,
            player,
            answering,
            "Those players cannot be invited now.",
            "no invitation could go",
            game_id,
        )
    invitations.tell(
        ctx,
        session,
        player.email,
        row.id,
        "lobby-invited",
        "Rematch asked",
        f"Asked {', '.join(invited)} for a rematch of game {game_id} ({rules}). The game "
        "starts when everyone accepted; write 'cancel' to withdraw.",
        now,
        answering,
    )
    ctx.fault("before-mark")
    return finish(
        ctx,
        session,
        row,
        "applied",
        f"rematch of game {game_id}: invited {', '.join(invited)}",
        sender=player.email,
        game_id=game_id,
    )


def waiting_rematch(session: Session, game_id: int, emails: list[str]) -> bool:
    """Whether an invitation to a rematch of ``game_id`` is still open."""
    rows = session.exec(
        select(m.Invitation.settings).where(
            m.Invitation.status == m.InvitationStatus.PENDING.value,
            col(m.Invitation.invitee).in_(emails),
        )
    ).all()
    return any(settings.get("rematch_of") == game_id for settings in rows)
