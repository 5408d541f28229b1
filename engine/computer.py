"""The computer players' entry points: from a game to a seat's view, and from a view
to the move its level makes.

``choose_action(game, seat, rng, level)`` returns a legal action for ``seat``. It
builds ``player_view(game, seat)`` and hands only that view to the strategy
(``decide``, the table of levels in :mod:`engine.levels`), so a strategy cannot see
another player's cards or the pack. All randomness comes from the ``random.Random``
passed in, or, without one, from ``view_rng`` of the view.

The service moves a computer seat with ``computer_move(computer_view(game, seat),
level)``, a function of the view and the level alone, which :mod:`engine.audit`
re-derives from an archive.

This module is the top of the computer players: it imports the table of levels,
which imports the strategies (:mod:`engine.players`, :mod:`engine.easy`,
:mod:`engine.strategy.hard`, ...), which import the shared helpers in
:mod:`engine.players`; none of them imports this module.
"""

from __future__ import annotations

import hashlib
import json
import random

from engine.actions import Action
from engine.game import PEGGING, Game
from engine.levels import decide
from engine.view import PlayerView, player_view


def choose_action(
    game: Game, seat: int, rng: random.Random | None = None, level: str = "medium"
) -> Action:
    """A legal action for ``seat``, decided from what that seat may see
    (:func:`engine.levels.decide`: the levels and their strategies are listed there).

    Without ``rng`` the tie-breaks come from `view_rng` of that view: the choice then
    depends on the seat's view only, never on the seed or the undealt pack.
    """
    view = player_view(game, seat, since=hand_start(game))
    return decide(view, rng if rng is not None else view_rng(view), level)


def computer_view(game: Game, seat: int) -> PlayerView:
    """What the computer playing ``seat`` decides from: that seat's `player_view`, its
    events from the start of the current hand (`hand_start`). Nothing else of ``game``
    reaches the decision (`computer_move`)."""
    return player_view(game, seat, since=hand_start(game))


def computer_move(view: PlayerView, level: str) -> Action:
    """The move the service makes for a computer seat at ``level`` seeing ``view``: the
    only legal action when pegging leaves one (a go, a single card: the service plays it
    for anybody), else the level's choice with its tie-breaks drawn from `view_rng`.

    A function of the view and the level alone, so anyone holding the view can re-derive
    it (`engine.audit`). Raises ValueError for an unknown level or a seat with nothing
    to do.
    """
    if view.phase == PEGGING and len(view.legal) == 1:
        return view.legal[0]
    return decide(view, view_rng(view), level)


def view_rng(view: PlayerView) -> random.Random:
    """A random generator seeded from ``view`` alone (its canonical JSON), so a
    computer player's tie-breaks are reproducible and know nothing the seat does not."""
    blob = json.dumps(view.to_json(), sort_keys=True, separators=(",", ":"))
    return random.Random(hashlib.sha256(blob.encode()).hexdigest())


def hand_start(game: Game) -> int:
    """Index of the current hand's public ``deal`` event (older events are not needed)."""
    events = game.events
    for i in range(len(events) - 1, -1, -1):
        if events[i].kind == "deal":
            return i
    return 0


__all__ = [
    "choose_action",
    "computer_move",
    "computer_view",
    "decide",
    "hand_start",
    "view_rng",
]
