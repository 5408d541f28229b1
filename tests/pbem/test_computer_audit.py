"""A real service game against the computer (SQLite, fair deals): its archive names the
computer seats, ``pbem verify`` re-derives every computer move from that seat's own cards
(exit codes and output), and the replay page shows the server's result."""

from __future__ import annotations

import copy
import json
import random
import shutil
import subprocess
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from engine.audit import audit_archive, engine_label
from engine.view import player_view
from pbem import engine_digest, engine_version
from pbem.cli.fair import NOT_VERIFIABLE_EXIT
from pbem.render.replay import replay_page
from pbem.service import ServiceError, admin
from pbem.store.db import make_engine
from tests.cli_process import PBEM
from tests.e2e.helpers import ALICE, BOB, Harness, cli_env, fresh_env, run_cli
from tests.engine.test_audit import changed_at, person_move
from tests.pbem.replay.browser import launch, open_page

ENGINE = engine_label(engine_version())
CUT = "cut 17 quiet cats"


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory, _sqlite_template: Path) -> Iterator[Harness]:
    """The service on a real SQLite file with fair deals, shared by this module's tests."""
    folder = tmp_path_factory.mktemp("computer-audit")
    shutil.copyfile(_sqlite_template, folder / "pbem.db")
    url = f"sqlite:///{folder / 'pbem.db'}"
    db = make_engine(url)
    h = Harness.build(folder, url, db, fair_deals=True)
    try:
        yield h
    finally:
        h.close()
        db.dispose()


def play_out(h: Harness, game_id: int, moves: int = 300) -> None:
    """Alice plays by mail (`person_move`) until the game is over (or ``moves`` are
    made); the computer seats move inside the service."""
    rng = random.Random(game_id)
    for _ in range(moves):
        game = h.game(game_id)
        if game.is_over:
            return
        assert game.to_act() == (0,), game.to_act()  # only Alice is ever waited for
        h.move(game_id, person_move(player_view(game, 0), rng))
        assert h.last_inbound().status == "applied", h.last_inbound().reason
    if moves == 300:
        raise AssertionError("the game did not end")


@pytest.fixture(scope="module")
def against_computer(harness: Harness) -> tuple[int, dict[str, Any]]:
    """Alice against the computer at two levels (3 players, muggins, to 61), cut and
    played out by mail: the game's id and its exported archive."""
    robots = [(f"computer{n}@{harness.settings.domain}", "Computer") for n in (1, 2)]
    game_id = admin.new_game(
        harness.service._ctx(),
        [ALICE, *robots],
        target=61,
        muggins=True,
        computer=[1, 2],
        levels={1: "hard", 2: "easy"},
    )
    harness.step()
    harness.answer(ALICE[0], CUT)
    play_out(harness, game_id)
    return game_id, harness.service.export(game_id)


def test_the_archive_names_the_computer_seats(
    harness: Harness, against_computer: tuple[int, dict[str, Any]]
) -> None:
    game_id, data = against_computer
    assert data["computer"] == [
        {"seat": 1, "level": "hard", "engine": ENGINE, "engine_sha256": engine_digest()},
        {"seat": 2, "level": "easy", "engine": ENGINE, "engine_sha256": engine_digest()},
    ]
    assert engine_version() != "unknown" and ENGINE.endswith(f" {engine_version()}")
    audit = audit_archive(data, engine=ENGINE)
    logged = [seat for _, seat, _, _ in harness.log(game_id) if seat in (1, 2)]
    assert audit.ok and audit.decisions == len(logged) > 30
    # A game between people names no computer.
    people = harness.service.new_game([ALICE, BOB], target=61, seed="people")
    assert harness.service.export(people)["computer"] == []


def test_an_imported_archive_keeps_its_computer_seats_when_they_re_derive(
    harness: Harness, against_computer: tuple[int, dict[str, Any]]
) -> None:
    _, data = against_computer
    copy_id = harness.service.import_archive(data)
    again = harness.service.export(copy_id)
    assert again["computer"] == data["computer"] and again["actions"] == data["actions"]
    tampered = copy.deepcopy(data)
    tampered["computer"][0]["level"] = "medium"
    with pytest.raises(ServiceError, match=r"computer moves do not re-derive: .* action "):
        harness.service.import_archive(tampered)
    with pytest.raises(ServiceError, match=r"deals do not verify: .*computer: .* not of type"):
        harness.service.import_archive({**data, "computer": "seat 1"})


