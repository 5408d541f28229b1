"""matches: ``rematch`` by mail, and matches — several games between the same players.

``rematch`` (in a finished game's thread, or ``rematch N`` to the plain address) asks for
the same players and settings again, the loser dealing first
(`engine.match.first_dealer_after`); any player of the finished game may ask. Against
the computer alone the game starts at once (its first mail answers the request, and it
counts towards ``max_new_games_per_day``); with other people it is an invitation to each
of them (`pbem.service.handle.invitations`: accept / decline with their own tokens, expiry, the
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

from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from engine import Game
from engine.match import MatchScore, first_dealer_after
from pbem.service.context import Context, seats_of
from pbem.service.ops.start import start_game
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
