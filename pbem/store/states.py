"""The states a game, a match, an invitation, a confirmation request, a received message
and an outgoing message can be in.

Plain enums with no database behind them: the command line offers them as choices
(``pbem game list --status``) without loading SQLAlchemy. :mod:`pbem.store.models`
stores them as text.
"""

from __future__ import annotations

from enum import StrEnum


class GameStatus(StrEnum):
    """Where a game stands."""

    # Dealt by the verifiable-deal protocol, waiting for every human seat's cut: no
    # engine seed exists yet (``seed`` is None), so no deal can be computed.
    CUTTING = "cutting"
    ACTIVE = "active"
    PAUSED = "paused"
    FINISHED = "finished"
    ABORTED = "aborted"


class InboundStatus(StrEnum):
    """What became of an inbound message."""

    PENDING = "pending"
    APPLIED = "applied"
    REJECTED = "rejected"
    IGNORED = "ignored"
    FAILED = "failed"


class OutboxStatus(StrEnum):
    """Where an outgoing message is on its way out."""

    PENDING = "pending"
    SENDING = "sending"
    SENT = "sent"
    FAILED = "failed"
    CANCELLED = "cancelled"  # never sent: its game was aborted before it went out


class MatchStatus(StrEnum):
    """Where a match stands."""

    ACTIVE = "active"
    FINISHED = "finished"


class InvitationStatus(StrEnum):
    """Where an invitation to a game started by mail stands."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


class ConfirmationStatus(StrEnum):
    """Where a confirmation request stands."""

    PENDING = "pending"
    CONFIRMED = "confirmed"
    REFUSED = "refused"
    EXPIRED = "expired"
