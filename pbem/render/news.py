"""Whether a player needs a mail: what they can do now and what they newly know.

A player is mailed when something they need to know happened since their last mail — not
after each of their own moves, and not twice with the same question. `mail_state` is a
short digest of what a view asks of its player (nothing, or the legal moves of one
moment of one hand); `worth_mailing` compares it with the digest of the player's last
mail and looks for news among the events the player has not been told of yet.
"""

from __future__ import annotations

import hashlib
import json

from engine import PlayerView, action_to_json

# Events a player is always told of: a new hand, the starter, a count, a claim and its
# answer, the end of the game. Any event that pegs points is news too.
NEWS_KINDS = frozenset(
    {"draw", "deal", "starter", "show", "claim", "muggins", "reveal", "game_over", "resign"}
)


def mail_state(view: PlayerView) -> str:
    """A digest of what ``view`` asks of its player: equal for two views that ask the
    same thing (the same moves in the same hand and stage), different otherwise."""
    if view.outcome is not None:
        return "over"
    if not (view.my_turn and view.legal):
        return "wait"
    what = [
        view.hand_no,
        view.phase,
        list(view.show_entry or ()),
        view.awaiting_muggins,
        [action_to_json(a) for a in view.legal],
    ]
    text = json.dumps(what, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def is_news(view: PlayerView) -> bool:
    """Whether ``view.events`` (what happened since the player's last mail) holds
    something every player must be told: points pegged or one of `NEWS_KINDS`."""
    return any(e.points or e.kind in NEWS_KINDS for e in view.events)


def worth_mailing(view: PlayerView, last_state: str | None) -> bool:
    """Whether the player of ``view`` needs a mail now, their last mail having asked
    ``last_state`` (`mail_state`; None: no mail yet, or not known).

    Yes at the end of the game, when it is their turn and their last mail did not ask
    for exactly this, and when something happened that every player must be told.
    """
    state = mail_state(view)
    if last_state is None or state == "over":
        return True
    if state not in ("wait", last_state):
        return True
    return is_news(view)
