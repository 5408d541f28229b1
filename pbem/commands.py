"""The email command language: reply text → commands → engine actions.

One command per line (``;`` also separates commands). The subject is read only when the
text holds no command, and never when it is one of the service's own (`reads_subject`).
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
    hint               (advice on my move, or on my last discard; when hints are on)
    hints on | off     (hints in this game: on when every player agreed)
    standings          (the ratings table: its top and my own line; also to the plain
                        address, outside any game)
    cut 17 red cats    (a fair game, before its first deal: cut for the deal with any
                        number or words; see the README's "Verifiable deals")
    say Nice crib!     (table talk: the rest of the line goes to the other players as
                        written; never read as commands — "say play 5h" plays nothing)
    rematch [best of 3|5|7]  (a finished game: the same players again, the loser deals)
    resign
    help

Parsing never looks at the game; ``to_action`` turns a game command into an
engine action for one seat, raising the engine's typed errors.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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
INFO_VERBS = ("hand", "history", "help", "archive", "hint", "standings")
# Settings of one game: ``hints on`` / ``hints off``.
GAME_SETTING_VERBS = ("hints",)
# ``hints on`` / ``hints off``: the words of each choice.
HINTS_CHOICES = {
    "on": True,
    "yes": True,
    "agree": True,
    "agreed": True,
    "off": False,
    "no": False,
    "none": False,
}
# ``cut [words]``: a fair game's cut for the deal, before its first deal.
CUT_VERB = "cut"
# ``next [words]``: in answer to the game-over mail of a game of a match, the cut for the
# match's next game (whose commitment that mail showed).
NEXT_VERB = "next"
# Table talk: a whole line, kept as written, never read as commands.
TALK_VERBS = ("say",)
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
    "standings": "standings",
    "ratings": "standings",
    "ladder": "standings",
    "record": "archive",
    "export": "archive",
    "mail": "mail",
    "mails": "mail",
    "email": "mail",
    "emails": "mail",
    "?": "help",
    "commands": "help",
    "hint": "hint",
    "hint?": "hint",
    "advice": "hint",
    "advice?": "hint",
    "advise": "hint",
    "suggest": "hint",
    "suggestion": "hint",
    "tip": "hint",
    "hints": "hints",
    "rematch": "rematch",
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
# A line of table talk: "say" and the rest of the line, as written ("Say: well played!").
_SAY_RE = re.compile(r"^\s*say(?:\s+|\s*[:,-]\s*|$)(.*)$", re.IGNORECASE | re.DOTALL)
MATCH_LENGTHS = (3, 5, 7)
"""The matches one may ask for: best of 3, 5 or 7."""
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


def words_after(line: str, word: str) -> str:
    """The words after the first ``word`` of ``line``, as written (case kept): what a cut
    adds to its mail's Message-ID (``cut 17 purple`` → "17 purple"; ``rematch best of
    3`` → "best of 3")."""
    found = re.search(rf"\b{re.escape(word)}\b(.*)$", line, re.IGNORECASE | re.DOTALL)
    return found.group(1).strip() if found else ""


def _is_card_word(word: str) -> bool:
    try:
        parse_card(word)
    except InvalidSyntaxError:
        return False
    return True


def parse_line(line: str) -> Command | None:
    """One line → a command, or None when the line is not a command."""
    said = say_text(line)
    if said is not None:
        return Command("say", (said,) if said else (), line.strip())
    words = _TOKEN_RE.findall(line.strip().lower())
    if not words:
        return None
    if words[:2] == ["no", "muggins"]:
        return Command("accept", (), line.strip())
    while len(words) > 1 and words[0] in _LEADING:
        words = words[1:]  # "I resign", "I'll play 7c", "let's go"
    head = words[0]
    if head in (CUT_VERB, NEXT_VERB):
        # The words as written (case kept): they become the seat's entropy text.
        said = words_after(line, head)
        return Command(head, (said,) if said else (), line.strip())
    verb = _ALIASES.get(head)
    rest = _arguments(words[1:])
    if verb is None:
        # A bare card or cards: "7c", "5h jd", "♥5".
        if all(_is_card_word(w) for w in words) and len(words) <= 2:
            return Command("cards", tuple(words), line.strip())
        return None
    if verb == "hints":
        # "hints on" / "hints off"; a bare "hints" (or "hints please") asks for one.
        choices = [w for w in rest if w in HINTS_CHOICES]
        if not choices:
            verb = "hint"
        elif len(rest) > 2:
            return None  # "hints on the crib would help": prose
        else:
            return Command("hints", tuple(choices), line.strip())
    if verb in (
        "go",
        "muggins",
        "accept",
        "hand",
        "history",
        "help",
        "resign",
        "archive",
        "hint",
        "standings",
    ):
        # Allow trailing politeness ("go!", "help please") but not stray arguments.
        if verb in ("go", "accept", "muggins") and any(_is_card_word(w) for w in rest):
            return None
        return Command(verb, (), line.strip())
    if (
        verb == "mail"
        and rest
        and not any(w in MAIL_CHOICES or w in MAIL_PARTS or w == "replay" for w in rest)
    ):
        return None  # "mail me later": not the mail setting
    if verb in _SETTING_ALIASES.values():
        return _setting_command(verb, words, rest, line)
    if verb == "rematch":
        return Command(verb, tuple(w.lstrip("#") for w in rest), line.strip())
    return Command(verb, tuple(rest), line.strip())


def say_text(line: str) -> str | None:
    """The words of a ``say`` line as written (spaces collapsed), or None when the line
    is not table talk."""
    found = _SAY_RE.match(line)
    if found is None:
        return None
    return " ".join(found.group(1).split())


def best_of(words: Sequence[str]) -> int | None:
    """The length of the match ``words`` ask for (``[match] best of 5``), or None.

    Raises ``InvalidSyntaxError`` for a length not in `MATCH_LENGTHS`, or ``best of``
    without a number."""
    for i, word in enumerate(words):
        if word == "best" and i + 1 < len(words) and words[i + 1] == "of":
            number = words[i + 2] if i + 2 < len(words) else ""
            if not number.isdigit() or int(number) not in MATCH_LENGTHS:
                raise InvalidSyntaxError(
                    f"a match is best of 3, 5 or 7, not {number or 'nothing'!r}"
                )
            return int(number)
    return None


def rematch_words(words: Sequence[str]) -> tuple[int | None, int | None]:
    """The game (``rematch 12``, ``rematch game 12``) and the match length (``best of
    5``) of a rematch's words.

    Raises ``InvalidSyntaxError`` for a word that is neither, or two game numbers."""
    words = [w.lstrip("#") for w in words]
    length = best_of(words)
    game: int | None = None
    skip = False
    for i, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word == "best" and words[i + 1 : i + 2] == ["of"]:
            skip = True  # "of"; the number follows
            continue
        if word.isdigit() and i >= 2 and words[i - 2 : i] == ["best", "of"]:
            continue
        if word.isdigit():
            if game is not None:
                raise InvalidSyntaxError("rematch one game at a time, e.g. 'rematch 12'")
            game = int(word[:12])
        elif word not in ("game", "match", "please", "a", "the", "of", "with", "and"):
            raise InvalidSyntaxError(f"{word!r} is not an option of 'rematch'")
    return game, length


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


def hints_choice(command: Command) -> bool:
    """``True`` for ``hints on``, ``False`` for ``hints off``.

    Raises ``InvalidSyntaxError`` when the words name neither (or both).
    """
    choices = {HINTS_CHOICES[w] for w in command.args if w in HINTS_CHOICES}
    if len(choices) != 1:
        raise InvalidSyntaxError("hints how? 'hints on' or 'hints off'")
    return choices.pop()


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
    """All the commands of a mail: those of its text, in order, and the lines that are
    not commands — or, when no line of the text is a command of any kind, the command
    its ``subject`` holds (`reads_subject`: the one rule of where commands are read)."""
    lines = body_lines(text)
    if reads_subject(lines, subject):
        cmd = parse_line(subject)
        return Parsed((cmd,) if cmd is not None else (), tuple(lines))
    commands: list[Command] = []
    ignored: list[str] = []
    for line in lines:
        cmd = parse_line(line)
        if cmd is None:
            ignored.append(line)
        else:
            commands.append(cmd)
    return Parsed(tuple(commands), tuple(ignored))


def body_lines(text: str) -> list[str]:
    """The command lines of a mail's text (`split_lines`), blank ones dropped, at most
    the first 40."""
    return [line for line in split_lines(text) if line][:_MAX_LINES]


def reads_as_command(line: str) -> bool:
    """Whether ``line`` is a command of any kind: a game's, a setting's or the lobby's
    (one the lobby cannot read counts too: "challenge" without an address)."""
    if parse_line(line) is not None:
        return True
    try:
        return parse_lobby_line(line) is not None
    except InvalidSyntaxError:
        return True


def reads_subject(lines: Sequence[str], subject: str) -> bool:
    """Where a mail's commands come from, for games, the lobby and settings alike: its
    text (``lines``, see `body_lines`); its subject only when no line of the text is a
    command of any kind — a ``List-Unsubscribe`` mailto writes ``stop`` in the subject
    of an empty mail. ``subject`` is what `pbem.mail.reading.reply_subject` leaves:
    nothing for the service's own subjects and replies to them, which are never read
    ("Re: [Cribbage 12] Hint: your play" asks for no hint)."""
    return bool(subject.strip()) and not any(reads_as_command(line) for line in lines)


def split_lines(text: str) -> list[str]:
    """A reply's text as command lines: lines, each split at ``;`` and ``then`` — but a
    ``say`` line whole (table talk is never read as commands)."""
    out: list[str] = []
    for line in (text or "").split("\n"):
        if say_text(line) is not None:
            out.append(line.strip())
        else:
            out.extend(part.strip() for part in _SPLIT_RE.split(line))
    return out


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
#                        [level easy | medium | hard]
#     challenge bob@example.com [carol@example.net …] [to 61] [muggins] [partners]
#     cancel             (withdraw my open invitations)
#     games              (my games and invitations)
#     standings          (the ratings table: its top and my own line)
#     rematch 12 [best of 3|5|7]  (the finished game 12 again: same players, loser deals)
#
# Each of new / play computer / challenge / rematch takes ``[match] best of 3|5|7``.
#     watch 12 | unwatch 12  (the public board of game 12 after every move; or not)
#
# Read only from mail that carries no game token; kept apart from the game verbs above
# ("play computer" is not a card, "accept" here answers an invitation).

LOBBY_VERBS = ("new", "challenge", "cancel", "games", "standings", "rematch", "watch", "unwatch")
_LOBBY_RE = re.compile(r"[^\s,;()\[\]\"'<>]+")
_ADDRESS_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_MAX_INVITEES = 3
_OPTION_WORDS = {
    *("to", "no", "players", "player", "hands", "muggins", "skunk", "skunks", "lurch"),
    *("partners", "teams", "and", "game", "with", "against", "vs", "computer", "for"),
    "level",
    *("match", "best", "of"),
}


def computer_levels() -> tuple[str, ...]:
    """The computer's levels a game may be asked for (``engine.levels.LEVELS``), the
    easiest first."""
    from engine.levels import LEVELS

    return tuple(LEVELS)


def computer_level(word: str) -> str:
    """``word`` as a level of the computer (case and spaces ignored; an old name such
    as ``good`` is read as the level it now is, ``medium``).

    Raises ``InvalidSyntaxError`` naming the levels when it is not one."""
    from engine.levels import ALIASES

    level = word.strip().lower()
    level = ALIASES.get(level, level)
    if level not in computer_levels():
        shown = word.strip()[:20]
        raise InvalidSyntaxError(
            f"{shown!r} is not a level of the computer; choose from " + ", ".join(computer_levels())
        )
    return level


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
    level: str | None = None  # the computer's level (``level hard``); None: the default
    best_of: int | None = None
    game_id: int | None = None
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
    # "start" is the setting that undoes "stop", never a game.
    if head == "new" and rest[:1] in ([], ["game"]):
        verb, rest = "new", rest[1:] if rest[:1] == ["game"] else rest
    elif head == "new":
        verb = "new"
    elif head == "play" and "computer" in rest[:2]:
        verb, rest = "new", rest[rest.index("computer") + 1 :]
    elif head in ("challenge", "invite"):
        verb = "challenge"
    elif head in ("cancel", "withdraw") and not rest:
        return LobbyCommand("cancel", line.strip())
    elif head == "games" and not rest:
        return LobbyCommand("games", line.strip())
    elif head in ("standings", "ratings", "ladder") and not rest:
        return LobbyCommand("standings", line.strip())
    elif head == "rematch":
        game_id, length = rematch_words(rest)
        return LobbyCommand("rematch", line.strip(), best_of=length, game_id=game_id)
    elif head in _WATCH_WORDS:
        return _watch(_WATCH_WORDS[head], line.strip(), rest)
    else:
        return None
    if verb == "new" and any(
        w not in _OPTION_WORDS and not w.isdigit() and (i == 0 or rest[i - 1] != "level")
        for i, w in enumerate(rest)
    ):
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
    level: str | None = None
    length = best_of(words)
    i = 0
    while i < len(words):
        word, following = words[i], words[i + 1] if i + 1 < len(words) else ""
        if word == "best" and following == "of":
            i += 3  # read by best_of
            continue
        if word == "match":
            i += 1
            continue
        if word == "to" and following.isdigit():
            if following not in ("61", "121"):
                raise InvalidSyntaxError(f"a game is to 61 or 121, not {following}")
            target, i = int(following), i + 2
            continue
        if word == "level":
            if verb != "new":
                raise InvalidSyntaxError("a level is for a game against the computer ('new')")
            if not following:
                raise InvalidSyntaxError(
                    "level what? e.g. 'new level " + computer_levels()[-1] + "'"
                )
            level, i = computer_level(following), i + 2
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
            if not word.isascii():
                raise InvalidSyntaxError(
                    f"{word}: only plain ASCII addresses can be invited "
                    "(an international domain in its xn-- form)"
                )
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
    return LobbyCommand(
        verb,
        line,
        tuple(invitees),
        target,
        muggins,
        skunk,
        players,
        partners,
        level=level,
        best_of=length,
    )


def parse_lobby(text: str, subject: str = "") -> LobbyCommand | InvalidSyntaxError | None:
    """The first lobby command of a mail, the error of the first lobby line that could
    not be read, or None when it asks nothing of the lobby. Read from its text, or from
    its ``subject`` when no line of the text is a command of any kind (`reads_subject`)."""
    lines = body_lines(text)
    for line in [subject] if reads_subject(lines, subject) else lines:
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


# ``mail replay on|off``: the words after "replay".
REPLAY_SWITCH = {"on": True, "yes": True, "off": False, "no": False, "none": False}


def mail_replay(command: Command) -> bool | None:
    """``True`` for ``mail replay`` / ``mail replay on``, ``False`` for ``mail replay off``;
    None when the command does not name the replay.

    Raises ``InvalidSyntaxError`` for both ``on`` and ``off``.
    """
    if "replay" not in command.args:
        return None
    switches = {REPLAY_SWITCH[w] for w in command.args if w in REPLAY_SWITCH}
    if len(switches) > 1:
        raise InvalidSyntaxError("mail replay on or off? 'mail replay on' or 'mail replay off'")
    return switches.pop() if switches else True


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
