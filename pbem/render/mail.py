"""Pages → mails: the Jinja2 environment, its filters and the public render functions."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Hashable, Sequence
from dataclasses import replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, pass_eval_context
from jinja2.nodes import EvalContext
from jinja2.runtime import Macro
from markupsafe import Markup, escape

from engine import Card, Event, PlayerView, Suit
from pbem.render.board import Board
from pbem.render.context import MailContext, RenderedMail
from pbem.render.links import link
from pbem.render.page import (
    Page,
    build_page,
    footer_lines,
    lobby_footer,
    notice_views,
    notices_title,
    state_subject,
    talk_lines,
    titled,
)
from pbem.render.words import Part, People, Phrase, clean_name, phrase, plain


def _templates_folder() -> Path:
    """Where the Jinja2 templates are.

    An installed wheel has its own copy, ``pbem/templates`` (setup.py copies the top-level
    folder into the build); a checkout or an editable install reads the top-level
    ``templates/`` beside the package.
    """
    package = Path(__file__).resolve().parents[1]
    shipped = package / "templates"
    if shipped.is_dir():
        return shipped
    return package.parent / "templates"


TEMPLATES = _templates_folder()
WIDTH = 78
RED = "#c62828"

# -- template filters -------------------------------------------------------------------


@cache
def _card_html(card: Card) -> Markup:
    """A card in bold, red suits red: ``<em>`` (the layout styles it; without styles a
    red card still stands out, in italics)."""
    red = card.suit in (Suit.HEARTS, Suit.DIAMONDS)
    return Markup("<em>{}</em>" if red else "<b>{}</b>").format(str(card))


@cache
def _tile_html(card: Card) -> Markup:
    """A card drawn as a small white card (``<kbd>``, as the layout styles it)."""
    red = card.suit in (Suit.HEARTS, Suit.DIAMONDS)
    return Markup("<kbd><em>{}</em></kbd>" if red else "<kbd>{}</kbd>").format(str(card))


def _tiles_filter(value: Phrase) -> Markup:
    """HTML only: a phrase with its cards drawn as small white cards."""
    return Markup("".join([_tile_html(x) if isinstance(x, Card) else escape(x) for x in value]))


@pass_eval_context
def _phrase_filter(eval_ctx: EvalContext, value: Phrase | Card | str) -> str | Markup:
    parts: Sequence[Part] = (value,) if isinstance(value, str | Card) else value
    if not eval_ctx.autoescape:
        return "".join([x if isinstance(x, str) else str(x) for x in parts])
    return Markup("".join([_card_html(x) if isinstance(x, Card) else escape(x) for x in parts]))


def _label_width(items: Sequence[tuple[str, Any]]) -> int:
    """How wide the labels of a two-column list are set: the longest, at most 12."""
    return min(max(len(label) for label, _ in items), 12)


@lru_cache(maxsize=1024)
def _memo(macro: Macro, *args: Hashable) -> Any:
    """``macro(*args)``, remembered: for a macro whose output depends on its arguments
    alone, called with the same ones mail after mail (the board changes only when someone
    scores; until then each player's mail draws the same one)."""
    return macro(*args)


# Characters textwrap turns into spaces (or breaks at): a line without them that fits
# is its own wrapping.
_WRAP_SPECIAL = re.compile(r"[\t\n\x0b\x0c\r]")


def _wrap(text: str, first: str = "", rest: str | None = None, width: int = WIDTH) -> str:
    """Wrap plain text; lines start with ``first`` then ``rest`` (default: as wide, blank)."""
    text = str(text)
    if (
        len(first) + len(text) <= width
        and text
        and not text[-1].isspace()
        and not text.isspace()
        and _WRAP_SPECIAL.search(text) is None
    ):
        return first + text  # what textwrap would make of it, without its cost
    return _textwrap(text, first, rest, width)


def _textwrap(text: str, first: str = "", rest: str | None = None, width: int = WIDTH) -> str:
    """`_wrap` without its short cut: every paragraph through `textwrap`."""
    rest = " " * len(first) if rest is None else rest
    out: list[str] = []
    for i, para in enumerate(text.split("\n")):
        lines = textwrap.wrap(
            para,
            width=width,
            initial_indent=first if i == 0 else rest,
            subsequent_indent=rest,
            break_long_words=False,
            break_on_hyphens=False,
        )
        out.extend(lines or [rest.rstrip()])
    return "\n".join(out)


@cache
def _environment(folder: str) -> Environment:
    env = Environment(
        loader=FileSystemLoader(folder),
        autoescape=lambda name: name is not None and name.endswith(".html"),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # templates are read once per process
    )
    env.filters["phrase"] = _phrase_filter
    env.filters["tiles"] = _tiles_filter
    env.filters["wrap"] = _wrap
    env.globals["WIDTH"] = WIDTH
    env.globals["label_width"] = _label_width
    env.globals["memo"] = _memo
    env.globals["RED"] = RED
    env.globals["notices_title"] = notices_title
    return env


def _render(page: Page, name: str, templates: Path | None, **extra: Any) -> RenderedMail:
    env = _environment(str(templates or TEMPLATES))
    preview = ""
    if page.result:
        preview = plain(page.result[0])
    elif page.prompt is not None:
        preview = plain(page.prompt.headline)
    if page.state:
        # The game's one Subject says nothing of the turn: the preheader says it first.
        preview = " · ".join(x for x in (page.state, preview) if x)
    values = {"page": page, "preview": preview, **extra}
    text = env.get_template(f"{name}.txt").render(values)
    if page.state:
        text = f"{page.state}\n\n{text}"
    html = env.get_template(f"{name}.html").render(values)
    # Blank lines in markup are bytes nobody sees (the peg board's <pre> has none).
    return RenderedMail(page.subject, _tidy(text), _BLANKS_HTML.sub("\n", html))


def _tidy(text: str) -> str:
    """Trailing spaces off (but keep the "-- " signature line), at most one blank line."""
    lines = [line if line == "-- " else line.rstrip() for line in text.splitlines()]
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip("\n") + "\n"


_BLANKS = re.compile(r"\n{3,}")
_BLANKS_HTML = re.compile(r"\n{2,}")


# -- the public functions ---------------------------------------------------------------


def render_board_text(board: Board, templates: Path | None = None) -> str:
    """The peg board and the scores in plain text, exactly as a mail's text part draws them."""
    env = _environment(str(templates or TEMPLATES))
    return str(env.get_template("_text.txt").module.board(board)).strip("\n") + "\n"  # type: ignore[attr-defined]


def render_turn(view: PlayerView, ctx: MailContext, templates: Path | None = None) -> RenderedMail:
    """The mail after a move (or the game-over mail when ``view.outcome`` is set)."""
    p = People(view, ctx)
    subject, state = titled(ctx, state_subject(view, p, ctx))
    kind = "gameover" if view.outcome is not None else "turn"
    return _render(build_page(kind, view, ctx, subject, state=state), "mail", templates)


def render_observer(
    view: PlayerView, ctx: MailContext, templates: Path | None = None
) -> RenderedMail:
    """The mail to someone watching the game (``watch GAME``) after a move: the public
    board from an `engine.observer_view` — no hand, no prompt, nothing to reply but
    ``unwatch``. Its own template (``observe``) has no place for a hand."""
    p = People(view, ctx)
    state = state_subject(view, p, ctx)
    subject, state = titled(ctx, f"Watching — {state}")
    kind = "observe-over" if view.outcome is not None else "observe"
    intro = (
        phrase(
            f"You are watching game {ctx.game_id}: the public board after each move, "
            "never a hidden card."
        ),
    )
    page = build_page(kind, view, ctx, subject, intro=intro, state=state)
    page = replace(page, hand=(), prompt=None, footer=observer_footer(ctx.game_id))
    return _render(page, "observe", templates)


def observer_footer(game_id: int) -> tuple[str, ...]:
    """The last lines of an observer's mail: how to stop watching."""
    return (
        f'Reply "unwatch {game_id}" to stop watching; observers cannot move in the game.',
        "Sent automatically; your replies are read by a program.",
    )


def render_error(
    ctx: MailContext,
    view: PlayerView | None,
    title: str,
    templates: Path | None = None,
    footer: Sequence[str] | None = None,
    answers: Sequence[tuple[str, str]] = (),
) -> RenderedMail:
    """A reply to a known player whose mail could not be applied; the notices say why.

    Without a view the mail stands outside any game: its ``footer`` (by default
    `lobby_footer`) offers only what works there, never "history" or "hand"; its
    ``answers`` (label, command) become one-click links to ``ctx.reply_to``."""
    subject, state = titled(ctx, clean_name(title, 60))
    if view is None:
        asked = {command for _, command in answers}
        page = Page(
            kind="error",
            subject=subject,
            state=state,
            title=phrase(clean_name(title, 70)),
            matchup="",
            notices=tuple(  # an answer the mail links already is not linked twice
                replace(n, offers=tuple(o for o in n.offers if o.command not in asked))
                for n in notice_views(ctx)
            ),
            footer=(*ctx.deal_lines, *(lobby_footer() if footer is None else footer)),
            answers=tuple(
                link(ctx.reply_to, subject, command, phrase(label))
                for label, command in answers
                if ctx.reply_to
            ),
        )
        return _render(page, "mail", templates)
    page = build_page(
        "error",
        view,
        ctx,
        subject,
        news=False,
        intro=(phrase(clean_name(title, 70)),),
        state=state,
    )
    return _render(page, "mail", templates)


def render_help(
    ctx: MailContext | None,
    game_label: str,
    templates: Path | None = None,
    rules: str = "",
) -> RenderedMail:
    """The command language, with the service's reply hint when a game is known, and
    that game's house rules (`pbem.render.board.house_rules`) when given."""
    subject, state = titled(ctx, "How to play by mail", game_label)
    page = Page(
        kind="help",
        subject=subject,
        state=state,
        title=phrase(f"{clean_name(game_label, 40)}: how to play by mail"),
        matchup="",
        intro=(phrase(f"House rules of this game: {rules}."),) if rules else (),
        notices=notice_views(ctx),
        footer=(*(ctx.deal_lines if ctx else ()), *footer_lines()[1:]),
    )
    return _render(page, "help", templates)


SAY_HINT = (
    'Reply "say …" to answer (the rest of the line goes to the table as written); '
    "your next game mail shows it too."
)


def render_talk(
    ctx: MailContext, templates: Path | None = None, observer: bool = False
) -> RenderedMail:
    """The short mail that relays table talk (``ctx.talk``) at once, under its own
    heading: who said what, and how to answer — no cards, no board (it is built without
    a view, so it shows no hand). ``observer``: to someone watching the game, who cannot
    answer (``say`` is the players'), only stop watching."""
    # The subject names no one and quotes nothing: who said what is in the body.
    subject, state = titled(ctx, "Table talk")
    footer = observer_footer(ctx.game_id) if observer else (SAY_HINT, *footer_lines())
    page = Page(
        kind="talk",
        subject=subject,
        state=state,
        title=phrase(f"Cribbage · game {ctx.game_id} · table talk"),
        matchup="",
        talk=talk_lines(ctx.talk),
        footer=footer,
    )
    return _render(page, "mail", templates)


def render_note(ctx: MailContext, what: str, templates: Path | None = None) -> RenderedMail:
    """A short mail of its own for a note of the game (``ctx.notices``: the answer to
    ``away``, ``hints on``, ``mail all``; another player away or back, hints asked
    for): the notes, each offer one click, and no board — the last game mail still
    shows where the game is. ``what``: its state line ("Note")."""
    subject, state = titled(ctx, what)
    page = Page(
        kind="note",
        subject=subject,
        state=state,
        title=phrase(f"Cribbage · game {ctx.game_id} · {what.lower()}"),
        matchup="",
        notices=notice_views(ctx),
        footer=footer_lines(),
    )
    return _render(page, "mail", templates)


DEALS_CHECK = (
    'It checks the deals too: the box at the top of the page reads "All … deals '
    "verified\" when every deal is the one the commitment in this game's mails fixed "
    "before the first deal, and turns red if one is not."
)
"""How a fair game's replay page checks its deals, told to players (who have no
``pbem verify``): under the game-over mail's replay page and in the archive mail."""


def render_archive(
    ctx: MailContext,
    filename: str,
    page_name: str | None = None,
    templates: Path | None = None,
) -> RenderedMail:
    """The mail that carries a finished game's archive (attached as ``filename``) and
    its replay page (``page_name``), saying what they are for: to keep the game, and to
    replay it and check its deals — in a web browser, with no program to install."""
    subject, state = titled(ctx, "The game's archive")
    name = clean_name(filename, 60)
    intro: tuple[Phrase, ...] = (
        phrase(
            f"Attached: {name}, the record of the whole game — its house rules, the seed "
            "of the shuffle and every move — as the service keeps it. The seed and the "
            "moves rebuild every deal and every score exactly: keep it, and the game can "
            "be replayed and checked at any time."
        ),
    )
    if page_name:
        shown = clean_name(page_name, 60)
        intro = (
            *intro,
            phrase(
                f"Also attached: {shown}, its replay page. Open it in your web browser (it "
                "needs no network) to step through the game: it opens on your own view; "
                "choose “everything” in its View menu to see every hand face up."
            ),
        )
        if ctx.deal_lines:
            intro = (*intro, phrase(DEALS_CHECK))
    page = Page(
        kind="archive",
        subject=subject,
        state=state,
        title=phrase(f"Cribbage · game {ctx.game_id} · the archive"),
        matchup="",
        intro=intro,
        notices=notice_views(ctx),
        footer=(*ctx.deal_lines, *footer_lines(game_over=True)),
    )
    return _render(page, "mail", templates)


def render_history(
    view: PlayerView,
    ctx: MailContext,
    events: tuple[Event, ...],
    templates: Path | None = None,
) -> RenderedMail:
    """Every move the recipient may see so far, hand by hand, and the board now."""
    subject, state = titled(ctx, "The moves so far")
    page = build_page("history", view, ctx, subject, events=events, state=state)
    return _render(page, "mail", templates)


def render_reminder(
    view: PlayerView, ctx: MailContext, waited: str, templates: Path | None = None
) -> RenderedMail:
    """A nudge to a player the game has waited for since ``waited`` (e.g. "2 days")."""
    p = People(view, ctx)
    state = state_subject(view, p, ctx)
    subject, state = titled(ctx, f"Reminder — {state.split(' — ', 1)[-1]}")
    waited = clean_name(waited, 40)
    if view.my_turn:
        intro = phrase(f"A reminder: the game has been waiting for your move for {waited}.")
    else:
        intro = phrase(f"A reminder: the game has been quiet for {waited}.")
    page = build_page("reminder", view, ctx, subject, news=False, intro=(intro,), state=state)
    return _render(page, "mail", templates)
