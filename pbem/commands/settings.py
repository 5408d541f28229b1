"""Settings: the player's own, taken in any state of a game (and without a game), and
those of one game::

    mail all | turns   (a mail after every move, or only when there is news: the default)
    mail text | html | both  (which parts the mails carry: both is the default)
    name Alice Smith   (the name the other players see)
    stop | start       (no mail but the answers to my own mail; and back again)
    away 5 days | back (my clocks stop for a while — a few weeks a game at most; or not)
    digest | digest off (one mail a day with the games waiting on me, not a mail per move)
    observers on | off (whether others may watch this game; all players must agree to on)
    hints on | off     (hints in this game: on when every player agreed)

Here are their words, the reading of a setting's line (`setting_command`: a line that
only starts with a setting's word is no command), and the functions that read what a
setting command chose (`mail_choice`, `mail_parts`, `away_days`, …).
"""

from __future__ import annotations

from engine import InvalidSyntaxError
from pbem.commands.grammar import Command

# The player's own settings, taken in any state of the game (and without a game).
SETTING_VERBS = ("mail", "name", "stop", "start", "away", "back", "digest")
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
# ``mail text`` / ``mail html`` / ``mail both``: which parts the player's mails carry.
MAIL_PARTS = {"text": "text", "plain": "text", "txt": "text", "html": "html", "both": "both"}
# ``mail replay on|off``: the words after "replay".
REPLAY_SWITCH = {"on": True, "yes": True, "off": False, "no": False, "none": False}
# ``away 5 days``: the units, in days.
AWAY_UNITS = {"day": 1, "days": 1, "d": 1, "week": 7, "weeks": 7, "w": 7}
# The words of ``mail`` and ``hints``, whose commands keep their words (read by
# `mail_choice`, `mail_parts`, `mail_replay`, `hints_choice`).
CHOICE_ALIASES = {
    "mail": "mail",
    "mails": "mail",
    "email": "mail",
    "emails": "mail",
    "hints": "hints",
}
# The words of the settings whose line `setting_command` reads.
SETTING_ALIASES = {
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
# ``digest`` / ``digest off``; ``observers on`` / ``observers off``.
_ON_OFF = {"on": "on", "yes": "on", "daily": "on", "allowed": "on", "off": "off", "no": "off"}
# Words that may follow "stop" / "start" ("stop mailing me please"), and "back".
_STOP_WORDS = {"please", "mail", "mails", "email", "emails", "mailing", "sending", "me", "all"}
_BACK_WORDS = {"please", "now", "again", "home"}


def setting_command(verb: str, words: list[str], rest: list[str], line: str) -> Command | None:
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


def mail_frequency(command: Command) -> bool | None:
    """Like `mail_choice`, but None when the command names no frequency (``mail text``)."""
    if not any(w in MAIL_CHOICES for w in command.args):
        return None
    return mail_choice(command)


def mail_parts(command: Command) -> str | None:
    """``"text"``, ``"html"`` or ``"both"`` for ``mail text|html|both``; None when the
    command names no parts (``mail all``).

    Raises ``InvalidSyntaxError`` when it names more than one.
    """
    parts = {MAIL_PARTS[w] for w in command.args if w in MAIL_PARTS}
    if len(parts) > 1:
        raise InvalidSyntaxError("mail which parts? 'mail text', 'mail html' or 'mail both'")
    return parts.pop() if parts else None


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


def away_days(command: Command) -> int:
    """The days of ``away 5 days`` (or ``away 2 weeks``; a bare number is days).

    Raises ``InvalidSyntaxError`` unless it names exactly one number of days above zero.
    """
    numbers = [w for w in command.args if w.isdigit()]
    units = [AWAY_UNITS[w] for w in command.args if w in AWAY_UNITS]
    if len(numbers) != 1 or len(units) > 1 or int(numbers[0]) < 1:
        raise InvalidSyntaxError("away for how long? e.g. 'away 5 days' or 'away 2 weeks'")
    return int(numbers[0]) * (units[0] if units else 1)
