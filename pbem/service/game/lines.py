"""lines: one game in progress as a player sees it from outside.

`game_line` is a line of "Which game?", of the ``games`` answer and of the daily
digest: the others at the table, whose turn it is, and the player's own reply address
for that game. It reads; it writes nothing and mails nobody.
"""

from __future__ import annotations

from sqlmodel import Session

from pbem.mail.tokens import reply_address
from pbem.render import GameLine
from pbem.service.context import (
    Context,
    load_game,
    seats_of,
)
from pbem.service.game import deals
from pbem.store import models as m


def game_line(ctx: Context, session: Session, game_row: m.Game, player: m.Player) -> GameLine:
    """A game in progress as ``player`` sees it from outside, with their reply address."""
    assert game_row.id is not None
    seats = seats_of(session, game_row.id)
    mine = next(s for s in seats if s.player.id == player.id)
    reply_to = reply_address(ctx.settings.local_part, mine.seat.token, ctx.settings.domain)
    others = tuple(s.name for s in seats if s is not mine)
    if game_row.seed is None:  # a fair game waiting for its cuts
        cutters = deals.waiting(game_row)
        turn = (
            "your cut for the deal"
            if mine.seat.seat in cutters
            else f"waiting for {' and '.join(seats[s].name for s in cutters)} to cut"
        )
        return GameLine(game_id=game_row.id, opponents=others, turn=turn, reply_to=reply_to)
    game = load_game(ctx, session, game_row)
    if game_row.status == m.GameStatus.PAUSED.value:
        turn = "paused by the admin"
    elif mine.seat.seat in game.to_act():
        turn = f"your turn (hand {game.hand_no})"
    else:
        waiting = [seats[s].name for s in game.to_act()]
        turn = f"waiting for {' and '.join(waiting) or 'nobody'} (hand {game.hand_no})"
    info = game_row.match_info
    if info:
        turn += f"; match best of {info.get('best_of')}, game {info.get('game')}"
    return GameLine(
        game_id=game_row.id,
        opponents=tuple(s.name for s in seats if s is not mine),
        turn=turn,
        reply_to=reply_address(ctx.settings.local_part, mine.seat.token, ctx.settings.domain),
    )