def test_verify_re_derives_the_computers_moves(
    harness: Harness, against_computer: tuple[int, dict[str, Any]], tmp_path: Path
) -> None:
    game_id, data = against_computer
    env = cli_env(harness.tmp_path, harness.settings.database_url, fair_deals="true")
    decisions = audit_archive(data).decisions
    line = f"the computer played only from its own cards ({decisions} decisions re-derived)"
    by_id = run_cli(env, "verify", "--game", str(game_id))
    assert by_id.exit_code == 0, by_id.output
    assert by_id.stdout.splitlines()[0].startswith("all ") and "deals verified" in by_id.stdout
    assert by_id.stdout.splitlines()[1] == line
    # The engine is named by content: the hash of its code, the same as the running one.
    from pbem import engine_digest

    assert data["computer"][0]["engine_sha256"] == engine_digest()
    assert f"is the one the archive names (SHA-256 {engine_digest()})" in by_id.stdout
    other = {**data, "computer": [{**c, "engine_sha256": "e" * 64} for c in data["computer"]]}
    archive = tmp_path / "other-engine.json"
    archive.write_text(json.dumps(other))
    noted = run_cli(env, "verify", str(archive))
    assert noted.exit_code == 0 and "a difference may come from the engines" in noted.stdout
    archive = tmp_path / "g.json"
    archive.write_text(json.dumps(data))
    from_file = run_cli(env, "verify", str(archive))
    assert from_file.exit_code == 0 and line in from_file.stdout

    # Another level named for seat 1: the deals still verify, the computer's moves not.
    tampered = copy.deepcopy(data)
    tampered["computer"][0]["level"] = "medium"
    archive.write_text(json.dumps(tampered))
    wrong = run_cli(env, "verify", str(archive))
    assert wrong.exit_code == 1, wrong.output
    assert "deals verified" in wrong.stdout and "the computer played only" not in wrong.stdout
    assert "the computer's move differs from its own cards: action " in wrong.stderr
    assert "from its own cards the computer at seat 1 (medium) makes '" in wrong.stderr
    assert "Traceback" not in wrong.output

    # A malformed computer list cannot be checked: exit 1.
    archive.write_text(json.dumps({**data, "computer": [{"seat": 7, "level": "hard"}]}))
    bad = run_cli(env, "verify", str(archive))
    assert bad.exit_code == 1
    assert "the computer's moves cannot be checked: no seat 7 in a 3-player game" in bad.stderr

    # An archive without a computer list: pbem-deal/3 requires one (deleting it would
    # take a human's cut out of the check and switch the audit off).
    archive.write_text(json.dumps({k: v for k, v in data.items() if k != "computer"}))
    plain = run_cli(env, "verify", str(archive))
    assert plain.exit_code == 1 and "'computer' is a required property" in plain.stderr

    # The computer seats relabelled as people: they made no cut, so the deals fail.
    archive.write_text(json.dumps({**data, "computer": []}))
    hidden = run_cli(env, "verify", str(archive))
    assert hidden.exit_code == 1
    assert "mismatch in check entropy: the entropy is not one cut per human seat" in hidden.stderr


