"""One click a move: ``mailto:`` links (RFC 6068) that answer a mail.

Each link opens a new mail to the seat's reply address (the mail's Reply-To, which
carries the seat's token) with the subject ("Re: " and the mail's own) and one command
filled in, so the player only presses Send. A link is built from the recipient's view
and the reply address the service put in the `MailContext` — nothing else — so it can
only name the recipient's own cards, and only the moves the view says are legal now.

The commands are written as the text part's copy line writes them (ASCII cards,
``play 7s``, ``discard 5h jd``), the spelling every client keeps intact and the command
reader reads first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from urllib.parse import quote

from engine import DISCARD, PEGGING, SHOW, Card, PlayerView
from pbem.render.words import Phrase, phrase

DISCARD_LINKS = 15
"""How many ways to lay away a two-player turn mail links: all fifteen pairs of six
cards, in card order (never ranked: that would be a free hint), drawn as a compact grid
(`discard_grid`: each link shows only its second card) to stay under the mail size
bound."""

# RFC 3986 unreserved characters are the only ones left as they are in a header
# field's name or value: everything else (space, "&", "=", "?", "%", "+", "#", the
# suits, any non-ASCII character) is percent-encoded from its UTF-8 bytes. "+" is
# encoded too, so a client that reads the query as a form (plus for space) gets it
# right as well.
_FIELD_SAFE = ""
# In the address (RFC 6068 ``to``): "@" and "+" of ``local+TOKEN@domain`` stay as they
# are (both may appear in a URI's path); anything else outside the unreserved set is
# encoded.
_ADDRESS_SAFE = "@+"


def mailto(address: str, *, subject: str = "", body: str = "") -> str:
    """The RFC 6068 URI ``mailto:ADDRESS?subject=...&body=...``.

    The address and every header field value are percent-encoded UTF-8 (nothing but
    letters, digits and ``-._~`` stays literal, so ``&``, ``=``, ``?``, ``%``, ``+``,
    ``#`` and spaces cannot end or change a field); line breaks in ``body`` are sent as
    ``%0D%0A`` (RFC 6068, section 5). Empty fields are left out.

    Raises ValueError for an empty address or one with a line break in it.
    """
    if not address or "\r" in address or "\n" in address:
        raise ValueError(f"not an address for a mailto link: {address!r}")
    fields: list[str] = []
    if subject:
        fields.append("subject=" + quote(subject, safe=_FIELD_SAFE))
    if body:
        crlf = body.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\r\n")
        fields.append("body=" + quote(crlf, safe=_FIELD_SAFE))
    uri = "mailto:" + quote(address, safe=_ADDRESS_SAFE)
    return uri + ("?" + "&".join(fields) if fields else "")


def reply_subject(subject: str) -> str:
    """The subject of a reply to a mail with ``subject``: "Re: " before it (once)."""
    return subject if subject[:3].lower() == "re:" else f"Re: {subject}"


@dataclass(frozen=True)
class Link:
    """One answer as a link: what it shows (``label``), the command it sends and the
    ``mailto:`` URI (``href``)."""

    label: Phrase
    command: str
    href: str


@lru_cache(maxsize=256)
def _answering(reply_to: str, subject: str) -> str:
    """``mailto:ADDRESS?subject=Re: …`` of a mail's links, encoded once for all of them."""
    return mailto(reply_to, subject=reply_subject(subject))


def link(reply_to: str, subject: str, command: str, label: Phrase | None = None) -> Link:
    """The link that answers the mail ``subject`` (sent to the address ``reply_to``)
    with ``command`` (one line); it shows ``label`` (by default the command itself).
    The same as ``mailto(reply_to, subject=reply_subject(subject), body=command)``."""
    href = _answering(reply_to, subject) + "&body=" + quote(command, safe=_FIELD_SAFE)
    return Link(label if label is not None else phrase(command), command, href)


def typed(cards: Sequence[Card]) -> str:
    """Cards as a command writes them: ``5h jd``, ``10s``."""
    return " ".join(c.ascii.lower() for c in cards)


def move_links(
    view: PlayerView, reply_to: str, subject: str, suggested: Sequence[Card] = ()
) -> tuple[Link, ...]:
    """A link for each answer the view allows its seat now: every card that may be
    played, ``go`` when it is the only move, the ways to lay away (`discard_choices`),
    ``accept`` and ``muggins`` when a count waits for them. None when the seat has no
    move (or no reply address is known); never a link for a count (``count N``), whose
    number the player must work out. ``suggested``: the reply line's move (a game that
    gives hints), marked with a star on its link."""
    if not reply_to or not view.my_turn or not view.legal or view.outcome is not None:
        return ()
    if view.phase == DISCARD and view.must_discard:
        return tuple(
            discard_link(reply_to, subject, cards) for cards in discard_choices(view, suggested)
        )
    if view.phase == PEGGING:
        if view.must_go:
            return (link(reply_to, subject, "go"),)
        return tuple(
            link(
                reply_to,
                subject,
                f"play {typed((card,))}",
                phrase("play ", card, " ★") if card in suggested else phrase("play ", card),
            )
            for card in view.playable
        )
    if view.phase == SHOW and view.awaiting_muggins and view.may_call_muggins:
        return (link(reply_to, subject, "accept"), link(reply_to, subject, "muggins"))
    return ()


def discard_choices(
    view: PlayerView, suggested: Sequence[Card] = ()
) -> tuple[tuple[Card, ...], ...]:
    """The ways to lay away that a turn mail links: every one, in the hand's card
    order — with three or four players each card (five), with two all fifteen pairs.
    Never ranked, so the links give no hint; ``suggested`` (the reply line's discard in
    a game that gives hints) is marked, not moved (`discard_grid`)."""
    return tuple(combinations(view.holding, view.must_discard))


@dataclass(frozen=True)
class GridRow:
    """One row of the two-card discard grid: its first card, and a link for each card
    after it in the hand (the link shows the second card only)."""

    first: Card
    links: tuple[Link, ...]


def discard_grid(
    view: PlayerView, reply_to: str, subject: str, suggested: Sequence[Card] = ()
) -> tuple[GridRow, ...]:
    """The fifteen ways to lay two cards away from six as a grid: a row per card, a
    link per later card (``discard 5h jd`` under the label "J♦" in the row of 5♥); the
    ``suggested`` pair's link is labelled with a star. To keep the mail under its size
    bound (benchmarks/mail_size.py) a grid link carries the command alone, no subject:
    the reply address names the game and the seat."""
    if not reply_to or view.must_discard != 2:
        return ()
    cards = view.holding
    marked = set(suggested)
    start = mailto(reply_to) + "?body="
    rows = []
    for i, first in enumerate(cards[:-1]):
        row = []
        for second in cards[i + 1 :]:
            command = f"discard {typed((first, second))}"
            label = f"{second} ★" if {first, second} == marked else str(second)
            href = start + quote(command, safe=_FIELD_SAFE)
            row.append(Link(phrase(label), command, href))
        rows.append(GridRow(first, tuple(row)))
    return tuple(rows)


def discard_link(reply_to: str, subject: str, cards: Sequence[Card]) -> Link:
    """The link that lays ``cards`` away (a row of the hint's table of discards)."""
    return link(reply_to, subject, f"discard {typed(cards)}", phrase(cards))
