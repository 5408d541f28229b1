"""The store: SQLModel tables, engines and sessions, queries, and Alembic migrations.

Typical use::

    engine = make_engine(url)
    check_schema(engine)              # or migrate(engine) from `pbem init`
    with session_scope(engine) as session:
        inbound, created = store_inbound(session, raw, "maildir", key, now=now)

Importing the package costs nothing: each name is imported from its module when it is
first used (``pbem.store.GameStatus`` loads ``pbem.store.states``, ``pbem.store.migrate``
loads SQLAlchemy and Alembic), so a command line that only names a status stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pbem.store.db import (
        check_schema,
        current_revision,
        head_revision,
        make_engine,
        migrate,
        new_session,
        normalize_url,
        schema_is_current,
        session_scope,
    )
    from pbem.store.errors import ConcurrentUpdateError, SchemaNotCurrentError, StoreError
    from pbem.store.models import (
        ActionLog,
        ErrorThrottle,
        Game,
        Inbound,
        MailboxCursor,
        Outbox,
        Player,
        Seat,
        WorkerLease,
    )
    from pbem.store.queries import (
        NewAction,
        acquire_lease,
        append_actions,
        backoff_delay,
        claim_due_outbox,
        claim_pending_inbound,
        create_game,
        enqueue_outbox,
        error_throttle_allows,
        games_for_player,
        get_game,
        get_inbound,
        get_or_create_player,
        get_player,
        get_player_by_email,
        list_games,
        list_inbound,
        list_outbox,
        load_actions,
        load_cursor,
        mark_failed,
        mark_inbound,
        mark_sent,
        message_key,
        normalize_email,
        record_bounce,
        release_lease,
        reset_bounces,
        retry_outbox,
        save_cursor,
        seat_by_token,
        seat_players,
        seats_for_game,
        stalled_games,
        store_inbound,
    )
    from pbem.store.states import GameStatus, InboundStatus, OutboxStatus

_HOMES: dict[str, str] = {
    "ActionLog": "pbem.store.models",
    "ConcurrentUpdateError": "pbem.store.errors",
    "ErrorThrottle": "pbem.store.models",
    "Game": "pbem.store.models",
    "GameStatus": "pbem.store.states",
    "Inbound": "pbem.store.models",
    "InboundStatus": "pbem.store.states",
    "MailboxCursor": "pbem.store.models",
    "NewAction": "pbem.store.queries",
    "Outbox": "pbem.store.models",
    "OutboxStatus": "pbem.store.states",
    "Player": "pbem.store.models",
    "SchemaNotCurrentError": "pbem.store.errors",
    "Seat": "pbem.store.models",
    "StoreError": "pbem.store.errors",
    "WorkerLease": "pbem.store.models",
    "acquire_lease": "pbem.store.queries",
    "append_actions": "pbem.store.queries",
    "backoff_delay": "pbem.store.queries",
    "check_schema": "pbem.store.db",
    "claim_due_outbox": "pbem.store.queries",
    "claim_pending_inbound": "pbem.store.queries",
    "create_game": "pbem.store.queries",
    "current_revision": "pbem.store.db",
    "enqueue_outbox": "pbem.store.queries",
    "error_throttle_allows": "pbem.store.queries",
    "games_for_player": "pbem.store.queries",
    "get_game": "pbem.store.queries",
    "get_inbound": "pbem.store.queries",
    "get_or_create_player": "pbem.store.queries",
    "get_player": "pbem.store.queries",
    "get_player_by_email": "pbem.store.queries",
    "head_revision": "pbem.store.db",
    "list_games": "pbem.store.queries",
    "list_inbound": "pbem.store.queries",
    "list_outbox": "pbem.store.queries",
    "load_actions": "pbem.store.queries",
    "load_cursor": "pbem.store.queries",
    "make_engine": "pbem.store.db",
    "mark_failed": "pbem.store.queries",
    "mark_inbound": "pbem.store.queries",
    "mark_sent": "pbem.store.queries",
    "message_key": "pbem.store.queries",
    "migrate": "pbem.store.db",
    "new_session": "pbem.store.db",
    "normalize_email": "pbem.store.queries",
    "normalize_url": "pbem.store.db",
    "record_bounce": "pbem.store.queries",
    "release_lease": "pbem.store.queries",
    "reset_bounces": "pbem.store.queries",
    "retry_outbox": "pbem.store.queries",
    "save_cursor": "pbem.store.queries",
    "schema_is_current": "pbem.store.db",
    "seat_by_token": "pbem.store.queries",
    "seat_players": "pbem.store.queries",
    "seats_for_game": "pbem.store.queries",
    "session_scope": "pbem.store.db",
    "stalled_games": "pbem.store.queries",
    "store_inbound": "pbem.store.queries",
}


def __getattr__(name: str) -> Any:
    """``pbem.store.NAME``: imported from its module on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "ActionLog",
    "ConcurrentUpdateError",
    "ErrorThrottle",
    "Game",
    "GameStatus",
    "Inbound",
    "InboundStatus",
    "MailboxCursor",
    "NewAction",
    "Outbox",
    "OutboxStatus",
    "Player",
    "SchemaNotCurrentError",
    "Seat",
    "StoreError",
    "WorkerLease",
    "acquire_lease",
    "append_actions",
    "backoff_delay",
    "check_schema",
    "claim_due_outbox",
    "claim_pending_inbound",
    "create_game",
    "current_revision",
    "enqueue_outbox",
    "error_throttle_allows",
    "games_for_player",
    "get_game",
    "get_inbound",
    "get_or_create_player",
    "get_player",
    "get_player_by_email",
    "head_revision",
    "list_games",
    "list_inbound",
    "list_outbox",
    "load_actions",
    "load_cursor",
    "make_engine",
    "mark_failed",
    "mark_inbound",
    "mark_sent",
    "message_key",
    "migrate",
    "new_session",
    "normalize_email",
    "normalize_url",
    "record_bounce",
    "release_lease",
    "reset_bounces",
    "retry_outbox",
    "save_cursor",
    "schema_is_current",
    "seat_by_token",
    "seat_players",
    "seats_for_game",
    "session_scope",
    "stalled_games",
    "store_inbound",
]
