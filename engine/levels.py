"""The computer players by name: one table from a level to its strategy.

A *strategy* is a function ``(PlayerView, random.Random) -> Action``: it sees
only what its seat may see and draws any randomness from the generator it is
given.  ``STRATEGIES`` maps every name to one; adding a player is adding a line
(and, when players may choose it, its name in ``LEVELS``).

``LEVELS``
    What players may choose: ``easy`` (``medium`` with deliberate human slips,
    :mod:`engine.easy`), ``medium`` (:func:`engine.players.good_action`) and
    ``hard`` (:mod:`engine.strategy.hard`: realistic crib tables, exact pegging
    search over sampled hidden cards, win probability near the end).
``ALIASES``
    Old names still accepted: ``good`` is ``medium`` (games stored before the
    levels were renamed keep working).
``BASELINES``
    Yardsticks for the arena (``python -m engine.arena``), not offered to
    players: ``random``, ``greedy`` (:mod:`engine.baselines`) and ``bsd``
    (:mod:`engine.bsd`).

The table sits between the strategies, which it imports (and which import the shared
helpers of :mod:`engine.players`, never this module), and the entry points of
:mod:`engine.computer` (``choose_action``, ``computer_move``, ...), which import it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.actions import Action
    from engine.view import PlayerView

    Strategy = Callable[[PlayerView, random.Random], Action]

    STRATEGIES: dict[str, Strategy]

LEVELS: tuple[str, ...] = ("easy", "medium", "hard")
BASELINES: tuple[str, ...] = ("random", "greedy", "bsd")
ALIASES: dict[str, str] = {"good": "medium"}


def _table() -> dict[str, Strategy]:
    """``STRATEGIES``, built on first use: the strategies (the hard level's tables and
    numpy among them) load only when a computer player is asked to move, so naming the
    levels (a command line's help, a player's "level" reply) costs nothing."""
    table: dict[str, Strategy] | None = globals().get("STRATEGIES")
    if table is None:
        from engine.baselines import greedy_action
        from engine.bsd import bsd_action
        from engine.easy import easy_action
        from engine.players import good_action, random_action
        from engine.strategy.hard import hard_action

        table = {
            "easy": easy_action,
            "medium": good_action,
            "hard": hard_action,
            "random": random_action,
            "greedy": greedy_action,
            "bsd": bsd_action,
        }
        globals()["STRATEGIES"] = table
    return table


def __getattr__(name: str) -> Any:
    """``STRATEGIES``: every name to its strategy function, built on first use."""
    if name == "STRATEGIES":
        return _table()
    if name == "Strategy":
        from engine.actions import Action
        from engine.view import PlayerView

        return Callable[[PlayerView, random.Random], Action]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def all_names() -> tuple[str, ...]:
    """Every name ``decide`` accepts: the levels, the baselines and the aliases."""
    return (*LEVELS, *BASELINES, *ALIASES)


def canonical(level: str) -> str:
    """The strategy name for ``level`` (an alias resolved); ValueError if unknown."""
    name = ALIASES.get(level, level)
    if name not in LEVELS and name not in BASELINES and name not in _table():
        raise ValueError(f"unknown level {level!r}; choose from {', '.join(all_names())}")
    return name


def strategy(level: str) -> Strategy:
    """The strategy function for ``level``; ValueError if unknown."""
    return _table()[canonical(level)]


def decide(view: PlayerView, rng: random.Random, level: str = "medium") -> Action:
    """The action of the computer player ``level`` seeing only ``view``.

    ``view.events`` should reach back at least to the start of the current hand
    (the gos said this hand and, in muggins games, the claim being answered).
    Raises ValueError for an unknown level or a seat with nothing to do.
    """
    play = strategy(level)
    if not view.legal:
        raise ValueError(f"seat {view.seat} has nothing to do now")
    return play(view, rng)


__all__ = [
    "ALIASES",
    "BASELINES",
    "LEVELS",
    "STRATEGIES",
    "Strategy",
    "all_names",
    "canonical",
    "decide",
    "strategy",
]
