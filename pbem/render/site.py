"""``pbem site DIR``: a static site of the finished games — an index, each game's replay
page and archive, and the standings — with relative links only, so any web server (or a
folder opened from disk) serves it. Nothing on it names a player's address."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import Settings
from pbem.render.mail import TEMPLATES, _environment
from pbem.render.replay import SIDE_COLOURS, replay_page, result_words, seat_names


@dataclass(frozen=True)
class SiteGame:
    """One line of the index."""

    game_id: int
    href: str
    sides: tuple[tuple[str, str], ...]  # (names, colour) per side
    date: str
    result: str
    target: int
    settings: str


def site_game(archive: dict[str, Any], href: str) -> SiteGame:
    """The index line of a finished game's archive."""
    from engine import load

    game = load(archive)
    settings: Settings = game.settings
    names = seat_names(archive, game.players)
    sides = tuple(
        (" & ".join(names[s] for s in game.seats_of(side)), SIDE_COLOURS[side])
        for side in range(settings.sides)
    )
    words = [f"{settings.players} players"]
    if settings.players == 4:
        words[0] += " (partners)"
    words.append(f"skunk rule: {settings.skunk}")
    if settings.muggins:
        words.append("muggins")
    when = str(archive.get("finished_at") or archive.get("created_at") or "")[:10]
    outcome = game.outcome
    return SiteGame(
        game_id=int(archive.get("game_id") or 0),
        href=href,
        sides=sides,
        date=when,
        result=result_words(outcome, names, settings.skunk, settings.target) if outcome else "",
        target=settings.target,
        settings=", ".join(words),
    )


def site_index(
    games: list[SiteGame], *, standings_href: str | None, templates: Path | None = None
) -> str:
    """The index page: the finished games, newest first as given."""
    env = _environment(str(templates or TEMPLATES))
    return env.get_template("site_index.html").render(games=games, standings_href=standings_href)


def public_archive(archive: dict[str, Any]) -> dict[str, Any]:
    """An archive to publish: the players' names without their addresses (everything
    else, the deal proof included, as it is)."""
    people = archive.get("players")
    if not isinstance(people, list):
        return archive
    named = [{"name": p.get("name")} if isinstance(p, dict) else {} for p in people]
    return {**archive, "players": named}


def standings_page(fragment: str, templates: Path | None = None) -> str:
    """The standings page around ``fragment`` (`pbem.render.standings.standings_data`'s
    escaped HTML table)."""
    env = _environment(str(templates or TEMPLATES))
    return env.get_template("site_standings.html").render(fragment=fragment)


def game_page(archive: dict[str, Any], templates: Path | None = None) -> str:
    """A finished game's replay page for the site (everything shown, the deals verifiable)."""
    return replay_page(archive, templates=templates).html
