"""The turn service: one inbound message → one database transaction, in floors.

``Service.receive`` stores a message's raw bytes first (deduplicated by Message-ID, or
by SHA-256 when it has none) and commits. ``Service.process`` (one message) and
``Service.process_many`` (a batch, its writes held back until one commit) then take each
stored message through the flow, in ONE transaction, and only then mark it done. A
crash anywhere rolls the whole step back; the message stays pending and is processed
again, never twice.

The floors, top down (each imports only from the floors below it:
``tests/pbem/service/test_layers.py`` holds the list):

- ``transaction`` — a message or a batch, one transaction; beside it ``admin`` (the
  admin's operations), ``timers`` (reminders, timeouts, expiry, digests), ``forget``,
  ``audit``, ``site``, ``unsubscribe`` (one-click), each a transaction of its own.
- ``flow`` — one stored message, top to bottom: intake's chain, then its handler.
- ``intake/`` — ``chain.CHAIN`` and ``chain.ROUTES``: one table of named rules (machine
  mail, own address, trusted verdict, size, volume, what the token names, blocked, and
  by that: a seat, an invitation, a confirmation, or the plain address's quieten, lobby,
  stranger, no-game rules). The rule that ended a message is kept on its row.
- ``handle/`` — one handler per kind of mail: ``game`` (a seat's cut, move, rematch,
  next), ``lobby``, ``challenge``, ``invitations``, ``confirmations``, ``watch``,
  ``rematch``, ``plain`` (a player's mail naming no game).
- ``ops/`` — the game operations the handlers share: ``start``, ``cutting``, ``play``,
  ``matches``.
- ``send/`` — the mail they produce, by audience: ``turns`` (to the seats), ``answers``
  (to the writer, in a game), ``outside`` (outside a game: one path that asks the policy
  once), ``envelope``, ``watchers``, ``talk``, ``digest``, ``standings``, ``archive``.
- ``game/`` — what a game keeps, no mail: ``deals``, ``talk``, ``standings``,
  ``settings``, ``away``, ``hints``, ``lines``.
- ``context``, ``moves``, ``policy/`` — what every floor stands on: the `Context`, a
  mail as it passes (`Known`, `Move`), and the one policy every path asks.

Every inbound message ends as ``applied``, ``rejected`` (a known player was told why),
``ignored`` (auto-reply, bounce, unknown sender — with the reason) or ``failed`` (an
unexpected error, kept for the admin).
"""

from pbem.service.admin import DEFAULT_REASONS
from pbem.service.context import (
    ALREADY_PROCESSED,
    Context,
    InjectedFault,
    Outcome,
    Seated,
    ServiceError,
    display_name,
    public_name,
    utcnow,
)
from pbem.service.ops.play import describe_legal
from pbem.service.send.archive import archive_bytes
from pbem.service.send.turns import ARCHIVE_HINT
from pbem.service.transaction import Service

__all__ = [
    "ALREADY_PROCESSED",
    "ARCHIVE_HINT",
    "DEFAULT_REASONS",
    "Context",
    "InjectedFault",
    "Outcome",
    "Seated",
    "Service",
    "ServiceError",
    "archive_bytes",
    "describe_legal",
    "display_name",
    "public_name",
    "utcnow",
]
