"""The flow of one stored message through the stages, in the caller's transaction."""

from __future__ import annotations

from dataclasses import replace

from sqlmodel import Session

from pbem.service import cutting, intake, matches, notify, play
from pbem.service.context import Context, Outcome, finish
from pbem.store import models as m


def handle(ctx: Context, session: Session, row: m.Inbound) -> Outcome:
    """Take ``row`` through intake → play → notify and mark it done; its final state.

    Writes nothing that is not rolled back with the transaction; the fault hook's steps
    ("read", "before-log", "before-render", "before-mark") fall where a crash is tested.
    """
    now = ctx.clock()
    assert row.id is not None
    ctx.fault("read")
    known = intake.identify(ctx, session, row, now)
    if isinstance(known, Outcome):
        return known
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
    rematch = next((c for c in known.commands if c.verb == "rematch"), None)
    if rematch is not None and (
        known.game_row.status == m.GameStatus.FINISHED.value
        or all(c.verb == "rematch" for c in known.commands)
    ):
        # A rematch is answered on its own (the mail's other lines are not read, but its
        # table talk is passed on); in a game not over, with moves beside it, the moves
        # are played and it is refused.
        said = [c for c in known.commands if c.verb == "say"]
        if said:
            talking = play.play(ctx, session, replace(known, commands=said, ignored=()))
            notify.answer_move(ctx, session, talking, row.id, now)
        return matches.from_thread(ctx, session, row, known, rematch)
    following = next((c for c in known.commands if c.verb == "next"), None)
    if following is not None and known.game_row.status == m.GameStatus.FINISHED.value:
        # "next" to a finished game of a match: the cut for its next game.
        return matches.next_cut(ctx, session, row, known, following)
    move = play.play(ctx, session, known)
    if move.actions:
        ctx.fault("before-log")
        play.record(ctx, session, move, row.id, now)
        ctx.fault("before-render")
    notify.answer_move(ctx, session, move, row.id, now)
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
