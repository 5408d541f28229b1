"""mailbox: the admin's view of one mailbox's consent (``pbem player show``) and the
lifting of its suppression (``pbem player unsuppress``), each a transaction of its own.

Nobody can be silenced for good by someone else: ``never`` and ``stop`` take effect only
from a proven mail, and the admin can always see why a mailbox gets no mail and lift it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session

from pbem.service import policy
from pbem.service.context import Context
from pbem.store.db import session_scope
from pbem.store.players import get_player_by_email


@dataclass(frozen=True)
class MailboxState:
    """What the service holds about one mailbox: the policy's lines, and its player's."""

    lines: list[tuple[str, str]]


def show(ctx: Context, address: str) -> MailboxState:
    """The mailbox of ``address``: its consent state and why (nothing changes)."""
    now = ctx.clock()
    with Session(ctx.db) as session:
        lines = policy.describe(ctx, session, address, now)
        player = get_player_by_email(session, address) or get_player_by_email(
            session, policy.mailbox_of(address)
        )
        if player is None:
            lines.append(("player", "none"))
        else:
            state = ["blocked" if player.blocked else "", "stopped" if player.stopped else ""]
            flags = ", ".join(s for s in state if s) or "plays"
            lines.append(("player", f"{player.email} ({flags}; bounces: {player.bounce_count})"))
    return MailboxState(lines)


def unsuppress(ctx: Context, address: str) -> bool:
    """Take ``address``'s mailbox off the suppression list (whoever put it there);
    whether it was on it."""
    with session_scope(ctx.db) as session:
        return policy.lift(ctx, session, address)
