"""The pure Cribbage rules engine: no I/O, no clock, no global randomness.

Public entry points::

    from engine import parse_card, score_show, score_play, new_game, player_view
    card = parse_card("10h")                      # Card 10♥
    items = score_show(hand, starter, crib=False) # breakdown; show_points() for the total
    game = new_game(2, seed="abc", target=121)    # Settings: players, target, skunk, muggins
    game.legal_actions(); game.apply(Play(1, card)); player_view(game, seat)
    archive = to_archive(game); load(archive)     # JSON archive that replays bit for bit
"""

from engine.actions import (
    Accept,
    Action,
    Claim,
    Discard,
    Go,
    Muggins,
    Play,
    Resign,
    action_from_json,
    action_to_json,
)
from engine.archive import dumps, load, replay_archive, to_archive
from engine.cards import Card, Suit, format_cards, full_deck, parse_card, parse_cards, parse_rank
from engine.errors import (
    AmbiguousActionError,
    EngineError,
    IllegalActionError,
    InvalidSyntaxError,
    ReplayError,
)
from engine.game import (
    DISCARD,
    GAME_OVER,
    PEGGING,
    SHOW,
    Event,
    Game,
    Outcome,
    Settings,
    game_value,
    new_game,
    replay,
)
from engine.scoring import ScoreItem, count_words, score_play, score_show, show_points
from engine.view import (
    OBSERVER,
    PlayerView,
    SideScore,
    observer_view,
    player_view,
    visible_events,
)

__all__ = [
    "DISCARD",
    "GAME_OVER",
    "OBSERVER",
    "PEGGING",
    "SHOW",
    "Accept",
    "Action",
    "AmbiguousActionError",
    "Card",
    "Claim",
    "Discard",
    "EngineError",
    "Event",
    "Game",
    "Go",
    "IllegalActionError",
    "InvalidSyntaxError",
    "Muggins",
    "Outcome",
    "Play",
    "PlayerView",
    "ReplayError",
    "Resign",
    "ScoreItem",
    "Settings",
    "SideScore",
    "Suit",
    "action_from_json",
    "action_to_json",
    "count_words",
    "dumps",
    "format_cards",
    "full_deck",
    "game_value",
    "load",
    "new_game",
    "observer_view",
    "parse_card",
    "parse_cards",
    "parse_rank",
    "player_view",
    "replay",
    "replay_archive",
    "score_play",
    "score_show",
    "show_points",
    "to_archive",
    "visible_events",
]
