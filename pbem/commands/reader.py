"""Reading a mail: which of its lines are commands, and of which family.

`parse_line` reads one line of a game's mail (a move, a question, a setting, table talk,
a cut or a rematch); `parse_reply` every line of a mail to a game; `parse_lobby` the
first lobby command of a mail to the plain address. The subject is read only when the
text holds no command of any kind, and never when it is one of the service's own
(`reads_subject`: the one rule of where commands are read, for games, the lobby and
settings alike).

This module ties the families together; none of them imports it.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine import InvalidSyntaxError
from pbem.commands.grammar import (
    LEADING,
    TOKEN_RE,
    Command,
    Parsed,
    arguments,
    body_lines,
    is_card_word,
    say_text,
    words_after,
)
from pbem.commands.lobby import LobbyCommand, parse_lobby_line
from pbem.commands.moves import CUT_VERB, MOVE_ALIASES, NEXT_VERB, RESIGN_CONFIRM
from pbem.commands.questions import QUESTION_ALIASES
from pbem.commands.settings import (
    CHOICE_ALIASES,
    HINTS_CHOICES,
    MAIL_CHOICES,
    MAIL_PARTS,
    SETTING_ALIASES,
    setting_command,
)

# Every word a line of a game's mail may start with, and the verb it stands for
# (``rematch``: in a finished game's mail, the same players again).
_ALIASES = {
    **MOVE_ALIASES,
    **QUESTION_ALIASES,
    **CHOICE_ALIASES,
    "rematch": "rematch",
    **SETTING_ALIASES,
}


def parse_line(line: str) -> Command | None:
    """One line → a command, or None when the line is not a command."""
    said = say_text(line)
    if said is not None:
        return Command("say", (said,) if said else (), line.strip())
    words = TOKEN_RE.findall(line.strip().lower())
    if not words:
        return None
    if words[:2] == ["no", "muggins"]:
        return Command("accept", (), line.strip())
    while len(words) > 1 and words[0] in LEADING:
        words = words[1:]  # "I resign", "I'll play 7c", "let's go"
    head = words[0]
    if head in (CUT_VERB, NEXT_VERB):
        # The words as written (case kept): they become the seat's entropy text.
        said = words_after(line, head)
        return Command(head, (said,) if said else (), line.strip())
    verb = _ALIASES.get(head)
    rest = arguments(words[1:])
    if verb is None:
        # A bare card or cards: "7c", "5h jd", "♥5".
        if all(is_card_word(w) for w in words) and len(words) <= 2:
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
    if verb == "resign":
        return Command(verb, tuple(w for w in rest if w in RESIGN_CONFIRM)[:1], line.strip())
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
        if verb in ("go", "accept", "muggins") and any(is_card_word(w) for w in rest):
            return None
        return Command(verb, (), line.strip())
    if (
        verb == "mail"
        and rest
        and not any(w in MAIL_CHOICES or w in MAIL_PARTS or w == "replay" for w in rest)
    ):
        return None  # "mail me later": not the mail setting
    if verb in SETTING_ALIASES.values():
        return setting_command(verb, words, rest, line)
    if verb == "rematch":
        return Command(verb, tuple(w.lstrip("#") for w in rest), line.strip())
    return Command(verb, tuple(rest), line.strip())


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
