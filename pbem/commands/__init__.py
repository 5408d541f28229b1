"""The email command language: reply text → commands → engine actions.

A map of the package (each module imports only those above it):

- `grammar`: a mail's text as command lines, a line as words; card words, table talk
  (``say``) and the types of a command as read (`Command`, `Parsed`).
- `moves`: game moves (discard, play, go, count, muggins, accept, resign, cut) and
  `to_action`, which turns one into an engine action.
- `questions`: what a player may ask (hand, history, help, archive, hint, standings).
- `settings`: the player's own settings (mail, name, stop/start, away/back, digest) and
  a game's (hints, observers), and the reading of their choices.
- `lobby`: mail to the plain address (new, challenge, cancel, games, rematch, watch…),
  the computer's levels and match lengths.
- `reader`: which lines of a mail are commands, of which family (`parse_line`,
  `parse_reply`, `parse_lobby`), and where they are read (`reads_subject`).

Every public name is importable from here: ``from pbem.commands import parse_reply``.
"""

from __future__ import annotations

from pbem.commands.grammar import (
    TALK_VERBS,
    Command,
    Parsed,
    body_lines,
    say_text,
    split_lines,
    words_after,
)
from pbem.commands.lobby import (
    LOBBY_VERBS,
    MATCH_LENGTHS,
    LobbyCommand,
    best_of,
    computer_level,
    computer_levels,
    parse_lobby_line,
    rematch_words,
)
from pbem.commands.moves import CUT_VERB, GAME_VERBS, NEXT_VERB, card_words, to_action
from pbem.commands.questions import INFO_VERBS
from pbem.commands.reader import (
    parse_line,
    parse_lobby,
    parse_reply,
    reads_as_command,
    reads_subject,
)
from pbem.commands.settings import (
    AWAY_UNITS,
    GAME_SETTING_VERBS,
    HINTS_CHOICES,
    MAIL_CHOICES,
    MAIL_PARTS,
    REPLAY_SWITCH,
    SETTING_VERBS,
    away_days,
    hints_choice,
    mail_choice,
    mail_frequency,
    mail_parts,
    mail_replay,
)

__all__ = [
    "AWAY_UNITS",
    "CUT_VERB",
    "GAME_SETTING_VERBS",
    "GAME_VERBS",
    "HINTS_CHOICES",
    "INFO_VERBS",
    "LOBBY_VERBS",
    "MAIL_CHOICES",
    "MAIL_PARTS",
    "MATCH_LENGTHS",
    "NEXT_VERB",
    "REPLAY_SWITCH",
    "SETTING_VERBS",
    "TALK_VERBS",
    "Command",
    "LobbyCommand",
    "Parsed",
    "away_days",
    "best_of",
    "body_lines",
    "card_words",
    "computer_level",
    "computer_levels",
    "hints_choice",
    "mail_choice",
    "mail_frequency",
    "mail_parts",
    "mail_replay",
    "parse_line",
    "parse_lobby",
    "parse_lobby_line",
    "parse_reply",
    "reads_as_command",
    "reads_subject",
    "rematch_words",
    "say_text",
    "split_lines",
    "to_action",
    "words_after",
]
