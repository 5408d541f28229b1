"""Every query of the store in one namespace: plain functions taking a Session.

None of them reads a clock: the time is always the `now` argument.
"""

from __future__ import annotations

from pbem.store.cursors import acquire_lease, load_cursor, release_lease, save_cursor
from pbem.store.games import (
    NewAction,
    append_actions,
    create_game,
    games_for_player,
    get_game,
    list_games,
    load_actions,
    seat_by_token,
    seat_players,
    seats_for_game,
    stalled_games,
)
from pbem.store.inbound import (
    claim_pending_inbound,
    get_inbound,
    list_inbound,
    mark_inbound,
    message_key,
    store_inbound,
)
from pbem.store.outbox import (
    backoff_delay,
    claim_due_outbox,
    enqueue_outbox,
    list_outbox,
    mark_failed,
    mark_sent,
    retry_outbox,
)
from pbem.store.players import (
    get_or_create_player,
    get_player,
    get_player_by_email,
    normalize_email,
    record_bounce,
    reset_bounces,
)
from pbem.store.throttle import error_throttle_allows

__all__ = [
    "NewAction",
    "acquire_lease",
    "append_actions",
    "backoff_delay",
    "claim_due_outbox",
    "claim_pending_inbound",
    "create_game",
    "enqueue_outbox",
    "error_throttle_allows",
    "games_for_player",
    "get_game",
    "get_inbound",
    "get_or_create_player",
    "get_player",
    "get_player_by_email",
    "list_games",
    "list_inbound",
    "list_outbox",
    "load_actions",
    "load_cursor",
    "mark_failed",
    "mark_inbound",
    "mark_sent",
    "message_key",
    "normalize_email",
    "record_bounce",
    "release_lease",
    "reset_bounces",
    "retry_outbox",
    "save_cursor",
    "seat_by_token",
    "seat_players",
    "seats_for_game",
    "stalled_games",
    "store_inbound",
]
