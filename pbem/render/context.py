"""What the service hands the renderer beyond the view, and what it gets back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.review import GameReview


@dataclass(frozen=True)
class Notice:
    """The result of one of the recipient's own commands (or a note from the service).

    ``status`` is one of ``applied``, ``refused``, ``ignored``, ``ambiguous``,
    ``info``, ``confirm`` (a step that waits for the player's confirmation); ``legal``
    says what would have been allowed, for refusals; ``offer`` is a command the mail
    offers as one click (the confirmation asked for).
    """

    status: str
    command: str
    message: str
    legal: str | None = None
    offer: str = ""


@dataclass(frozen=True)
class Said:
    """One ``say`` of table talk: who said it (a display name) and what, as written."""

    name: str
    text: str


@dataclass(frozen=True)
class MatchInfo:
    """Where a game's match stood when the game began: its length (best of N), the
    game's number in it, and the game points each side had won (by side)."""

    best_of: int
    game_no: int
    before: tuple[int, ...]


@dataclass(frozen=True)
class MailContext:
    """What the service knows beyond the view.

    ``names`` holds a display name per seat (the recipient is always "you");
    ``reply_hint`` is printed under the reply line; ``notices`` report the
    recipient's own commands; ``since_event`` is the ``since`` the view was
    built with (0: the mail tells the game from the start); ``ending`` holds what a
    finished game's mail offers next (a rematch, the next game of a match, the replay
    page and how it checks the deals, the archive): lines under the result;
    ``paused`` marks a game on hold; ``deal_lines`` are the game's verifiable-deal
    lines (its commitment, and the server seed once the game is over), printed in
    every mail of the game.
    ``talk`` is the table talk the recipient has not seen in a game mail yet (in a
    history mail: all of it), shown under its own heading; ``match`` is the game's
    match, when it is one game of a match. ``levels`` holds, per seat, the level of a
    computer seat ("" for a person): the names stay short ("Computer") in every line
    and table, and the header alone says the level ("Computer (hard)").
    ``first_mail``: the recipient's first mail of the game (an observer's, say), whose
    news tells the game (or the hand) so far rather than "since your last mail".
    ``reply_to`` is the recipient's own reply address (the mail's Reply-To,
    ``cribbage+TOKEN@domain``), which the mail's one-click answers (``mailto:`` links,
    `pbem.render.links`) are sent to — empty: no links.
    ``suggest``: the reply line offers the computer's move (the game gives hints);
    otherwise it lists the legal choices, so a game between people without hints gives
    no free hint to either side.
    ``review``: in a game-over mail, the recipient's own decisions beside the hard
    computer's (`engine.review`, built from the recipient's views alone), when the game
    gives one (`pbem.service.policy.may_review`).
    """

    game_id: int
    names: tuple[str, ...]
    recipient_seat: int
    reply_hint: str
    notices: tuple[Notice, ...] = ()
    since_event: int = 0
    ending: tuple[str, ...] = ()
    paused: bool = False
    deal_lines: tuple[str, ...] = ()
    talk: tuple[Said, ...] = ()
    match: MatchInfo | None = None
    levels: tuple[str, ...] = ()
    first_mail: bool = False
    reply_to: str = ""
    # In a game's first mail to a seat: what the game is, as asked for (the players, the
    # computer's level, the rules, the match and the game's number in it, the game it
    # is a rematch of), so the player knows at once they were understood.
    opening: str = ""
    suggest: bool = False
    review: GameReview | None = None
    # The game's one Subject (`pbem.render.page.game_subject`), for every mail of the
    # game; empty: the mail's subject says what it is (a mail outside any game).
    subject: str = ""


@dataclass(frozen=True)
class RenderedMail:
    """One mail: a one-line subject, a plain-text part and an HTML part."""

    subject: str
    text: str
    html: str
