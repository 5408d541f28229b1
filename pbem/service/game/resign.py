"""resign: a resignation that asks first.

``resign`` cannot be undone, and early in a game it scores far more than a player may
expect (a double skunk at 12 loses four games, and counts in the standings). So a
``resign`` is applied at once only in the last hand of a game it can lose by no more than
a single game; otherwise the mail says what it would score and offers one click that
confirms it (``resign confirm``, sent to the seat's own reply address). Only the
confirmed resign ends the game.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine import Game, Resign
from pbem.commands import Command
from pbem.commands.moves import RESIGN_CONFIRM
from pbem.render import Notice
from pbem.service.context import Seated

CONFIRM = "resign confirm"
"""The command that confirms a resignation (the offered click writes it)."""

LAST_HAND = 31
"""How near the target an opponent stands in what counts as the game's last hand: no
more points than one hand's pegging and show commonly bring."""


def confirmed(cmd: Command) -> bool:
    """Whether ``cmd`` is the confirmed resign ("resign confirm", "resign yes")."""
    return any(word.lower() in RESIGN_CONFIRM for word in cmd.args)


def last_hand(game: Game, seat: int) -> bool:
    """Whether the game is in its last hand for ``seat``'s side: an opponent needs no
    more than `LAST_HAND` points to win."""
    mine = game.side_of(seat)
    target = game.settings.target
    return any(
        target - score <= LAST_HAND for side, score in enumerate(game.scores) if side != mine
    )


def ask_first(game: Game, seat: int, seats: Sequence[Seated], cmd: Command) -> Notice | None:
    """The notice that asks ``seat`` to confirm ``cmd`` (a ``resign``) and says what it
    would score; None when it goes ahead at once: confirmed, or in the last hand of a
    game it loses by a single game."""
    if confirmed(cmd):
        return None
    trial = game.copy()
    trial.apply(Resign(seat))
    outcome = trial.outcome
    assert outcome is not None
    mine = game.side_of(seat)
    value = outcome.game_values.get(mine, 1)
    if value <= 1 and last_hand(game, seat):
        return None
    winners = " and ".join(seats[s].name for s in outcome.winner_seats) or "the others"
    score = min(game.scores[mine], game.settings.target)
    label = {1: "a single game", 2: "a double game", 4: "a quadruple game"}.get(
        value, f"{value} games"
    )
    how = ""
    if value >= 4:
        how = f" (you would be double skunked at {score})"
    elif value >= 2:
        word = "lurched" if game.settings.skunk == "lurch" else "skunked"
        how = f" (you would be {word} at {score})"
    return Notice(
        "confirm",
        str(cmd),
        f"Resigning now ends the game: {winners} would win {label}{how}, and it counts "
        "in the standings. Nothing is done yet: to resign, confirm with one click (or "
        f"reply “{CONFIRM}”); to play on, make your move.",
        offer=CONFIRM,
    )
