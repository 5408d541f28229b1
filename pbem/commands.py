"""The email command language: reply text → commands → engine actions.

One command per line (``;`` also separates commands; the subject may carry one).
Case does not matter, punctuation around words is ignored::

    discard 5h jd      (also: crib, throw, lay away, toss)
    play 7c            (also: p 7c, or a bare card: 7c; "play 7" or "play a" (an ace)
                        when only one card of that rank is held, else it asks which)
    go
    count 12           (muggins games: claim the count of your hand or crib)
    muggins | accept   (muggins games: take points the last claim missed, or let it stand)
    hand | status      (send me my view again)
    history            (the moves so far)
    mail all | turns   (a mail after every move, or only when there is news: the default)
    mail text | html | both  (which parts the mails carry: both is the default)
    name Alice Smith   (the name the other players see)
    stop | start       (no mail but the answers to my own mail; and back again)
    away 5 days | back (my clocks stop for a while — a few weeks a game at most; or not)
    digest | digest off (one mail a day with the games waiting on me, not a mail per move)
    observers on | off (whether others may watch this game; all players must agree to on)
    archive            (a finished game's JSON archive, to replay and verify)
    resign
    help

Parsing never looks at the game; ``to_action`` turns a game command into an
engine action for one seat, raising the engine's typed errors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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

GAME_VERBS = ("discard", "play", "go", "count", "muggins", "accept", "resign", "cards")
INFO_VERBS = ("hand", "history", "help", "archive")
# The player's own settings, taken in any state of the game (and without a game).
SETTING_VERBS = ("mail", "name", "stop", "start", "away", "back", "digest")
# ``mail all`` / ``mail turns``: the words of each choice (True: a mail after every move).
MAIL_CHOICES = {
    "all": True,
    "every": True,
    "each": True,
    "always": True,
    "turns": False,
    "turn": False,
    "news": False,
    "less": False,
    "fewer": False,
}

_ALIASES = {
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
    "hand": "hand",
    "status": "hand",
    "board": "hand",
    "show": "hand",
    "cards?": "hand",
    "history": "history",
    "log": "history",
    "moves": "history",
    "resign": "resign",
    "concede": "resign",
    "forfeit": "resign",
    "help": "help",
    "archive": "archive",
    "record": "archive",
    "export": "archive",
    "mail": "mail",
    "mails": "mail",
    "email": "mail",
    "emails": "mail",
    "?": "help",
    "commands": "help",
}
_FILLER = {"away", "the", "and", "&", "to", "my", "please", "card", "cards", "i", "will", "an"}
# "a" is both the ace and an article: it is dropped before "card" ("play a card"), kept as
# an ace when it is the only card word ("play a"), and read by `to_action` as an article
# when there are more card words than the move takes ("I play a 5", "throw a 5 and a k").
_ARTICLE = "a"
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
_LEADING = {"i", "ll", "i’ll", "ill", "will", "let", "s", "let’s", "lets", "then"}
_TOKEN_RE = re.compile(r"[^\s,;:.!()\[\]\"']+")
_MAX_LINES = 40


@dataclass(frozen=True, slots=True)
class Command:
    """One command as read: the verb and its words, with the line it came from."""

    verb: str
    args: tuple[str, ...]
    line: str

    def __str__(self) -> str:
        return " ".join((self.verb, *self.args)) if self.verb != "cards" else " ".join(self.args)


@dataclass(frozen=True, slots=True)
class Parsed:
    """What a reply said: commands in order, and the lines that were not commands."""

    commands: tuple[Command, ...]
    ignored: tuple[str, ...]


def _is_card_word(word: str) -> bool:
    try:
        parse_card(word)
    except InvalidSyntaxError:
        return False
    return True


def parse_line(line: str) -> Command | None:
    """One line → a command, or None when the line is not a command."""
    words = _TOKEN_RE.findall(line.strip().lower())
    if not words:
        return None
    if words[:2] == ["no", "muggins"]:
        return Command("accept", (), line.strip())
    while len(words) > 1 and words[0] in _LEADING:
        words = words[1:]  # "I resign", "I'll play 7c", "let's go"
    head = words[0]
    verb = _ALIASES.get(head)
    rest = _arguments(words[1:])
    if verb is None:
        # A bare card or cards: "7c", "5h jd", "♥5".
        if all(_is_card_word(w) for w in words) and len(words) <= 2:
            return Command("cards", tuple(words), line.strip())
        return None
    if verb in ("go", "muggins", "accept", "hand", "history", "help", "resign", "archive"):
        # Allow trailing politeness ("go!", "help please") but not stray arguments.
        if verb in ("go", "accept", "muggins") and any(_is_card_word(w) for w in rest):
            return None
        return Command(verb, (), line.strip())
    if verb == "mail" and rest and not any(w in MAIL_CHOICES or w in MAIL_PARTS for w in rest):
        return None  # "mail me later": not the mail setting
    if verb in _SETTING_ALIASES.values():
        return _setting_command(verb, words, rest, line)
    return Command(verb, tuple(rest), line.strip())


def _arguments(words: list[str]) -> list[str]:
    """The words after a verb without the fillers; "a" goes only before "card(s)"."""
    out: list[str] = []
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        if word in _FILLER or (word == _ARTICLE and following in ("card", "cards")):
            continue
        out.append(word)
    return out


def _card_words(args: tuple[str, ...], need: int) -> tuple[str, ...]:
    """The words naming cards, when a move takes ``need`` cards: with more words than
    that, an "a" before another word is an article ("play a 5"), not an ace; ranks
    in words become the letters `parse_rank` reads ("king" → "k")."""
    if len(args) > need:
        args = tuple(w for i, w in enumerate(args) if w != _ARTICLE or i == len(args) - 1)
    return tuple(_RANK_NAMES.get(w, w) for w in args)


def card_words(game: Game, command: Command) -> tuple[str, ...]:
    """The words of a ``play`` or ``discard`` command that name cards, as `to_action`
    reads them (articles dropped, ranks in words as rank letters)."""
    need = 1 if command.verb == "play" else game.settings.discard_count
    return _card_words(command.args, need)


_RANK_LABELS = {1: "ace", 10: "ten", 11: "jack", 12: "queen", 13: "king"}


def mail_choice(command: Command) -> bool:
    """``True`` for ``mail all`` (a mail after every move), ``False`` for ``mail turns``.

    Raises ``InvalidSyntaxError`` when the words name neither.
    """
    choices = {MAIL_CHOICES[w] for w in command.args if w in MAIL_CHOICES}
    if len(choices) != 1:
        raise InvalidSyntaxError("mail how often? 'mail all' (after every move) or 'mail turns'")
    return choices.pop()


_SPLIT_RE = re.compile(r"[;\n]|\bthen\b", re.IGNORECASE)


def parse_reply(text: str, subject: str = "") -> Parsed:
    """All the commands in a reply's text (and its subject, read first)."""
    commands: list[Command] = []
    ignored: list[str] = []
    if subject.strip():
        cmd = parse_line(subject)
        if cmd is not None:
            commands.append(cmd)
    lines = [part.strip() for part in _SPLIT_RE.split(text or "")]
    for line in [ln for ln in lines if ln][:_MAX_LINES]:
        cmd = parse_line(line)
        if cmd is None:
            ignored.append(line)
        else:
            commands.append(cmd)
    return Parsed(tuple(commands), tuple(ignored))


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


