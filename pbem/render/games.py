"""Mails about a player's games as a whole, for mail that named none of them.

A known player who writes without a reply token (to the plain service address, or from a
new mail) gets a way forward: their games in progress, each with the opponents, whose
turn it is and the player's own reply address for it; with ``help``, the command
language too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pbem.render.context import MailContext, Notice, RenderedMail
from pbem.render.links import mailto
from pbem.render.mail import _render
from pbem.render.page import Page, footer_lines, notice_views
from pbem.render.words import Phrase, clean_name, join_words, phrase


@dataclass(frozen=True)
class GameLine:
    """One game in progress, as its player sees it from outside.

    ``opponents`` are the other players' names; ``turn`` says whose turn it is ("your
    turn", "waiting for Bob", "paused by the admin"); ``reply_to`` is the recipient's own
    reply address for this game (never another seat's).
    """

    game_id: int
    opponents: tuple[str, ...]
    turn: str
    reply_to: str

    @property
    def against(self) -> str:
        return join_words([clean_name(name, 30) for name in self.opponents])


def game_lines(games: Sequence[GameLine]) -> tuple[Phrase, ...]:
    """The games, one paragraph each, with how to write to each."""
    if not games:
        return (phrase("You have no game in progress."),)
    count = "one game" if len(games) == 1 else f"{len(games)} games"
    out = [
        phrase(
            f"You have {count} in progress. Reply to the latest mail of the game you mean, "
            "or write to its reply address:"
        )
    ]
    for game in games:
        out.append(
            phrase(
                f"Game {game.game_id}, you v {game.against}: {clean_name(game.turn, 60)}. "
                f"Reply to: {game.reply_to}"
            )
        )
    return tuple(out)


def render_which_game(
    games: Sequence[GameLine],
    notices: Sequence[Notice] = (),
    templates: Path | None = None,
    command: str = "",
) -> RenderedMail:
    """The answer to a mail that named no game of the player: their games, to pick one.
    ``command``: what the player wrote (its command lines); each game's link sends it
    again, to that game's reply address, so one click applies it where it was meant."""
    intro = [
        phrase(
            "Your mail did not answer a mail of one of your games, so I could not tell "
            "which game it is for; nothing was done."
        )
    ]
    if games:
        intro.append(
            phrase(
                "Reply to the latest mail of the game you mean, or write to its reply "
                "address below."
            )
        )
    page = Page(
        kind="error",
        subject="[Cribbage] Which game?",
        title=phrase("Which game?"),
        matchup="",
        intro=tuple(intro),
        notices=notice_views(_context(notices)),
        footer=_FOOTER,
    )
    body = clean_name(command.replace("\n", " ; "), 200)
    hrefs = {g.game_id: mailto(g.reply_to, body=command) for g in games if g.reply_to}
    return _render(page, "games", templates, games=games, hrefs=hrefs, command=body)


def render_help_games(games: Sequence[GameLine], templates: Path | None = None) -> RenderedMail:
    """The command language, for a mail that named no game, with the player's games."""
    page = Page(
        kind="help",
        subject="[Cribbage] How to play by mail",
        title=phrase("Cribbage: how to play by mail"),
        matchup="",
        intro=game_lines(games),
        footer=footer_lines()[1:],
    )
    return _render(page, "help", templates)


def render_welcome(templates: Path | None = None, deal_lines: Sequence[str] = ()) -> RenderedMail:
    """The one answer to a stranger who wrote to an open lobby without a command of it
    ("help", "how do I play?"): what this is and how to start, then the commands;
    ``deal_lines``: the first game's commitment, when the reply that starts it is the
    player's cut (its first mail then holds the cards)."""
    page = Page(
        kind="help",
        subject="[Cribbage] Welcome: how to play by mail",
        title=phrase("Cribbage by email: how to start"),
        matchup="",
        intro=(
            phrase(
                "This is a service for playing cribbage by email: each move is a short "
                "reply, and you need nothing else."
            ),
            phrase(
                'To start, reply to this mail with "play computer" (a game against the '
                'computer; "play computer to 61 level hard" for a shorter, harder one), or '
                'with "challenge friend@example.com" to invite someone.'
            ),
            phrase(
                "Every mail after that says what you may reply. If you do not answer, this "
                "is the only mail you get."
            ),
        ),
        footer=(*deal_lines, *footer_lines()[1:]),
    )
    return _render(page, "help", templates)


_FOOTER = ('Write "help" for the commands and your games.', *footer_lines()[1:])


def _context(notices: Sequence[Notice]) -> MailContext:
    return MailContext(
        game_id=0, names=("",), recipient_seat=0, reply_hint="", notices=tuple(notices)
    )


def render_my_games(
    games: Sequence[GameLine],
    waiting: Sequence[str],
    finished: Sequence[str],
    templates: Path | None = None,
) -> RenderedMail:
    """The answer to ``games``: the games in progress (with the player's own reply
    address for each), the invitations waiting (sent and received), the last results."""
    intro: list[Phrase] = []
    intro.append(phrase("Invitations waiting:" if waiting else "No invitation is waiting."))
    intro.extend(phrase(clean_name(line, 300)) for line in waiting)
    if finished:
        intro.append(phrase("Your last finished games:"))
        intro.extend(phrase(clean_name(line, 200)) for line in finished)
    page = Page(
        kind="help",
        subject="[Cribbage] Your games",
        title=phrase("Your games and invitations"),
        matchup="",
        intro=tuple(intro),
        footer=_FOOTER,
    )
    return _render(page, "games", templates, games=games)


def render_digest(
    day: str,
    waiting: Sequence[GameLine],
    others: Sequence[GameLine],
    templates: Path | None = None,
) -> RenderedMail:
    """The daily digest (``digest``): the games waiting on the player first, then their
    other games in progress, each with whose turn it is and the player's own reply
    address; the moves themselves are in each game's mail when it is the player's turn."""
    count = len(waiting)
    head = (
        "No game waits on you today."
        if not count
        else f"{'One game waits' if count == 1 else f'{count} games wait'} on you."
    )
    intro = (
        phrase(f"Your daily digest for {clean_name(day, 12)}: {head}"),
        phrase(
            "In digest mode you get this mail once a day instead of a mail after moves "
            "while it is not your turn; when it becomes your turn you still get that game's "
            'mail. Write "digest off" to get every mail again.'
        ),
    )
    subject = f"[Cribbage] Daily digest — {head.rstrip('.')}"
    page = Page(
        kind="digest",
        subject=subject,
        title=phrase(f"Your games on {clean_name(day, 12)}"),
        matchup="",
        intro=intro,
        footer=_FOOTER,
    )
    return _render(page, "games", templates, games=(*waiting, *others))
