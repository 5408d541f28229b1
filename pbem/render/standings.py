"""Standings → text, HTML and mail.

`standings_data` is the pure function the static site (``pbem site DIR``) and the
command line share: finished games' records in, the standings as JSON-ready data and as
an HTML fragment (a ``<table>``, every value escaped) out. `standings_page` wraps the
fragment in a small page of its own; `render_standings` is the ``standings`` mail:
the top of the table and the asker's own line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from pbem.ratings import (
    COLUMNS,
    GameRecord,
    Standing,
    Standings,
    cells,
    compute_standings,
    text_table,
)
from pbem.render.context import RenderedMail
from pbem.render.mail import _render
from pbem.render.page import Page, footer_lines
from pbem.render.words import phrase


def html_table(rows: Sequence[Standing], highlight: str | None = None) -> Markup:
    """The rows as an HTML ``<table class="standings">`` fragment; ``highlight``: the
    key of a row to mark."""
    head = "".join(f"<th>{escape(c)}</th>" for c in COLUMNS)
    body = []
    for row in rows:
        mark = ' class="me"' if highlight is not None and row.key == highlight else ""
        tds = "".join(f"<td>{escape(v)}</td>" for v in cells(row))
        body.append(f"<tr{mark}>{tds}</tr>")
    return Markup(
        '<table class="standings">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


@dataclass(frozen=True)
class StandingsData:
    """What the site and the command line get: the data and the HTML fragment."""

    data: dict[str, Any]
    html: str


def standings_data(records: Iterable[GameRecord], top: int | None = None) -> StandingsData:
    """The standings of ``records`` (finished games, any order): JSON-ready data and an
    HTML fragment of the table (``top`` rows, or all)."""
    return standings_fragment(compute_standings(records), top)


def standings_fragment(standings: Standings, top: int | None = None) -> StandingsData:
    """``standings`` (the stored table, or one computed) as JSON-ready data and an HTML
    fragment of the table (``top`` rows, or all)."""
    rows = standings.rows[:top] if top else standings.rows
    fragment = html_table(rows)
    note = (
        f'<p class="standings-note">{standings.games} finished games; rating = mu − 3σ '
        "(OpenSkill, Plackett–Luce); peg/hand and hand are average points per hand, crib "
        "the average points per crib the player owned.</p>"
    )
    return StandingsData(standings.to_json(), str(fragment) + note)


def standings_page(records: Iterable[GameRecord], title: str = "Cribbage standings") -> str:
    """A whole HTML page of the standings."""
    made = standings_data(records)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>"
        "body{font:15px/1.45 sans-serif;margin:16px;color:#222}"
        "table.standings{border-collapse:collapse}"
        "table.standings th,table.standings td{padding:3px 10px;border-bottom:1px solid #ddd;"
        "text-align:right}table.standings td:nth-child(2),table.standings th:nth-child(2)"
        "{text-align:left}"
        f"</style></head><body><h1>{escape(title)}</h1>\n{made.html}\n</body></html>\n"
    )


def render_standings(
    standings: Standings,
    me: str | None,
    top: int = 10,
    templates: Path | None = None,
) -> RenderedMail:
    """The answer to ``standings``: the top ``top`` and the asker's own line (``me``:
    their key) when they are not among them."""
    shown = list(standings.rows[:top])
    mine = standings.row(me) if me else None
    if mine is not None and mine not in shown:
        shown.append(mine)
    intro = [
        phrase(
            f"The standings after {standings.games} finished "
            f"game{'s' if standings.games != 1 else ''}. The rating rises as you win, more "
            "for beating a stronger player, and starts low until you have played a few "
            "games; peg/hand is the points you peg in a hand, hand the points your hand "
            "shows, crib what your own crib scores, each on average."
        )
    ]
    if mine is None:
        intro.append(phrase("You are not in the table yet: it counts finished games."))
    page = Page(
        kind="standings",
        subject="[Cribbage] Standings",
        title=phrase("Cribbage standings"),
        matchup="",
        intro=tuple(intro),
        footer=footer_lines()[1:],
    )
    return _render(
        page,
        "standings",
        templates,
        table=text_table(shown),
        html_table=html_table(shown, me),
    )