# -- The lobby: games started by mail to the plain service address ---------------------
#
#     new | play computer [to 61] [muggins] [skunk | lurch | no skunk] [3 players]
#     challenge bob@example.com [carol@example.net …] [to 61] [muggins] [partners]
#     cancel             (withdraw my open invitations)
#     games              (my games and invitations)
#     watch 12 | unwatch 12  (the public board of game 12 after every move; or not)
#
# Read only from mail that carries no game token; kept apart from the game verbs above
# ("play computer" is not a card, "accept" here answers an invitation).

LOBBY_VERBS = ("new", "challenge", "cancel", "games", "watch", "unwatch")
_LOBBY_RE = re.compile(r"[^\s,;()\[\]\"'<>]+")
_ADDRESS_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_MAX_INVITEES = 3
_OPTION_WORDS = {
    *("to", "no", "players", "player", "hands", "muggins", "skunk", "skunks", "lurch"),
    *("partners", "teams", "and", "game", "with", "against", "vs", "computer", "for"),
}


@dataclass(frozen=True, slots=True)
class LobbyCommand:
    """A lobby command: the verb, the addresses invited, and the game asked for."""

    verb: str
    line: str
    invitees: tuple[str, ...] = ()
    target: int = 121
    muggins: bool = False
    skunk: str = "skunk"
    players: int | None = None
    partners: bool = False
    game: int | None = None  # watch / unwatch: the game


