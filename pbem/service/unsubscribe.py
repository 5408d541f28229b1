"""unsubscribe: RFC 8058's one-click unsubscribe, by the token in the URI.

A POST to ``unsubscribe_url/TOKEN`` (see `pbem.listen.unsubscribe`) with a seat's token
stops the seat's player exactly as the mail command ``stop`` does
(`pbem.service.game.settings`): no mail from the service but the answers to the
player's own mail. With an invitation's token (its
``List-Unsubscribe``), the invited mailbox goes on the suppression list as ``never`` by
mail does (`pbem.service.policy.suppress`). No mail is written: they asked for none.
"""

from __future__ import annotations

import re

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from pbem.commands import Command
from pbem.service import policy
from pbem.service.context import Context
from pbem.service.game.settings import apply_setting
from pbem.store import models as m
from pbem.store.db import session_scope

# A seat token as `pbem.mail.tokens` reads one: lowercase base32 and digits, 8-64 long.
TOKEN_RE = re.compile(r"[a-z0-9]{8,64}")

STOP = Command("stop", (), "stop")


def is_known(db: Engine, token: str) -> bool:
    """Whether a seat or an invitation has ``token`` (a read: nothing changes)."""
    if not TOKEN_RE.fullmatch(token):
        return False
    with Session(db) as session:
        if session.exec(select(m.Seat.id).where(col(m.Seat.token) == token)).first():
            return True
        found = session.exec(select(m.Invitation.id).where(col(m.Invitation.token) == token))
        return found.first() is not None


def unsubscribe(ctx: Context, token: str) -> bool:
    """Stop the player of the seat with ``token``, in one transaction. False when no seat
    has that token (or it is not a token), and nothing changes."""
    if not TOKEN_RE.fullmatch(token):
        return False
    with session_scope(ctx.db) as session:
        player = session.exec(
            select(m.Player)
            .join(m.Seat, col(m.Seat.player_id) == col(m.Player.id))
            .where(col(m.Seat.token) == token)
        ).first()
        if player is not None:
            apply_setting(ctx, session, player, STOP, ctx.clock())
            return True
        invitee = session.exec(
            select(m.Invitation.invitee).where(col(m.Invitation.token) == token)
        ).first()
        if invitee is None:
            return False
        policy.suppress(ctx, session, invitee, "unsubscribe", ctx.clock(), days=None)
    return True
