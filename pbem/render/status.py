"""Mails that tell the players the admin paused, resumed or aborted their game.

Each is built from the recipient's view like a turn mail, with the admin's reason on
top. A paused game offers no move (moves are refused until it is resumed); a resumed one
says whose turn it is, as a turn mail would; an aborted one never offers a move again:
it says the game was stopped and gives the score it stopped at.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from engine import PlayerView
from pbem.render.context import MailContext, RenderedMail
from pbem.render.mail import _render
from pbem.render.page import build_page, footer_lines, state_subject, titled
from pbem.render.words import People, clean_name, phrase

STATUS_WORDS = {"paused": "paused", "active": "resumed", "aborted": "aborted"}


def render_status_change(
    view: PlayerView,
    ctx: MailContext,
    status: str,
    reason: str,
    templates: Path | None = None,
) -> RenderedMail:
    """The mail telling a player the game is now ``status`` (``paused``, ``active`` or
    ``aborted``) because of ``reason``."""
    reason = clean_name(reason, 300).rstrip(".")
    p = People(view, ctx)
    if status == "aborted":
        return render_aborted(view, ctx, reason, templates)
    if status == "paused":
        ctx = replace(ctx, paused=True)
        intro = (phrase(f"The admin paused this game. Reason: {reason}."),)
        subject, state = titled(ctx, "Game paused")
        page = build_page("status", view, ctx, subject, news=False, intro=intro, state=state)
        return _render(replace(page, prompt=None), "mail", templates)
    ctx = replace(ctx, paused=False)
    intro = (phrase(f"The admin resumed this game. Reason: {reason}."),)
    subject, state = titled(ctx, f"Game resumed — {state_subject(view, p, ctx)}")
    page = build_page("status", view, ctx, subject, news=False, intro=intro, state=state)
    return _render(page, "mail", templates)


def render_aborted(
    view: PlayerView,
    ctx: MailContext,
    reason: str | None,
    templates: Path | None = None,
) -> RenderedMail:
    """The mail of an aborted game: why, and the score it stopped at; no move offered."""
    p = People(view, ctx)
    said = f" Reason: {clean_name(reason, 300).rstrip('.')}." if reason else ""
    intro = (
        phrase(f"The admin aborted this game.{said} No more moves will be made."),
        phrase(f"The score when it stopped: {p.score().removeprefix('Score: ')}."),
    )
    ctx = replace(ctx, paused=False)
    subject, state = titled(ctx, "Game aborted")
    page = build_page("status", view, ctx, subject, intro=intro, state=state)
    page = replace(
        page,
        prompt=None,
        news=(),
        news_title="",
        table=(),
        footer=(*ctx.deal_lines, *footer_lines(game_over=True)),
    )
    return _render(page, "mail", templates)