def parse_lobby_line(line: str) -> LobbyCommand | None:
    """One line → a lobby command, or None when it is not one.

    Raises ``InvalidSyntaxError`` for a lobby command with an option it cannot read
    (``to 100``, ``5 players``, a word that is neither an option nor an address)."""
    words = [w.strip(".!:") for w in _LOBBY_RE.findall(line.strip().lower())]
    words = [w for w in words if w and w not in ("please", "a", "the", "me", "my")]
    if not words:
        return None
    head, rest = words[0], words[1:]
    if head in ("new", "start") and rest[:1] in ([], ["game"]):
        verb, rest = "new", rest[1:] if rest[:1] == ["game"] else rest
    elif head in ("new", "start"):
        verb = "new"
    elif head == "play" and "computer" in rest[:2]:
        verb, rest = "new", rest[rest.index("computer") + 1 :]
    elif head in ("challenge", "invite"):
        verb = "challenge"
    elif head in ("cancel", "withdraw") and not rest:
        return LobbyCommand("cancel", line.strip())
    elif head == "games" and not rest:
        return LobbyCommand("games", line.strip())
    elif head in _WATCH_WORDS:
        return _watch(_WATCH_WORDS[head], line.strip(), rest)
    else:
        return None
    if verb == "new" and any(w not in _OPTION_WORDS and not w.isdigit() for w in rest):
        return None  # "new to this game, how do I…": prose, not the lobby
    return _options(verb, line.strip(), rest)


_WATCH_WORDS = {"watch": "watch", "observe": "watch", "unwatch": "unwatch", "unobserve": "unwatch"}


def _watch(verb: str, line: str, words: list[str]) -> LobbyCommand | None:
    """``watch 12`` / ``unwatch game #12``; None for prose ("watch out")."""
    numbers = [w.lstrip("#") for w in words if w.lstrip("#").isdigit()]
    others = [w for w in words if not w.lstrip("#").isdigit() and w not in ("game", "#")]
    if len(numbers) != 1 or others or len(numbers[0]) > 12:
        return None
    return LobbyCommand(verb, line, game=int(numbers[0]))


def _options(verb: str, line: str, words: list[str]) -> LobbyCommand:
    invitees: list[str] = []
    target, muggins, skunk, players, partners = 121, False, "skunk", None, False
    i = 0
    while i < len(words):
        word, following = words[i], words[i + 1] if i + 1 < len(words) else ""
        if word == "to" and following.isdigit():
            if following not in ("61", "121"):
                raise InvalidSyntaxError(f"a game is to 61 or 121, not {following}")
            target, i = int(following), i + 2
            continue
        if word == "no" and following in ("skunk", "skunks"):
            skunk, i = "none", i + 2
            continue
        if word.isdigit() and following in ("players", "player", "hands"):
            if word not in ("2", "3", "4"):
                raise InvalidSyntaxError(f"cribbage is for 2, 3 or 4 players, not {word}")
            players, i = int(word), i + 2
            continue
        if word == "muggins":
            muggins = True
        elif word in ("skunk", "skunks", "lurch"):
            skunk = "lurch" if word == "lurch" else "skunk"
        elif word in ("partners", "teams"):
            partners = True
        elif verb == "challenge" and _ADDRESS_RE.match(word):
            if word not in invitees:
                invitees.append(word)
        elif word in ("and", "game", "with", "against", "vs", "computer", "for"):
            pass
        else:
            raise InvalidSyntaxError(f"{word!r} is not an option of {verb!r}")
        i += 1
    if verb == "challenge":
        if not invitees:
            raise InvalidSyntaxError("challenge whom? e.g. 'challenge bob@example.com'")
        if len(invitees) > _MAX_INVITEES:
            raise InvalidSyntaxError(f"at most {_MAX_INVITEES} players can be invited to a game")
        if partners and len(invitees) != 3:
            raise InvalidSyntaxError("partners play four: invite three players")
    return LobbyCommand(verb, line, tuple(invitees), target, muggins, skunk, players, partners)


