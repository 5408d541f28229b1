"""The lobby: games started by mail to the plain service address, and the matches and
rematches asked for there or in a finished game's mail::

    new | play computer [to 61] [muggins] [skunk | lurch | no skunk] [3 players]
                       [level easy | medium | hard]
    challenge bob@example.com [carol@example.net …] [to 61] [muggins] [partners]
    cancel             (withdraw my open invitations)
    games              (my games and invitations)
    standings          (the ratings table: its top and my own line)
    rematch 12 [best of 3|5|7]  (the finished game 12 again: same players, loser deals)
    watch 12 | unwatch 12  (the public board of game 12 after every move; or not)

Each of new / play computer / challenge / rematch takes ``[match] best of 3|5|7``; in a
finished game's mail, ``rematch [best of 3|5|7]`` asks for the same players again, the
loser dealing.

Read only from mail that carries no game token; kept apart from the game verbs
("play computer" is not a card, "accept" here answers an invitation). Here are
`LobbyCommand` and the reading of one lobby line (`parse_lobby_line`), the computer's
levels, and the match lengths (`best_of`, `rematch_words`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from engine import InvalidSyntaxError

LOBBY_VERBS = ("new", "challenge", "cancel", "games", "standings", "rematch", "watch", "unwatch")
MATCH_LENGTHS = (3, 5, 7)
"""The matches one may ask for: best of 3, 5 or 7."""
_LOBBY_RE = re.compile(r"[^\s,;()\[\]\"'<>]+")
_ADDRESS_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_MAX_INVITEES = 3
_OPTION_WORDS = {
    *("to", "no", "players", "player", "hands", "muggins", "skunk", "skunks", "lurch"),
    *("partners", "teams", "and", "game", "with", "against", "vs", "computer", "for"),
    "level",
    *("match", "best", "of"),
}
_WATCH_WORDS = {"watch": "watch", "observe": "watch", "unwatch": "unwatch", "unobserve": "unwatch"}


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


def _watch(verb: str, line: str, words: list[str]) -> LobbyCommand | None:
    """``watch 12`` / ``unwatch game #12``; None for prose ("watch out")."""
    numbers = [w.lstrip("#") for w in words if w.lstrip("#").isdigit()]
    others = [w for w in words if not w.lstrip("#").isdigit() and w not in ("game", "#")]
    if len(numbers) != 1 or others or len(numbers[0]) > 12:
        return None
    return LobbyCommand(verb, line, game=int(numbers[0]))


def _options(verb: str, line: str, words: list[str]) -> LobbyCommand:
    """The game ``new`` or ``challenge`` asks for, read from the words after the verb.

    Raises ``InvalidSyntaxError`` for an option it cannot read."""
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
