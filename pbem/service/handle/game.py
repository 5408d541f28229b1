"""game: a seat's mail to its game — the cuts, the moves, ``rematch`` and ``next``.

What intake's chain hands on as `Known` comes here (`handle`): a fair game not dealt yet
takes the mail as the seat's cut (`pbem.service.ops.cutting`); ``rematch`` and ``next``
after a game go to `pbem.service.handle.rematch`; everything else is played
(`pbem.service.ops.play`), logged, answered (`pbem.service.send.answers.answer_move`)
and, when the game ends, followed by its match's next step
(`pbem.service.ops.matches.after_game`).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from sqlmodel import Session

from pbem.service.context import Context, Outcome, finish
from pbem.service.handle import rematch
from pbem.service.moves import Known
from pbem.service.ops import cutting, matches, play
from pbem.service.send import answers
from pbem.store import models as m


def handle(ctx: Context, session: Session, row: m.Inbound, known: Known, now: datetime) -> Outcome:
    """Play ``known`` (a seat's proven mail) in its game and answer it; its final state.

    The fault hook's steps "before-log", "before-render" and "before-mark" fall where a
    crash is tested."""
    assert row.id is not None
    if known.game_row.seed is None:  # a fair game not dealt: waiting for the cuts
        move = cutting.play_cut(ctx, session, known, known.message_id)
        cutting.answer_cut(ctx, session, move, row.id, now)
        status, reason, applied = cutting.verdict(move)
        return finish(
            ctx,
            session,
            row,
            status,
            reason,
            sender=known.sender,
            game_id=known.game_row.id,
            applied=applied,
        )
    again = next((c for c in known.commands if c.verb == "rematch"), None)
    if again is not None and (
        known.game_row.status == m.GameStatus.FINISHED.value
        or all(c.verb == "rematch" for c in known.commands)
    ):
        # A rematch is answered on its own (the mail's other lines are not read, but its
        # table talk is passed on); in a game not over, with moves beside it, the moves
        # are played and it is refused.
        said = [c for c in known.commands if c.verb == "say"]
        if said:
            talking = play.play(ctx, session, replace(known, commands=said, ignored=()))
            answers.answer_move(ctx, session, talking, row.id, now)
        return rematch.from_thread(ctx, session, row, known, again)
    following = next((c for c in known.commands if c.verb == "next"), None)
    if following is not None and known.game_row.status == m.GameStatus.FINISHED.value:
        # "next" to a finished game of a match: the cut for its next game.
        return rematch.next_cut(ctx, session, row, known, following)
    move = play.play(ctx, session, known)
    if move.actions:
        ctx.fault("before-log")
        play.record(ctx, session, move, row.id, now)
        ctx.fault("before-render")
    answers.answer_move(ctx, session, move, row.id, now)
    if move.actions and move.game is not None and move.game.is_over:
        matches.after_game(ctx, session, known.game_row, move.game, now)
    status, reason, applied = play.verdict(move)
    if move.actions:
        ctx.fault("before-mark")
    return finish(
        ctx,
        session,
        row,
        status,
        reason,
        sender=known.sender,
        game_id=known.game_row.id,
        applied=applied,
    )
