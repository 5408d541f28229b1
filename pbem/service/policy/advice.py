"""Who is told how they played: the review of a finished game (`engine.review`).

A review shows a player their own decisions beside the hard computer's: advice, as a
hint is. So it follows the game's hint setting (``game.hints``, kept by
`pbem.service.game.hints`): against the computer the player has it unless they sent
``hints off``; between people only when every one of them sent ``hints on`` — a
review is then no news to anyone, since each could ask for a hint at every move.
"""

from __future__ import annotations

from pbem.store import models as m


def may_review(game_row: m.Game) -> bool:
    """Whether the game-over mail of ``game_row`` (and the replay page it attaches)
    reviews each player's decisions: the game gives hints."""
    return bool(game_row.hints)


__all__ = ["may_review"]
