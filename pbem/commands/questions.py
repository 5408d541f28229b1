"""Questions: the commands that ask the service for something and change nothing::

    hand | status      (send me my view again)
    history            (the moves so far)
    archive            (a finished game's JSON archive, to replay and verify)
    hint               (advice on my move, or on my last discard; when hints are on)
    standings          (the ratings table: its top and my own line; also to the plain
                        address, outside any game)
    help

A question takes no words (``help please`` is ``help``). Here are their verbs and the
other words for each (`QUESTION_ALIASES`); ``hints on|off`` is a setting
(`pbem.commands.settings`).
"""

from __future__ import annotations

INFO_VERBS = ("hand", "history", "help", "archive", "hint", "standings")
# The words of each question.
QUESTION_ALIASES = {
    "hand": "hand",
    "status": "hand",
    "board": "hand",
    "show": "hand",
    "cards?": "hand",
    "history": "history",
    "log": "history",
    "moves": "history",
    "help": "help",
    "?": "help",
    "commands": "help",
    "archive": "archive",
    "record": "archive",
    "export": "archive",
    "standings": "standings",
    "ratings": "standings",
    "ladder": "standings",
    "hint": "hint",
    "hint?": "hint",
    "advice": "hint",
    "advice?": "hint",
    "advise": "hint",
    "suggest": "hint",
    "suggestion": "hint",
    "tip": "hint",
}
