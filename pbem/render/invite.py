"""The invitation mail: someone asked for a game with the recipient, who may not know us.

It says what this is, who invited them (their name and address, escaped and cut short —
nothing else the inviter wrote reaches the invitee, and no other invitee is named), the
house rules, how to answer, and what may follow when they do not.
"""

from __future__ import annotations

from pathlib import Path

from pbem.render.context import RenderedMail
from pbem.render.links import link
from pbem.render.mail import _render
from pbem.render.page import Page
from pbem.render.words import clean_name, phrase

SUBJECT = "[Cribbage] An invitation to a game by email"
"""The invitation's subject: the same for every invitation, naming no one."""

ANSWERS = ("accept", "decline", "never")
"""The answers an invitation offers, in the order it lists them."""


def render_invite(
    inviter_name: str,
    inviter_address: str,
    rules: str,
    expires: str,
    templates: Path | None = None,
    commitment: str | None = None,
    quiet_days: int = 30,
    reply_to: str = "",
) -> RenderedMail:
    """An invitation to a game by mail, answered with ``accept`` or ``decline``.

    It names the challenger alone (never another invitee); its subject names no one (a
    name is the challenger's to choose, and a subject is what a mail client shows
    first); its footer says what may follow: the invitation lapses on ``expires``, the
    address is not invited again for ``quiet_days`` days after that, and ``never`` ends
    invitations from the service for good. With ``reply_to`` (the invitation's own reply
    address) each answer is also a one-click link."""
    who = clean_name(inviter_name, 40)
    address = clean_name(inviter_address, 80)
    inviter = f"{who} <{address}>" if who and who != address else address
    intro = [
        phrase(
            f"{inviter} invites you to a game of cribbage by email. This is a service "
            "where each move is a short email reply; you need nothing else."
        )
    ]
    if commitment:
        from engine.fairness import PROTOCOL

        intro.append(
            phrase(
                f"Deal commitment ({PROTOCOL}): {clean_name(commitment, 64)}. The deals will "
                "come from the secret behind it mixed with every player's cut; the secret is "
                "revealed when the game ends (played out or not), so anyone can check every "
                "deal."
            )
        )
    when = clean_name(expires, 40)
    page = Page(
        kind="invite",
        subject=SUBJECT,
        title=phrase("An invitation to play cribbage by email"),
        matchup="",
        intro=tuple(intro),
        footer=(
            f"If you do not answer, this invitation lapses on {when} and you will not be "
            f"invited again for {quiet_days:g} days; reply 'never' to get no more "
            "invitations from this service.",
            "Sent automatically; your replies are read by a program.",
        ),
    )
    links = tuple(link(reply_to, SUBJECT, word) for word in ANSWERS) if reply_to else ()
    return _render(page, "invite", templates, rules=rules, expires=when, links=links)