def test_verify_in_a_process_of_its_own_re_derives_the_same_moves(
    against_computer: tuple[int, dict[str, Any]], tmp_path: Path
) -> None:
    """The real command in a fresh process (no memo of the service's search warm): the
    hard computer's moves depend on the view alone, not on what a process computed."""
    _, data = against_computer
    archive = tmp_path / "g.json"
    archive.write_text(json.dumps(data))
    done = subprocess.run(
        [*PBEM, "verify", str(archive)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**fresh_env(), "PBEM_DATA_DIR": str(tmp_path)},
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    decisions = audit_archive(data).decisions
    lines = done.stdout.splitlines()
    assert lines[-3] == (
        f"the computer played only from its own cards ({decisions} decisions re-derived)"
    )
    # The last line: who sat where, the computer's seats marked.
    assert lines[-1] == "players: seat 0 Alice; seat 1 Computer (the computer, hard); " + (
        "seat 2 Computer (the computer, easy)"
    )


def test_verify_checks_the_computer_when_the_deals_are_not_verifiable(
    harness: Harness, tmp_path: Path
) -> None:
    """A game dealt from an admin's seed: the deals are not verifiable (exit 3) but the
    computer's moves still are; a changed one makes it exit 1."""
    env = cli_env(harness.tmp_path, harness.settings.database_url, fair_deals="true")
    game_id = harness.service.new_game(
        [ALICE, (f"computer@{harness.settings.domain}", "Computer")],
        target=61,
        seed="admin-chosen",
        computer=[1],
        level="medium",
    )
    harness.step()
    play_out(harness, game_id, moves=8)  # a hand or so: enough computer moves to check
    result = run_cli(env, "verify", "--game", str(game_id))
    assert result.exit_code == NOT_VERIFIABLE_EXIT, result.output
    assert "not verifiable" in result.stderr
    assert "the computer played only from its own cards (" in result.stdout
    tampered, number, other = changed_at(harness.service.export(game_id), "play")
    archive = tmp_path / "g.json"
    archive.write_text(json.dumps(tampered))
    changed = run_cli(env, "verify", str(archive))
    assert changed.exit_code == 1, changed.output
    assert f"action {number} (hand 1)" in changed.stderr
    assert f"the archive has '{other}'" in changed.stderr


def attachment(msg: EmailMessage, name: str) -> str | None:
    for part in msg.walk():
        if part.get_filename() == name:
            payload = part.get_payload(decode=True)
            assert isinstance(payload, bytes)
            return payload.decode("utf-8")
    return None


def test_the_replay_page_shows_the_servers_check(
    harness: Harness, against_computer: tuple[int, dict[str, Any]]
) -> None:
    game_id, data = against_computer
    decisions = audit_archive(data).decisions
    line = f"the computer played only from its own cards ({decisions} decisions re-derived)"
    pages = [attachment(m, f"cribbage-{game_id}.html") for m in harness.received(ALICE[0])]
    [mailed] = [page for page in pages if page is not None]  # the game-over mail's
    for html in (mailed, replay_page(data).html):
        assert 'id="computer-check" data-state="verified"' in html
        assert line in html
        assert f"Checked by the server ({ENGINE}) when this page was made" in html
    tampered = copy.deepcopy(data)
    tampered["computer"][1]["level"] = "hard"
    html = replay_page(tampered).html
    assert 'id="computer-check" data-state="mismatch"' in html
    assert "the computer&#39;s move differs from its own cards" in html
    unreadable = replay_page({**data, "computer": "all of them"}).html
    assert "the computer&#39;s moves could not be checked: " in unreadable
    # No computer seat, or a game still running: no line (a difference names cards).
    assert 'id="computer-check"' not in replay_page({**data, "computer": []}).html
    running = copy.deepcopy(data)
    running["actions"] = running["actions"][:20]
    running.pop("state_hash")
    assert 'id="computer-check"' not in replay_page(running, seat=0).html


@pytest.fixture
def browser() -> Iterator[Any]:
    yield from launch()


@pytest.mark.browser
def test_the_page_in_a_browser_shows_the_servers_check_beside_its_own(
    browser: Any, against_computer: tuple[int, dict[str, Any]], tmp_path: Path
) -> None:
    """In Chromium: the server's line is shown as rendered, under the page's own check of
    the deals, which the page's script still makes."""
    _, data = against_computer
    path = tmp_path / "page.html"
    path.write_text(replay_page(data).html, encoding="utf-8")
    context, page = open_page(browser, path)
    try:
        assert page.errors == []
        assert page.get_attribute("#verify", "data-state") == "verified"
        assert page.is_visible("#computer-check")
        text = page.inner_text("#computer-check")
        assert text.startswith("the computer played only from its own cards (")
        assert "Checked by the server" in text and "pbem verify" in text
    finally:
        context.close()
