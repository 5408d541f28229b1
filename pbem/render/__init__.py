"""Player views → emails: a subject, a plain-text part and an HTML part.

Every mail is built from one ``PlayerView`` (what the recipient's seat may
see) and a ``MailContext`` (names, notices, hints the service provides), so a
mail cannot show another player's hidden cards: they are not in its input.
Events are narrated only when they are public or private to the recipient.

The package turns the view into small presentation values — phrases of text
and cards (``words``), the events told in words (``narrate``), a peg board
(``board``), a prompt saying what to reply (``prompt``), all gathered in one
``Page`` (``page``) — and ``mail`` hands the page to the Jinja2 templates in
the top-level ``templates/`` folder, which lay it out once as plain text (at
most 78 columns where the words allow) and once as HTML (autoescaped, styled by
one small style block in the head, with classes).

Build the view for a turn mail with ``player_view(game, seat, since)`` and pass
the same ``since`` as ``MailContext.since_event``: ``view.events`` are the
moves the mail reports as "since your last mail".
"""

from pbem.render.board import named_board
from pbem.render.context import MailContext, MatchInfo, Notice, RenderedMail, Said
from pbem.render.games import GameLine, render_help_games, render_which_game
from pbem.render.mail import (
    TEMPLATES,
    WIDTH,
    render_archive,
    render_board_text,
    render_error,
    render_help,
    render_history,
    render_note,
    render_observer,
    render_reminder,
    render_talk,
    render_turn,
)
from pbem.render.narrate import peg_words
from pbem.render.words import clean_name

__all__ = [
    "TEMPLATES",
    "WIDTH",
    "GameLine",
    "MailContext",
    "MatchInfo",
    "Notice",
    "RenderedMail",
    "Said",
    "clean_name",
    "named_board",
    "peg_words",
    "render_archive",
    "render_board_text",
    "render_error",
    "render_help",
    "render_help_games",
    "render_history",
    "render_note",
    "render_observer",
    "render_reminder",
    "render_talk",
    "render_turn",
    "render_which_game",
]
