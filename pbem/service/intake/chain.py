"""chain: the route of every stored message, as one table of named rules.

Read `CHAIN` top to bottom: each link names a rule (`pbem.service.intake.rules`), which
passes the message on or ends it. The ``token`` link reads what the mail's reply token
names; `ROUTES` then gives the links for each answer. The rule that ended a message is
kept on its row (``inbound.rule``), logged, and shown by ``pbem inbox list``.

Adding a kind of mail is one row here and one small function in `rules` (or a handler
in `pbem.service.handle` that a rule calls).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from pbem.service.context import Context, Outcome
from pbem.service.intake import rules
from pbem.service.moves import Known
from pbem.store import models as m

log = logging.getLogger("pbem.intake")


@dataclass(frozen=True)
class Link:
    """One row of a chain: the rule's name (as ``inbox list`` shows it), its check, and
    what it stops."""

    rule: str
    check: Callable[[rules.Arrival], Outcome | Known | None]
    stops: str


CHAIN: tuple[Link, ...] = (
    Link("machine", rules.machine_mail, "bounces, auto-replies, loops, no sender: ignored"),
    Link("own-address", rules.own_address, "mail From the service itself: ignored"),
    Link("trusted-verdict", rules.trusted_verdict, "no pass from the trusted server: refused"),
    Link("size", rules.size, "mail too large: a known player is told"),
    Link("token", rules.what_it_names, "nothing: reads what the reply token names"),
    Link("blocked", rules.blocked, "a blocked address: ignored"),
    Link("volume", rules.volume, "unproven mail over the hourly cap: ignored; proven: waits"),
)
"""Every stored message walks these links first, in order."""

ROUTES: dict[str, tuple[Link, ...]] = {
    "seat": (Link("seat", rules.seat, "not the seat's player, or not proven enough"),),
    "invitation": (Link("invitation", rules.invitation_answer, "an answer to an invitation"),),
    "confirmation": (
        Link("confirmation", rules.confirmation_answer, "an answer to a confirmation request"),
        Link("seat", rules.seat, "a player's held mail, confirmed: as their seat's"),
    ),
    "nothing": (
        Link("quieten", rules.quieten, "never / unsubscribe / stop, and start after never"),
        Link("lobby", rules.lobby_command, "a lobby command to the plain address"),
        Link("stranger", rules.stranger, "no player: the open lobby's welcome, or nothing"),
        Link("no-game", rules.no_game, "a player's mail naming no game: which game, settings"),
        Link("seat", rules.seat, "not the seat's player, or not proven enough"),
    ),
}
"""What the reply token names (`rules.Arrival.names`) → the links that follow."""

GAME = "game"
"""The rule name of a seat's mail handed on to its game (`pbem.service.flow`)."""


def identify(ctx: Context, session: Session, row: m.Inbound, now: datetime) -> Known | Outcome:
    """Walk ``row`` down the chain: who wrote it, for which game, and what they ask —
    or the message's final state from the rule that ended it."""
    ctx.rule = CHAIN[0].rule
    arrival = rules.arrive(ctx, session, row, now)
    for link in CHAIN:
        if (ended := walk(ctx, link, arrival)) is not None:
            return ended
    for link in ROUTES[arrival.names]:
        if (ended := walk(ctx, link, arrival)) is not None:
            return ended
    raise AssertionError(f"the route of {arrival.names!r} ends with no rule that ends it")


def walk(ctx: Context, link: Link, arrival: rules.Arrival) -> Known | Outcome | None:
    """One link: the rule's verdict, with its name kept for the message's row."""
    ctx.rule = link.rule
    ended = link.check(arrival)
    if isinstance(ended, Known):
        ctx.rule = GAME
    elif ended is not None:
        log.debug("inbound %s ended by rule %s: %s", arrival.row.id, link.rule, ended.status)
    return ended
