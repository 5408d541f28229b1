"""The invitation mail: someone asked for a game with the recipient, who may not know us.

It says what this is, who invited them (their name and address, escaped and cut short —
nothing else the inviter wrote reaches the invitee), the house rules, and how to answer.
"""

from __future__ import annotations

from pathlib import Path

from pbem.render.context import RenderedMail
from pbem.render.mail import _render
from pbem.render.page import Page
from pbem.render.words import clean_name, phrase


def render_invite(
    inviter_name: str,
    inviter_address: str,
    others: tuple[str, ...],
    rules: str,
    expires: str,
    templates: Path | None = None,
    commitment: str | None = None,
) -> RenderedMail:
    """An invitation to a game by mail, answered with ``accept`` or ``decline``."""
    who = clean_name(inviter_name, 40)
    address = clean_name(inviter_address, 80)
    inviter = f"{who} <{address}>" if who and who != address else address
    intro = [
        phrase(
            f"{inviter} invites you to a game of cribbage by email. This is a service "
            "where each move is a short email reply; you need nothing else."
        )
    ]
    if others:
        names = ", ".join(clean_name(o, 80) for o in others)
        intro.append(phrase(f"Also invited: {names}."))
    if commitment:
        intro.append(
            phrase(
                f"Deal commitment (pbem-deal/1): {clean_name(commitment, 64)}. The deals will "
                "come from the secret behind it mixed with every player's cut; the secret is "
                "revealed when the game is over, so anyone can check every deal."
            )
        )
    page = Page(
        kind="invite",
        subject=f"[Cribbage] {who or address} invites you to a game",
        title=phrase("An invitation to play cribbage by email"),
        matchup="",
        intro=tuple(intro),
        footer=(
            "If you do not know this person, ignore this mail: nothing more will be sent.",
            "Sent automatically; your replies are read by a program.",
        ),
    )
    return _render(page, "invite", templates, rules=rules, expires=expires)
