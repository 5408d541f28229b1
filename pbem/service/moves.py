"""moves: what one mail is as it passes between the stages.

`Known` is what intake hands on: the sender, the game, the seat and the commands of the
mail. `Move` is what `pbem.service.ops.play` (or the cut phase) made of it: the actions
to log, the notices, what was asked, what the others are told. Both are plain data, so
the mail layer can read a move without importing the operations that made it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engine import (
    Game,
)
from pbem.commands import Command, Parsed, parse_reply
from pbem.mail.reading import IncomingMail, reply_subject
from pbem.render import Notice
from pbem.service.context import (
    Seated,
)
from pbem.store import models as m

Logged = tuple[int | None, dict[str, Any], bool]
"""An action to log: its seat, its JSON, and whether it was made for the player."""


@dataclass
class Known:
    """A mail whose sender and game intake knows: what it asks, and of which seat."""

    game_row: m.Game
    seats: list[Seated]
    seat: int
    sender: str
    commands: Sequence[Command]
    ignored: Sequence[str]
    # No reply token: written to the plain address and routed to the player's only game.
    tokenless: bool = False
    # The mail's stored id and its Message-ID, with its angle brackets (answers are
    # threaded after it; a cut's entropy names it).
    inbound_id: int | None = None
    message_id: str | None = None
    # The action count named by the seat's turn mail it answers (its In-Reply-To): the
    # game has moved past that mail when its count is lower now (`game.older`).
    answered_turn: int | None = None


@dataclass
class Move:
    """A known mail, played: the actions to log and what to answer."""

    known: Known
    game: Game | None = None
    since: int = 0
    notices: list[Notice] = field(default_factory=list)
    wants: list[str] = field(default_factory=list)
    actions: list[Logged] = field(default_factory=list)
    # Refused before the engine saw it (no command, the game not active): the reason.
    refusal: str | None = None
    # What the game's other players are told (``hints on|off``, ``observers on|off``).
    tell_others: list[str] = field(default_factory=list)
    # A fair game's last cut dealt the cards (`pbem.service.ops.cutting`).
    dealt: bool = False
    # The table talk stored (``say``), relayed by notify.
    said: list[m.Talk] = field(default_factory=list)


def answered_only(move: Move) -> bool:
    """Nothing to log, nothing refused: only questions, moves already made, or a step
    waiting for its confirmation (the player gets where the game stands)."""
    already = any(n.status in ("already", "confirm") for n in move.notices)
    return (
        not move.actions
        and move.refusal is None
        and bool(move.wants or already)
        and not any(n.status in ("refused", "ambiguous") for n in move.notices)
    )


def read_commands(mail: IncomingMail, sent: str = "") -> Parsed:
    """The commands of a mail: its reply text's, or its subject's when the text holds
    none — never one of the service's own subjects (`pbem.commands.reads_subject`);
    ``sent``: the Subject of the game it answers, whose edited copy is read
    (`pbem.mail.reading.reply_subject`)."""
    return parse_reply(mail.reply_text or "", reply_subject(mail.subject or "", sent=sent))
