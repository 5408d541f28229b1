"""older: an answer to an older mail of the game.

Every turn mail's Message-ID names the game's action count when it was sent
(``g12.sa7.turn.TOKEN@domain``, see `pbem.service.send.turns`). A reply whose In-Reply-To
names an earlier count of the same seat, which has moved since, answers a mail the game
has moved past: a move
it asks for that no longer fits is not refused as if the player had misread their cards
("you do not hold J♥", "You could: wait") — the answer says the mail is older, what was
done since, and shows where the game is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engine import DISCARD, PEGGING, SHOW, Game
from pbem.commands import Command
from pbem.mail.reading import IncomingMail
from pbem.mail.tokens import parse_message_id
from pbem.render import Notice
from pbem.service.context import Seated

_TURN_SEQ = re.compile(r"a(\d{1,9})\.")


def answered_turn(mail: IncomingMail, token: str, domain: str) -> int | None:
    """The action count named by the turn mail of ``token``'s seat that ``mail``
    answers (its In-Reply-To), or None: not one of that seat's turn mails (a click on a
    link starts a new mail and names none)."""
    for ref in mail.in_reply_to:
        ours = parse_message_id(ref, domain)
        if ours is None or ours.token != token.lower():
            continue
        match = _TURN_SEQ.match(ours.seq)
        if match:
            return int(match.group(1))
    return None


def since_words(game: Game, seat: int, seats: Sequence[Seated]) -> str:
    """What the game did since an older mail, as far as ``seat`` may know: "your
    discard is done", "the play of hand 3 is under way", …"""
    hand = game.hand_no
    if game.is_over:
        return "the game is over"
    if game.phase == DISCARD:
        if seat not in game.to_act():
            return "your discard is done"
        return f"hand {hand} is dealt"
    if game.phase == PEGGING:
        turn = game.to_act()
        whose = "your turn" if seat in turn else f"{seats[turn[0]].name}'s turn" if turn else ""
        return f"the discard is done and the play of hand {hand} is under way ({whose})"
    if game.phase == SHOW:
        return f"the play of hand {hand} is over and the hands are being counted"
    return "the game has moved on"


def older_notice(game: Game, seat: int, seats: Sequence[Seated], cmd: Command) -> Notice:
    """The answer to ``cmd`` from an older mail that no longer fits the game."""
    return Notice(
        "already",
        str(cmd),
        f"That mail is older: since it, {since_words(game, seat, seats)} — here is where "
        "the game is. Nothing was changed.",
    )