def parse_lobby(text: str, subject: str = "") -> LobbyCommand | InvalidSyntaxError | None:
    """The first lobby command of a mail (its subject read first), the error of the
    first lobby line that could not be read, or None when it asks nothing of the lobby."""
    for line in [subject, *[part.strip() for part in _SPLIT_RE.split(text or "")][:_MAX_LINES]]:
        try:
            found = parse_lobby_line(line)
        except InvalidSyntaxError as exc:
            return exc
        if found is not None:
            return found
    return None


# -- the player's own settings ----------------------------------------------------------
# (``mail all|turns`` above; the rest here: ``mail text|html|both``, ``name``,
# ``stop`` / ``start``, ``away`` / ``back``.)

# ``mail text`` / ``mail html`` / ``mail both``: which parts the player's mails carry.
MAIL_PARTS = {"text": "text", "plain": "text", "txt": "text", "html": "html", "both": "both"}
# ``away 5 days``: the units, in days.
AWAY_UNITS = {"day": 1, "days": 1, "d": 1, "week": 7, "weeks": 7, "w": 7}
_SETTING_ALIASES = {
    "name": "name",
    "stop": "stop",
    "unsubscribe": "stop",
    "start": "start",
    "subscribe": "start",
    "away": "away",
    "vacation": "away",
    "holiday": "away",
    "back": "back",
    "digest": "digest",
    "observers": "observers",
    "observer": "observers",
    "spectators": "observers",
}
_ALIASES.update(_SETTING_ALIASES)
# ``digest`` / ``digest off``; ``observers on`` / ``observers off``.
_ON_OFF = {"on": "on", "yes": "on", "daily": "on", "allowed": "on", "off": "off", "no": "off"}
# Words that may follow "stop" / "start" ("stop mailing me please"), and "back".
_STOP_WORDS = {"please", "mail", "mails", "email", "emails", "mailing", "sending", "me", "all"}
_BACK_WORDS = {"please", "now", "again", "home"}


def _setting_command(verb: str, words: list[str], rest: list[str], line: str) -> Command | None:
    """A setting's line as a command, or None when the line only starts with its word
    ("stop playing the king", "back to you", "away from my desk")."""
    if verb in ("stop", "start"):
        return Command(verb, (), line.strip()) if set(rest) <= _STOP_WORDS else None
    if verb == "back":
        return Command(verb, (), line.strip()) if set(rest) <= _BACK_WORDS else None
    if verb in ("digest", "observers"):
        said = {_ON_OFF.get(w) for w in rest if w not in ("please", "mode")}
        if verb == "digest" and not said:
            said = {"on"}
        if len(said) != 1 or None in said:
            return None  # "observers welcome?": not the setting
        return Command(verb, (said.pop() or "on",), line.strip())
    if verb == "away":
        if not any(w.isdigit() for w in words[1:]):
            return None
        kept = tuple(w for w in words[1:] if w.isdigit() or w in AWAY_UNITS)
        return Command(verb, kept, line.strip())
    # "name": the name as written (its case kept), the words after the verb.
    given = line.strip().split(None, 1)
    return Command("name", (given[1].strip(),) if len(given) > 1 else (), line.strip())


def mail_parts(command: Command) -> str | None:
    """``"text"``, ``"html"`` or ``"both"`` for ``mail text|html|both``; None when the
    command names no parts (``mail all``).

    Raises ``InvalidSyntaxError`` when it names more than one.
    """
    parts = {MAIL_PARTS[w] for w in command.args if w in MAIL_PARTS}
    if len(parts) > 1:
        raise InvalidSyntaxError("mail which parts? 'mail text', 'mail html' or 'mail both'")
    return parts.pop() if parts else None


def mail_frequency(command: Command) -> bool | None:
    """Like `mail_choice`, but None when the command names no frequency (``mail text``)."""
    if not any(w in MAIL_CHOICES for w in command.args):
        return None
    return mail_choice(command)


def away_days(command: Command) -> int:
    """The days of ``away 5 days`` (or ``away 2 weeks``; a bare number is days).

    Raises ``InvalidSyntaxError`` unless it names exactly one number of days above zero.
    """
    numbers = [w for w in command.args if w.isdigit()]
    units = [AWAY_UNITS[w] for w in command.args if w in AWAY_UNITS]
    if len(numbers) != 1 or len(units) > 1 or int(numbers[0]) < 1:
        raise InvalidSyntaxError("away for how long? e.g. 'away 5 days' or 'away 2 weeks'")
    return int(numbers[0]) * (units[0] if units else 1)
