"""Game moves: the commands that act in a game, and their engine actions::

    discard 5h jd      (also: crib, throw, lay away, toss)
    play 7c            (also: p 7c, or a bare card: 7c; "play 7" or "play a" (an ace)
                        when only one card of that rank is held, else it asks which)
    go
    count 12           (muggins games: claim the count of your hand or crib)
    muggins | accept   (muggins games: take points the last claim missed, or let it stand)
    cut 17 red cats    (a fair game, before its first deal: cut for the deal with any
                        number or words; see the README's "Verifiable deals")
    resign

Here are the move verbs and their other words (`MOVE_ALIASES`), and the reading of a
move's card words. Parsing never looks at the game; `to_action` turns a move into an
engine action for one seat, raising the engine's typed errors.
"""

from __future__ import annotations

from engine import (
    DISCARD,
    Accept,
    Action,
    Claim,
    Discard,
    Game,
    Go,
    IllegalActionError,
    InvalidSyntaxError,
    Muggins,
    Play,
    Resign,
    parse_card,
    parse_rank,
)
from pbem.commands.grammar import ARTICLE, Command

RESIGN_CONFIRM = frozenset({"confirm", "confirmed", "yes"})
"""Words after ``resign`` that confirm it ("resign confirm"): a resignation that scores
more than the last hand would is asked for twice (`pbem.service.game.resign`)."""

GAME_VERBS = ("discard", "play", "go", "count", "muggins", "accept", "resign", "cards")
# ``cut [words]``: a fair game's cut for the deal, before its first deal.
CUT_VERB = "cut"
# ``next [words]``: in answer to the game-over mail of a game of a match, the cut for the
# match's next game (whose commitment that mail showed).
NEXT_VERB = "next"
# The words of each move (a bare card or two is the move "cards": play or discard).
MOVE_ALIASES = {
    "discard": "discard",
    "crib": "discard",
    "throw": "discard",
    "toss": "discard",
    "lay": "discard",
    "layaway": "discard",
    "play": "play",
    "p": "play",
    "peg": "play",
    "go": "go",
    "pass": "go",
    "count": "count",
    "claim": "count",
    "score": "count",
    "muggins": "muggins",
    "accept": "accept",
    "ok": "accept",
    "okay": "accept",
    "agreed": "accept",
    "resign": "resign",
    "concede": "resign",
    "forfeit": "resign",
}
# Ranks in words ("play the king", "an ace"), read by `to_action`.
_RANK_NAMES = {
    "ace": "a",
    "deuce": "2",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "jack": "j",
    "knave": "j",
    "queen": "q",
    "king": "k",
}
_RANK_LABELS = {1: "ace", 10: "ten", 11: "jack", 12: "queen", 13: "king"}


def _card_words(args: tuple[str, ...], need: int) -> tuple[str, ...]:
    """The words naming cards, when a move takes ``need`` cards: with more words than
    that, an "a" before another word is an article ("play a 5"), not an ace; ranks
    in words become the letters `parse_rank` reads ("king" → "k")."""
    if len(args) > need:
        args = tuple(w for i, w in enumerate(args) if w != ARTICLE or i == len(args) - 1)
    return tuple(_RANK_NAMES.get(w, w) for w in args)


def card_words(game: Game, command: Command) -> tuple[str, ...]:
    """The words of a ``play`` or ``discard`` command that name cards, as `to_action`
    reads them (articles dropped, ranks in words as rank letters)."""
    need = 1 if command.verb == "play" else game.settings.discard_count
    return _card_words(command.args, need)


def to_action(game: Game, seat: int, command: Command) -> Action:
    """The engine action ``command`` asks for, for ``seat`` in ``game``.

    Raises ``InvalidSyntaxError`` (unreadable), ``IllegalActionError`` (not
    now, not held) or ``AmbiguousActionError`` (``play 7`` holding two sevens).
    """
    verb, args = command.verb, command.args
    if verb == "cards":
        verb = "discard" if game.phase == DISCARD else "play"
    if verb == "discard":
        args = _card_words(args, game.settings.discard_count)
        if not args:
            raise InvalidSyntaxError("discard which cards? e.g. 'discard 5h jd'")
        cards = tuple(game.resolve_card(seat, a) for a in args)
        return Discard(seat, cards)
    if verb == "play":
        args = _card_words(args, 1)
        if len(args) != 1:
            if not args:
                raise InvalidSyntaxError("play which card? e.g. 'play 7c'")
            raise InvalidSyntaxError(f"play one card at a time, not {' '.join(args)!r}")
        rank = parse_rank(args[0])
        if rank is None:
            parse_card(args[0])  # raises a clear InvalidSyntaxError for junk
        elif all(c.rank != rank for c in game.holding(seat)):
            raise IllegalActionError(f"you hold no {_RANK_LABELS.get(rank, str(rank))}")
        return Play(seat, game.resolve_card(seat, args[0]))
    if verb == "go":
        return Go(seat)
    if verb == "count":
        numbers = [a for a in args if a.isdigit()]
        if len(numbers) != 1:
            raise InvalidSyntaxError("count how many? e.g. 'count 12'")
        return Claim(seat, int(numbers[0]))
    if verb == "muggins":
        return Muggins(seat)
    if verb == "accept":
        return Accept(seat)
    if verb == "resign":
        return Resign(seat)
    raise IllegalActionError(f"{verb!r} is not a move")
