"""``pbem replay FILE --html OUT`` (an archive file's replay page, no database needed) and
``pbem site DIR`` (a static site of the finished games)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from pbem.cli.archive import write_page
from pbem.cli.base import examples, fail, guard, out, service

commands = typer.Typer()  # no name: its commands join the top level (pbem.cli)


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


@commands.command("site", epilog=examples("pbem site /var/www/cribbage"))
def site(
    folder: Path,
) -> None:
    """A static site of the finished games: index.html, standings.html, games/ID.html
    (the replay page) and games/ID.json (the archive, without the players' addresses);
    relative links only, servable by any web server."""
    from sqlmodel import Session, col, select

    from pbem.render.site import game_page, public_archive, site_game, site_index, standings_page
    from pbem.render.standings import standings_data
    from pbem.service import archive_bytes
    from pbem.service.standings import finished_records
    from pbem.store import models as m

    svc = service()
    with Session(svc.db) as session:
        rows = session.exec(
            select(m.Game)
            .where(m.Game.status == m.GameStatus.FINISHED.value)
            .order_by(col(m.Game.finished_at).desc(), col(m.Game.id).desc())
        ).all()
        ids = [row.id for row in rows if row.id is not None]
    games_dir = folder / "games"
    try:
        games_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot create {games_dir}: {exc.strerror or exc}")
    entries = []
    for game_id in ids:
        data = public_archive(guard(svc.export, game_id))
        write_page(games_dir / f"{game_id}.html", game_page(data))
        try:
            (games_dir / f"{game_id}.json").write_bytes(archive_bytes(data))
        except OSError as exc:
            fail(f"cannot write {games_dir / f'{game_id}.json'}: {exc.strerror or exc}")
        entries.append(site_game(data, f"games/{game_id}.html"))
    with Session(svc.db) as session:
        records = guard(finished_records, svc._ctx(), session)
    write_page(folder / "standings.html", standings_page(standings_data(records).html))
    write_page(folder / "index.html", site_index(entries, standings_href="standings.html"))
    games = f"{len(entries)} finished game{'' if len(entries) == 1 else 's'}"
    out.print(f"site of {games} written to {folder}")
