"""The mail that asks a player to cut for the deal (the verifiable-deal protocol).

A fair game is not dealt until every player has cut: no cards exist yet, so this mail
is built from the game's names and commitment only — there is no view to show. It is
the game's first mail, its reminder, and the answer to a mail sent while the game
waits for the cuts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pbem.render.context import MailContext, RenderedMail
from pbem.render.links import link
from pbem.render.mail import _render
from pbem.render.page import Page, footer_lines, notice_views, titled
from pbem.render.words import clean_name, join_words, phrase

CUT_PARAGRAPH = (
    "One reply deals the cards: reply cut, with any words after it you like (for "
    "example: cut 17 purple elephants). The cards come from every "
    "player's cut mixed with a secret the service locked in first — the commitment at "
    "the foot is its fingerprint, revealed when the game ends — so nobody, not even the "
    "service, can choose or foresee them."
)


def render_cut(
    ctx: MailContext,
    waiting_for: Sequence[str],
    *,
    have_cut: bool,
    reminder: str | None = None,
    closing: bool = False,
    templates: Path | None = None,
) -> RenderedMail:
    """The cut request to ``ctx.recipient_seat``: the friendly paragraph, who is still to
    cut (``waiting_for``: names), and the commitment (``ctx.deal_lines``). With
    ``have_cut`` the recipient's cut is in and the mail only says whom the game waits
    for; ``reminder`` (e.g. "2 days") makes it a reminder. With ``ctx.reply_to`` the
    request offers a one-click ``cut`` (a mail whose own Message-ID is the cut's
    entropy; words may be added before it is sent)."""
    names = [clean_name(n, 40) for n in ctx.names]
    others = [n for i, n in enumerate(names) if i != ctx.recipient_seat]
    intro = []
    if reminder:
        intro.append(
            phrase(f"A reminder: the game has waited for the cut for {clean_name(reminder, 40)}.")
        )
    if closing:
        subject, state = titled(ctx, "Game aborted")
    elif have_cut:
        subject, state = titled(ctx, "Your cut is in")
        pending = join_words([clean_name(n, 40) for n in waiting_for]) or "nobody"
        intro.append(
            phrase(
                f"Your cut is in. The cards are dealt as soon as {pending} "
                f"{'cuts' if len(waiting_for) == 1 else 'cut'}."
            )
        )
    else:
        subject, state = titled(ctx, f"{'Reminder — ' if reminder else ''}Please cut for the deal")
        intro.append(
            phrase(
                ctx.opening
                or f"A new game of cribbage with {join_words(others) or 'the computer'}."
            )
        )
        intro.append(phrase(CUT_PARAGRAPH))
        if len(waiting_for) > 1:
            intro.append(
                phrase(f"Still to cut: {join_words([clean_name(n, 40) for n in waiting_for])}.")
            )
    page = Page(
        kind="cut",
        subject=subject,
        state=state,
        title=phrase(f"Cribbage · game {ctx.game_id} · cut for the deal"),
        matchup="",
        intro=tuple(intro),
        notices=notice_views(ctx),
        footer=(*ctx.deal_lines, *footer_lines()),
    )
    ask = not have_cut and not closing
    links = (link(ctx.reply_to, subject, "cut"),) if ask and ctx.reply_to else ()
    return _render(page, "cut", templates, ask=ask, links=links)
