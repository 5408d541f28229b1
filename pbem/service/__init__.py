"""The turn service: one inbound message → one database transaction, in stages.

``Service.receive`` stores a message's raw bytes first (deduplicated by Message-ID, or
by SHA-256 when it has none) and commits. ``Service.process`` (one message) and
``Service.process_many`` (a batch, its writes held back until one commit) then take each
stored message through the stages, in ONE transaction, and only then mark it done. A
crash anywhere rolls the whole step back; the message stays pending and is processed
again, never twice.

One move, stage by stage (`flow.handle` reads the same, top to bottom):

1. ``transaction`` — locks the pending message (a batch: all of them, reading them and
   looking up the games their reply tokens name in one query) and opens a `Context`:
   settings, database, clock, fault hook, the game cache, and the batch's held-back mail.
2. ``intake.identify`` — reads the mail; drops machines (bounce, auto-reply, loop), mail
   too large, a sender over the hourly cap; then who is this: the reply token's game and
   seat, the From of that seat (+tags, the DMARC verdict), or the plain address routed to
   the player's only game ("Which game?" otherwise). Ends with a `Known` sender and game
   and the commands of their mail — or the message's final state.
3. ``play.play`` — each command → an engine action, applied, with the forced moves and
   computer seats after it; refused, ambiguous and "already done" commands become
   notices; questions (hand, history, help, archive) are noted, and the player's own
   settings (``mail``, ``name``, ``stop``/``start``, ``away``/``back``: `settings`,
   `away`) applied.
   ``play.record`` appends the new actions to the log and restarts the game's clocks.
4. ``notify.answer_move`` — the player views → the mails of this move (turn mails to
   whoever has news or a turn, or the reply with where the game stands or what could not
   be done, history, help, the archive) → the outbox.
5. ``play.verdict`` and ``context.finish`` — the message's final state (applied,
   rejected, ignored), and the transaction commits: the moves, their mail and the
   message marked done together.

Beside the flow: ``games`` (the admin's operations: new, rematch, resend, pause / resume
/ abort, export, import) and ``timers`` (reminders, timeouts — waiting for a player who is
away — and invitations' expiry), each a transaction of its own. Intake hands mail to the
plain address that asks for the lobby (``new``, ``challenge``, ``cancel``, ``games``), and
answers to invitations, to ``lobby`` and ``invitations``, in the message's transaction.

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
