"""``pbem game replay ID --html FILE``, ``pbem replay FILE --html OUT`` and ``pbem site
DIR`` through the real command line and database (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from tests.e2e.helpers import cli_env, run_cli
from tests.pbem.replay.proofs import proof_archive


def _embedded(html: str) -> dict[str, Any]:
    match = re.search(
        r'<script type="application/json" id="replay-data">(.*?)</script>', html, re.S
    )
    assert match
    data: dict[str, Any] = json.loads(match.group(1))
    if data.get("archive_json"):  # the deal proof travels inside the archive's text
        data["deal_proof"] = json.loads(data["archive_json"])["deal_proof"]
    return data


def _import(env: dict[str, str | None], tmp_path: Path, archive: dict[str, Any]) -> str:
    path = tmp_path / f"in-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(archive), encoding="utf-8")
    result = run_cli(env, "game", "import", str(path), "--again")
    assert result.exit_code == 0, result.output
    match = re.search(r"imported as game (\d+)", result.stdout)
    assert match
    return match.group(1)


def test_game_replay_html_of_a_finished_and_a_running_game(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    env = cli_env(tmp_path, db_url)
    finished = _import(env, tmp_path, proof_archive(3, target=61))
    running = _import(env, tmp_path, proof_archive(2, target=61, stop_after=12))

    out = tmp_path / "finished.html"
    result = run_cli(env, "game", "replay", finished, "--html", str(out))
    assert result.exit_code == 0, result.output
    assert f"replay of game {finished} written to {out}" in result.stdout
    data = _embedded(out.read_text(encoding="utf-8"))
    assert data["over"] and data["seat"] is None and data["names"] == ["Alice", "Bob", "Carol"]
    assert data["finished_at"]  # the archive now carries it
    assert data["result"] and data["seed"]

    result = run_cli(env, "game", "replay", finished, "--html", str(out), "--as", "Carol")
    assert result.exit_code == 0, result.output
    assert "as Carol" in result.stdout
    assert _embedded(out.read_text(encoding="utf-8"))["seat"] == 2

    # A game still running: only as one player, and never its seed.
    refused = run_cli(env, "game", "replay", running, "--html", str(tmp_path / "r.html"))
    assert refused.exit_code == 1
    assert "still running" in refused.stderr and "--as PLAYER" in refused.stderr
    assert not (tmp_path / "r.html").exists()
    mine = tmp_path / "mine.html"
    result = run_cli(
        env, "game", "replay", running, "--html", str(mine), "--as", "bob@example.test"
    )
    assert result.exit_code == 0, result.output
    html = mine.read_text(encoding="utf-8")
    data = _embedded(html)
    assert data["hidden"] and data["seat"] == 1 and data["seed"] is None
    assert all(isinstance(st["hold"][0], int) for st in data["states"])

    # Mistakes: one line and exit 1.
    for args, said in [
        (("game", "replay", "999", "--html", str(mine)), "999"),
        (("game", "replay", running, "--html", str(mine), "--as", "Zed"), "no player 'Zed'"),
        (("game", "replay", finished, "--html", str(tmp_path / "no" / "x.html")), "cannot write"),
    ]:
        bad = run_cli(env, *args)
        assert bad.exit_code == 1 and said in bad.stderr, bad.output
        assert "Traceback" not in bad.output


def test_replay_from_an_archive_file(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    archive = tmp_path / "game.json"
    archive.write_text(json.dumps(proof_archive(4, target=61)), encoding="utf-8")
    out = tmp_path / "game.html"
    result = run_cli(env, "replay", str(archive), "--html", str(out), "--as", "Dave")
    assert result.exit_code == 0, result.output
    data = _embedded(out.read_text(encoding="utf-8"))
    assert data["seat"] == 3 and data["players"] == 4
    assert [s["name"] for s in data["sides"]] == ["Alice & Carol", "Bob & Dave"]

    running = tmp_path / "running.json"
    running.write_text(json.dumps(proof_archive(2, target=61, stop_after=5)), encoding="utf-8")
    (tmp_path / "junk.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "list.json").write_text("[]", encoding="utf-8")
    for args, said in [
        ((str(running),), "still running"),
        ((str(tmp_path / "missing.json"),), "does not exist"),
        ((str(tmp_path / "junk.json"),), "not a JSON archive"),
        ((str(tmp_path / "list.json"),), "not a JSON archive"),
        ((str(archive), "--as", "Nobody"), "no player 'Nobody'"),
        ((str(archive), "--as", "7"), "no seat 7"),
    ]:
        bad = run_cli(env, "replay", *args, "--html", str(tmp_path / "bad.html"))
        assert bad.exit_code == 1 and said in bad.stderr, bad.output
    assert not (tmp_path / "bad.html").exists()


def test_site_lists_finished_games_with_relative_links(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    env = cli_env(tmp_path, db_url)
    empty = tmp_path / "empty-site"
    result = run_cli(env, "site", str(empty))
    assert result.exit_code == 0, result.output
    assert "No finished games yet." in (empty / "index.html").read_text(encoding="utf-8")

    two = _import(env, tmp_path, proof_archive(2, target=61))
    four = _import(env, tmp_path, proof_archive(4, target=121))
    _import(env, tmp_path, proof_archive(3, target=61, stop_after=9))  # running: not listed
    site = tmp_path / "site"
    result = run_cli(env, "site", str(site))
    assert result.exit_code == 0, result.output
    assert "site of 2 finished games" in result.stdout
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "@example.test" not in index
    links = re.findall(r'href="([^"]+)"', index)
    assert sorted(links) == sorted(["standings.html", f"games/{two}.html", f"games/{four}.html"])
    standings = (site / "standings.html").read_text(encoding="utf-8")
    assert 'href="index.html"' in standings and '<table class="standings">' in standings
    for name in ("Alice", "Bob", "Carol", "Dave"):
        assert name in standings
    for link in [link for link in links if link.startswith("games/")]:
        page = site / link
        assert page.exists()
        data = _embedded(page.read_text(encoding="utf-8"))
        # An imported fair game keeps its deal proof: the page can check the deals.
        assert data["over"] and data["seed"] and data["deal_proof"]["server_seed"]
        published = page.with_suffix(".json").read_text(encoding="utf-8")
        archive = json.loads(published)
        assert archive["seed"] == data["seed"]
        for name in ("alice", "bob", "carol", "dave"):  # no player's address on the site
            assert f"{name}@example.test" not in published
        assert [p["name"] for p in archive["players"]][:2] == ["Alice", "Bob"]
    assert "Alice &amp; Carol" in index and "Bob &amp; Dave" in index
    assert "to 61" not in index and "<td>121</td>" in index
    assert "4 players (partners)" in index
    assert "http:" not in index and "https:" not in index

    blocked = tmp_path / "file"
    blocked.write_text("", encoding="utf-8")
    bad = run_cli(env, "site", str(blocked / "sub"))
    assert bad.exit_code == 1 and "cannot create" in bad.stderr


def test_a_fair_game_waiting_for_its_cuts_has_no_replay_yet(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    from tests.e2e.helpers import ALICE, BOB, Harness

    h = Harness.build(tmp_path, db_url, db_engine, fair_deals=True)
    try:
        game_id = h.service.new_game([ALICE, BOB], target=61)
        h.step()
        env = cli_env(tmp_path, db_url)
        page = tmp_path / "x.html"
        result = run_cli(env, "game", "replay", str(game_id), "--html", str(page), "--as", "Alice")
        assert result.exit_code == 1 and "waits for the players' cuts" in result.stderr
        assert not page.exists()
        site = run_cli(env, "site", str(tmp_path / "site"))
        assert site.exit_code == 0 and "site of 0 finished games" in site.stdout
    finally:
        h.close()


def test_site_again_makes_only_new_and_changed_games(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    from sqlmodel import Session, select

    from pbem.store import models as m

    env = cli_env(tmp_path, db_url)
    site = tmp_path / "site"
    first = _import(env, tmp_path, proof_archive(2, target=61))
    second = _import(env, tmp_path, proof_archive(4, target=61))

    def build(*options: str) -> str:
        result = run_cli(env, "site", str(site), *options)
        assert result.exit_code == 0, result.output
        return result.stdout

    assert "site of 2 finished games" in build() and "(2 made, 0 unchanged)" in build("--all")
    stale = "<p>not made again</p>"
    for game_id in (first, second):
        (site / "games" / f"{game_id}.html").write_text(stale, encoding="utf-8")
    assert "(0 made, 2 unchanged)" in build()
    assert (site / "games" / f"{first}.html").read_text(encoding="utf-8") == stale
    # A new game is made; so are the games of a player who chose another name.
    third = _import(env, tmp_path, proof_archive(2, target=61))
    said = build()
    assert "site of 3 finished games" in said and "(1 made, 2 unchanged)" in said
    with Session(db_engine) as session:
        dave = session.exec(select(m.Player).where(m.Player.display_name == "Dave")).one()
        dave.display_name = "Davina"
        session.add(dave)
        session.commit()
    assert "(1 made, 2 unchanged)" in build()  # Dave sat only at the four-player game
    assert "Davina" in (site / "games" / f"{second}.html").read_text(encoding="utf-8")
    assert "Davina" in (site / "index.html").read_text(encoding="utf-8")
    assert "Davina" in (site / "standings.html").read_text(encoding="utf-8")
    assert (site / "games" / f"{first}.html").read_text(encoding="utf-8") == stale
    # A page gone, or a manifest that is not one: those pages are made again.
    (site / "games" / f"{third}.json").unlink()
    assert "(1 made, 2 unchanged)" in build()
    (site / "site.json").write_text("{not json", encoding="utf-8")
    assert "(3 made, 0 unchanged)" in build()
    assert stale not in (site / "games" / f"{first}.html").read_text(encoding="utf-8")
