"""``pbem replay FILE --html OUT`` (an archive file's replay page, no database needed) and
``pbem site DIR`` (a static site of the finished games)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from pbem.cli.archive import write_page
from pbem.cli.base import app_group, examples, fail, guard, out, service

commands = app_group()  # no name: its commands join the top level (pbem.cli)


def _read_archive(file: Path) -> dict[str, Any]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        fail(f"{file} does not exist")
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        fail(f"{file} is not a JSON archive: {exc}")
    if not isinstance(data, dict):
        fail(f"{file} is not a JSON archive")
    return data


def _archive_seat(data: dict[str, Any], who: str) -> int:
    """The seat ``who`` names in an archive: a seat number, a name or an address."""
    people = data.get("players")
    people = people if isinstance(people, list) else []
    if who.isdigit():
        return int(who)
    for seat, person in enumerate(people):
        if not isinstance(person, dict):
            continue
        if who.lower() in (
            str(person.get("email", "")).lower(),
            str(person.get("name", "")).lower(),
        ):
            return seat
    fail(f"no player {who!r} in the archive")


@commands.command(
    "replay",
    epilog=examples(
        "pbem replay cribbage-12.json --html cribbage-12.html",
        "pbem replay cribbage-12.json --html mine.html --as Alice",
    ),
)
def replay_file(
    file: Path,
    html: Annotated[
        Path, typer.Option("--html", help="The HTML page to write (one self-contained file).")
    ],
    as_player: Annotated[
        str | None,
        typer.Option(
            "--as",
            help="Whose view (seat, name or address); a game still running needs it.",
        ),
    ] = None,
) -> None:
    """An archive file's replay page (the file `pbem game export` or the archive mail gives)."""
    from pbem.render.replay import ReplayPageError, replay_page

    data = _read_archive(file)
    seat = None if as_player is None else _archive_seat(data, as_player)
    try:
        page = replay_page(data, seat=seat)
    except ReplayPageError as exc:
        fail(f"{file}: {exc}")
    write_page(html, page.html)
    out.print(f"replay of {file} written to {html} ({page.states} steps)")


MANIFEST = "site.json"
"""What ``pbem site`` wrote last time, in the site's folder: each game's stamp and index line."""


def _read_manifest(folder: Path) -> dict[str, Any]:
    """The games written last time (empty when there is no manifest, or it is unreadable:
    then every page is made again)."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    games = data.get("games") if isinstance(data, dict) and data.get("format") == 1 else None
    return games if isinstance(games, dict) else {}


def _entry_of(saved: Any) -> Any:
    """A saved index line, or None when it is not one."""
    from pbem.render.site import SiteGame

    if not isinstance(saved, dict):
        return None
    try:
        entry = dict(saved)
        entry["sides"] = tuple(tuple(side) for side in entry["sides"])
        return SiteGame(**entry)
    except (KeyError, TypeError, ValueError):
        return None


def _publish_log(db: Any, folder: Path) -> tuple[int, str]:
    """Write the public commitment log (``commitment-log.json``, `pbem.cli.commitlog`)
    and return its head."""
    from pbem.cli.commitlog import published
    from pbem.store.commitlog import entries, head_of

    with db.connect() as connection:
        rows, head = entries(connection), head_of(connection)
    write_page(folder / "commitment-log.json", json.dumps(published(rows, head), indent=1))
    return head


@commands.command(
    "site", epilog=examples("pbem site /var/www/cribbage", "pbem site /var/www/cribbage --all")
)
def site(
    folder: Path,
    remake_all: Annotated[
        bool,
        typer.Option("--all", help="Make every game's pages again, changed or not."),
    ] = False,
) -> None:
    """A static site of the finished games: index.html, standings.html, games/ID.html
    (the replay page) and games/ID.json (the archive, without the players' addresses);
    relative links only, servable by any web server. Run again on the same folder, it
    makes the pages of new and changed games only (site.json says what it wrote)."""
    from dataclasses import asdict

    from sqlmodel import Session

    from pbem.render.site import game_page, public_archive, site_game, site_index, standings_page
    from pbem.render.standings import standings_fragment
    from pbem.service import archive_bytes
    from pbem.service.game.standings import current_standings
    from pbem.service.site import finished_stamps

    svc = service()
    with Session(svc.db) as session:
        stamps = guard(finished_stamps, session)
    games_dir = folder / "games"
    try:
        games_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot create {games_dir}: {exc.strerror or exc}")
    known = {} if remake_all else _read_manifest(folder)
    written: dict[str, Any] = {}
    entries = []
    made = 0
    for game_id, _ended, stamp in stamps:
        saved = known.get(str(game_id))
        page, archive = games_dir / f"{game_id}.html", games_dir / f"{game_id}.json"
        entry = None
        if isinstance(saved, dict) and saved.get("stamp") == stamp and page.exists():
            entry = _entry_of(saved.get("entry"))
        if entry is None or not archive.exists():
            data = public_archive(guard(svc.export, game_id))
            write_page(page, game_page(data))
            try:
                archive.write_bytes(archive_bytes(data))
            except OSError as exc:
                fail(f"cannot write {archive}: {exc.strerror or exc}")
            entry = site_game(data, f"games/{game_id}.html")
            made += 1
        entries.append(entry)
        written[str(game_id)] = {"stamp": stamp, "entry": asdict(entry)}
    with Session(svc.db) as session:
        table = guard(current_standings, svc._ctx(), session)
    write_page(folder / "standings.html", standings_page(standings_fragment(table).html))
    write_page(folder / "index.html", site_index(entries, standings_href="standings.html"))
    head = _publish_log(svc.db, folder)
    manifest = json.dumps({"format": 1, "games": written}, ensure_ascii=False)
    write_page(folder / MANIFEST, manifest)
    games = f"{len(entries)} finished game{'' if len(entries) == 1 else 's'}"
    out.print(f"site of {games} written to {folder} ({made} made, {len(entries) - made} unchanged)")
    out.print(f"commitment log: {head[0]} entries, head {head[1]}", highlight=False)
