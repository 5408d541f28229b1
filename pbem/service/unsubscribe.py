"""unsubscribe: RFC 8058's one-click unsubscribe, by the seat token in the URI.

A POST to ``unsubscribe_url/TOKEN`` (see `pbem.web`) stops the player of the seat with
that token exactly as the mail command ``stop`` does (`pbem.service.settings`): no mail
from the service but the answers to the player's own mail. No mail is written: the
player asked for none.
"""

from __future__ import annotations

import re

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from pbem.commands import Command
from pbem.service.context import Context
from pbem.service.settings import apply_setting
from pbem.store import models as m
from pbem.store.db import session_scope

# A seat token as `pbem.mail.tokens` reads one: lowercase base32 and digits, 8-64 long.
TOKEN_RE = re.compile(r"[a-z0-9]{8,64}")

STOP = Command("stop", (), "stop")


def is_known(db: Engine, token: str) -> bool:
    """Whether a seat has ``token`` (a read: nothing changes)."""
    if not TOKEN_RE.fullmatch(token):
        return False
    with Session(db) as session:
        return session.exec(select(m.Seat.id).where(col(m.Seat.token) == token)).first() is not None


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
        if player is None:
            return False
        apply_setting(ctx, session, player, STOP, ctx.clock())
    return True
