"""matches: ``rematch`` by mail, and matches — several games between the same players.

``rematch`` (in a finished game's thread, or ``rematch N`` to the plain address) asks for
the same players and settings again, the loser dealing first
(`engine.match.first_dealer_after`); any player of the finished game may ask. Against
the computer alone the game starts at once (its first mail answers the request, and it
counts towards ``max_new_games_per_day``); with other people it is an invitation to each
of them (`pbem.service.invitations`: accept / decline with their own tokens, expiry, the
open-invitations limit, and no invitation to an address that is blocked, bounced or said
``stop``), and the game starts, in the same seats, once everyone accepted. A game is
rematched once: asking again says "already rematched: game N" (or that the rematch waits
for answers).

A match (``[match] best of 3|5|7`` on ``new``, ``play computer``, ``challenge`` or
``rematch``) is a `m.Match` row and its games. The rule: a game won is worth one game
point, a lurched or skunked loss two, a double skunk four (the engine's
``Outcome.value``, as `engine.match.MatchScore` adds them up); the first side with a
majority of ``best_of`` points (2 of 3, 3 of 5, 4 of 7) wins the match. When a game of a
match ends and the match is not decided, `after_game` starts the next one at once, the
loser dealing first; each game carries where the match stood when it began
(``Game.match_info``), which every mail of the game shows in its header.
"""

from __future__ import annotations

import secrets
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from engine import Game, InvalidSyntaxError
from engine.match import MatchScore, first_dealer_after
from pbem.commands import CUT_VERB, Command, rematch_words, words_after
from pbem.render.board import house_rules
from pbem.service import cutting, invitations
from pbem.service.context import Context, Outcome, ServiceError, finish, load_game, seats_of
from pbem.service.cutting import cut_text
from pbem.service.games import start_game
from pbem.service.play import Known
from pbem.store import models as m
from pbem.store._sql import update_row

ACTIVE = m.MatchStatus.ACTIVE.value


def new_match(session: Session, best_of: int | None, now: datetime) -> dict[str, Any]:
    """A new match of ``best_of`` games (none when ``best_of`` is None): the keyword
    arguments of `start_game` for its first game."""
    if best_of is None:
        return {}
    match = m.Match(best_of=best_of, status=ACTIVE, score=[], created_at=now)
    session.add(match)
    session.flush()
    return {"match_id": match.id, "match_info": {"best_of": best_of, "game": 1, "before": []}}


def levels_of(settings: dict[str, Any]) -> dict[int, str]:
    """The computer seats' levels kept in a game's (or an invitation's) settings, seat by
    seat, so that a rematch or the next game of a match plays the same computer."""
    stored = settings.get("levels") or {}
    if not isinstance(stored, dict):
        return {}
    return {int(seat): str(level) for seat, level in stored.items() if str(seat).isdigit()}


def match_words(game_row: m.Game) -> str:
    """``match best of 5, game 2`` for a game of a match; empty for a single game."""
    info = game_row.match_info
    if not info:
        return ""
    return f"match best of {info.get('best_of')}, game {info.get('game')}"


def next_of(session: Session, game_id: int) -> m.Game | None:
    """The game that followed ``game_id`` (its rematch, or the next game of its match)."""
    return session.exec(
        select(m.Game).where(m.Game.rematch_of == game_id).order_by(col(m.Game.id))
    ).first()


def after_game(
    ctx: Context, session: Session, game_row: m.Game, game: Game, now: datetime
) -> int | None:
    """When ``game`` (a game of a match) is over: count it in its match, and start the
    next game (the loser dealing first) unless a side has won the match. The next game's
    id, or None."""
    if not game.is_over or game.outcome is None or game_row.match_id is None:
        return None
    assert game_row.id is not None
    if next_of(session, game_row.id) is not None:
        return None
    match = session.get(m.Match, game_row.match_id, with_for_update=True)
    if match is None or match.status != ACTIVE:
        return None
    info = game_row.match_info or {}
    sides = len(game.outcome.scores)
    before = [int(n) for n in info.get("before", ())][:sides]
    tally = MatchScore(sides, before + [0] * (sides - len(before)))
    tally.add(game.outcome)
    score = tally.games
    if max(score) >= match.best_of // 2 + 1:
        update_row(
            session,
            match,
            score=score,
            status=m.MatchStatus.FINISHED.value,
            winner_side=game.outcome.winner,
            finished_at=now,
        )
        return None
    update_row(session, match, score=score)
    # A fair game's next game is dealt from the seed whose commitment its game-over mail
    # showed: each player's "next" in answer is their cut (`next_cut`), and that mail
    # asked for it, so no cut request goes out now.
    fair: dict[str, Any] = (
        {"server_seed": game_row.next_seed, "ask_cut": False} if game_row.next_seed else {}
    )
    return start_again(
        ctx,
        session,
        game_row,
        game,
        match_id=match.id,
        match_info={
            "best_of": match.best_of,
            "game": int(info.get("game", 1)) + 1,
            "before": score,
        },
        **fair,
    )


def start_again(ctx: Context, session: Session, game_row: m.Game, game: Game, **extra: Any) -> int:
    """A new game of ``game_row``'s players in the same seats, with its house rules and
    computer levels, the loser of ``game`` dealing first (the next game of a match, or a
    rematch against the computer). ``extra``: more `start_game` arguments."""
    assert game_row.id is not None
    settings = game.settings
    seats = seats_of(session, game_row.id)
    # Who joined the game before joins this one; the others still get one mail only.
    extra.setdefault("joined", [s.player.email for s in seats if s.seat.joined])
    return start_game(
        ctx,
        session,
        [(s.player.email, s.player.display_name) for s in seats],
        target=settings.target,
        muggins=settings.muggins,
        skunk=settings.skunk,
        computer=sorted(int(s) for s in game_row.settings.get("computer", ())),
        levels=levels_of(game_row.settings),
        first_dealer=first_dealer_after(game),
        rematch_of=game_row.id,
        **extra,
    )


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
    from pbem.service import policy
    from pbem.service.lobby import STARTED

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
            from pbem.service.lobby import limit_words

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
    open_now = invitations.open_count(session, player)
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
    invited = invitations.send_invitations(
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
