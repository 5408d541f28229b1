"""The admin command line, run in-process with typer's CliRunner, on both databases.

Every user mistake must print one clear line on stderr and exit 1, never a traceback.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlmodel import Session, col, select

from engine import action_from_json, action_to_json
from pbem.store import models as m
from tests.e2e.helpers import (
    ALICE,
    BOB,
    CliResult,
    Harness,
    cli_env,
    hidden_from,
    reply,
    run_cli,
)

A, B = ALICE[0], BOB[0]


def one_line_error(result: CliResult, *phrases: str) -> str:
    """Exit 1, one line on stderr naming ``phrases``, no traceback anywhere."""
    assert result.exit_code == 1, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for phrase in phrases:
        assert phrase in lines[0], (phrase, lines[0])
    return lines[0]


def ok(result: CliResult) -> str:
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return result.stdout


@pytest.fixture
def env(harness: Harness, db_url: str) -> dict[str, str | None]:
    """The command line on the harness's (migrated) database."""
    return cli_env(harness.tmp_path, db_url)


# -- before and at init ---------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("game", "list"),
        ("game", "new", A, B),
        ("inbox", "list"),
        ("outbox", "list"),
        ("players",),
        ("serve", "--once"),
    ],
)
def test_commands_before_init_say_run_pbem_init(
    tmp_path: Path, db_url: str, args: tuple[str, ...]
) -> None:
    line = one_line_error(run_cli(cli_env(tmp_path, db_url), *args), "pbem init")
    assert line.count("pbem init") == 1


def test_init_creates_the_schema_and_is_idempotent(tmp_path: Path, db_url: str) -> None:
    env = cli_env(tmp_path, db_url)
    assert "database ready at" in ok(run_cli(env, "init"))
    assert "database ready at" in ok(run_cli(env, "init"))
    assert "games" in ok(run_cli(env, "game", "list"))


# -- games ----------------------------------------------------------------------------


def test_game_new_list_show_and_show_as(harness: Harness, env: dict[str, str | None]) -> None:
    h = harness
    out = ok(run_cli(env, "game", "new", f"Alice={A}", B, "--to", "61", "--seed", "cli-1"))
    assert "game 1 started" in out
    assert [r.recipient for r in h.outbox()] == [A, B]

    listed = ok(run_cli(env, "game", "list"))
    # Bob chose no name: he is shown by his player number, never by his address.
    assert re.search(r"1\s*│\s*active\s*│\s*Alice, Player 2\s*│\s*61\s*│\s*0", listed), listed
    assert "Alice" not in ok(run_cli(env, "game", "list", "--status", "finished"))

    shown = ok(run_cli(env, "game", "show", "1"))
    assert A in shown and B in shown and "waiting for Alice, Player 2" in shown
    assert "seed cli-1" in shown

    game = h.game(1)
    for who in (A, "Alice", "0", "ALICE@EXAMPLE.COM"):
        mail = ok(run_cli(env, "game", "show", "1", "--as", who))
        assert mail.startswith("Subject: [Cribbage 1]")
        for card in game.holding(0):
            assert str(card) in mail
        assert not {str(c) for c in hidden_from(game, 0)} & set(re.findall(r"\S+[♣♦♥♠]", mail))
    one_line_error(run_cli(env, "game", "show", "1", "--as", "carol"), "no player 'carol'")
    one_line_error(run_cli(env, "game", "show", "7"), "no game 7")


@pytest.mark.parametrize(
    ("args", "phrase"),
    [
        (("not-an-address", B), "'not-an-address' is not an email address"),
        (("alice@", B), "is not an email address"),
        ((A, "ALICE@Example.com"), "a player cannot sit twice"),
        ((A, B, "c@x.org", "d@x.org", "e@x.org"), "for 2, 3 or 4 players, not 5"),
        ((A,), "for 2, 3 or 4 players, not 1"),
        ((A, B, "--to", "100"), "a game is to 61 or 121, not 100"),
        ((A, B, "--players", "3"), "--players 3 but 2 players were named"),
        ((A, B, "--skunk", "maybe"), "skunk"),
        (("üser@idn.test", B), "'üser@idn.test': only plain ASCII addresses can be mailed"),
        ((A, "Zoë=zoë@exämple.com"), "only plain ASCII addresses can be mailed"),
    ],
)
def test_game_new_refuses_bad_requests_in_one_line(
    harness: Harness, env: dict[str, str | None], args: tuple[str, ...], phrase: str
) -> None:
    one_line_error(run_cli(env, "game", "new", *args), phrase)
    assert harness.outbox() == []
    with Session(harness.db) as session:
        assert session.exec(select(m.Game)).all() == []


def test_resend_pause_resume_abort(harness: Harness, env: dict[str, str | None]) -> None:
    h = harness
    game = h.new_game(seed="cli-2")
    assert "2 emails queued" in ok(run_cli(env, "game", "resend", str(game)))
    assert [r.kind for r in h.outbox()][-2:] == ["status", "status"]
    h.clock.catch_up()
    h.step()
    assert h.count(A) == 2

    assert "is now paused" in ok(run_cli(env, "game", "pause", str(game)))
    one_line_error(run_cli(env, "game", "pause", str(game)), "is paused; cannot make it paused")
    assert "paused" in ok(run_cli(env, "game", "list"))
    assert "is now active" in ok(run_cli(env, "game", "resume", str(game)))
    one_line_error(run_cli(env, "game", "resume", str(game)), "is active; cannot make it active")
    assert "is now aborted" in ok(run_cli(env, "game", "abort", str(game)))
    one_line_error(run_cli(env, "game", "resume", str(game)), "is aborted")
    one_line_error(run_cli(env, "game", "abort", str(game)), "is aborted")
    one_line_error(run_cli(env, "game", "pause", "42"), "no game 42")
    assert h.game_row(game).status == "aborted"


# -- replay, export, import -----------------------------------------------------------


def play_some(h: Harness, moves: int) -> int:
    game = h.new_game(seed="cli-3")
    h.play_until(game, lambda g: len(g.actions) >= moves)
    return game


def test_replay_verify_and_a_tampered_log(
    harness: Harness, env: dict[str, str | None], db_engine: Engine
) -> None:
    h = harness
    game = play_some(h, 6)
    steps = len(h.log(game))
    out = ok(run_cli(env, "game", "replay", str(game), "--verify"))
    assert f"verified: {steps} steps replay exactly" in out
    as_alice = ok(run_cli(env, "game", "replay", str(game), "--as", "alice"))
    assert "Alice" in as_alice

    # A legal but different last move: the replay ends somewhere else.
    last_seq, _, last, _ = h.log(game)[-1]
    state = h.game(game)
    before = type(state)(state.settings, state.seed)
    for _, _, data, _ in h.log(game)[:-1]:
        before.apply(action_from_json(data))
    seat = action_from_json(last).seat
    others = [a for a in before.legal_actions(seat) if action_to_json(a) != last]
    assert others, "the last move had no alternative"
    tamper(db_engine, game, last_seq, action_to_json(others[0]))
    one_line_error(
        run_cli(env, "game", "replay", str(game), "--verify"), "does not match the stored state"
    )

    # An impossible move: the replay stops there.
    first = h.log(game)[0][2]
    impossible = dict(first, cards=["KS", "KS"]) if "cards" in first else dict(first, type="go")
    tamper(db_engine, game, 0, impossible)
    one_line_error(run_cli(env, "game", "replay", str(game), "--verify"), "step 0:", "replay")


def tamper(db: Engine, game: int, seq: int, action: dict[str, object]) -> None:
    with db.begin() as connection:
        connection.execute(
            text("UPDATE action_log SET action = :a WHERE game_id = :g AND seq = :s"),
            {"a": json.dumps(action, sort_keys=True, separators=(",", ":")), "g": game, "s": seq},
        )


def test_export_import_and_bad_archives(
    harness: Harness, env: dict[str, str | None], tmp_path: Path
) -> None:
    h = harness
    game = play_some(h, 4)
    archive = tmp_path / "g.json"
    assert f"game {game} written to" in ok(
        run_cli(env, "game", "export", str(game), "-o", str(archive))
    )
    data = json.loads(archive.read_text(encoding="utf-8"))
    to_stdout = ok(run_cli(env, "game", "export", str(game)))
    assert json.loads(to_stdout) == data
    # The game is stored already: importing it is refused, naming it, unless --again.
    one_line_error(
        run_cli(env, "game", "import", str(archive)), f"is game {game}, stored already", "--again"
    )
    imported = ok(run_cli(env, "game", "import", str(archive), "--again"))
    copy = int(re.findall(r"imported as game (\d+)", imported)[0])
    one_line_error(run_cli(env, "game", "import", str(archive)), f"is game {game},")
    ok(run_cli(env, "game", "replay", str(copy), "--verify"))
    assert h.game(copy).state_hash() == h.game(game).state_hash()
    assert h.count(A) == len(h.received(A))  # importing mails nobody

    def write(name: str, content: str) -> str:
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        return str(path)

    tampered = json.loads(json.dumps(data))
    tampered["actions"][1]["cards"] = ["KS", "QS"]
    no_players = {k: v for k, v in data.items() if k != "players"}
    bad_player = dict(data, players=[{"name": "x"}, {"email": B}])
    same_player = dict(data, players=[{"email": A}, {"email": A.upper()}])
    cases = [
        (write("corrupt.json", '{"format": "pbem-cribb'), "is not a JSON archive"),
        (write("list.json", "[1, 2, 3]"), "is not a JSON archive"),
        (write("other.json", '{"hello": "world"}'), "does not replay"),
        (write("tampered.json", json.dumps(tampered)), "does not replay"),
        (write("no-players.json", json.dumps(no_players)), "one player per seat"),
        (write("bad-player.json", json.dumps(bad_player)), "no valid email address"),
        (write("same-player.json", json.dumps(same_player)), "two seats"),
        (str(tmp_path / "missing.json"), "does not exist"),
    ]
    games_before = len(ok(run_cli(env, "game", "list")).splitlines())
    for path, phrase in cases:
        one_line_error(run_cli(env, "game", "import", path), phrase)
    assert len(ok(run_cli(env, "game", "list")).splitlines()) == games_before
    one_line_error(run_cli(env, "game", "export", "99"), "no game 99")


# -- mail -----------------------------------------------------------------------------


def test_ingest_a_file(harness: Harness, env: dict[str, str | None], tmp_path: Path) -> None:
    h = harness
    game = h.new_game(seed="cli-4")
    cards = sorted(h.game(game).holding(0))[:2]
    eml = tmp_path / "reply.eml"
    eml.write_bytes(reply(h.latest(A), A, "Alice", "discard " + " ".join(c.ascii for c in cards)))
    out = ok(run_cli(env, "ingest", str(eml)))
    assert re.search(r"inbound 1: applied — applied: discard", out), out
    assert len(h.log(game)) == 1
    assert "already received as inbound 1" in ok(run_cli(env, "ingest", str(eml)))
    assert len(h.log(game)) == 1

    empty = tmp_path / "empty.eml"
    empty.write_bytes(b"  \r\n")
    one_line_error(run_cli(env, "ingest", str(empty)), "is empty")
    one_line_error(run_cli(env, "ingest", str(tmp_path / "nope.eml")), "cannot read")
    one_line_error(run_cli(env, "ingest", str(tmp_path)), "cannot read")


def test_text_from_mail_is_printed_as_it_is(
    harness: Harness, env: dict[str, str | None], tmp_path: Path
) -> None:
    """Brackets in a mail (or a name) are not console markup: no crash, nothing lost."""
    h = harness
    ok(run_cli(env, "game", "new", f"[red]Ann[/]={A}", B, "--to", "61"))
    assert "[red]Ann[/]" in ok(run_cli(env, "game", "list"))
    h.clock.catch_up()
    h.step()
    eml = tmp_path / "brackets.eml"
    eml.write_bytes(reply(h.latest(A), A, "Ann", "play zz\nsee [/bold] and [link=x]"))
    out = ok(run_cli(env, "ingest", str(eml)))
    assert "[/bold]" in out
    listed = ok(run_cli(env, "inbox", "list"))
    assert "rejected" in listed
    one_line_error(run_cli(env, "ingest", str(tmp_path / "a[/]b.eml")), "a[/]b.eml")


def test_inbox_outbox_and_players_lists(harness: Harness, env: dict[str, str | None]) -> None:
    h = harness
    h.new_game(seed="cli-5")
    h.deliver(reply(h.latest(A), "mallory@evil.example", "M", "go"))
    h.deliver(reply(h.latest(A), A, "Alice", "hello"))
    inbox = ok(run_cli(env, "inbox", "list"))
    assert "ignored" in inbox and "rejected" in inbox and "no command found" in inbox
    assert "mallory@evil.example" in inbox
    # The rule of intake's chain that ended each mail: Mallory's reply to Alice's seat
    # ended at "seat", Alice's own at her game.
    assert "rule" in inbox and "seat" in inbox
    assert "rejected" not in ok(run_cli(env, "inbox", "list", "--status", "ignored"))
    outbox = ok(run_cli(env, "outbox", "list"))
    assert outbox.count("sent") >= 3 and A in outbox
    assert ok(run_cli(env, "outbox", "list", "--limit", "1")).count(A) <= 1
    players = ok(run_cli(env, "players"))
    assert "Alice" in players and B in players and "mallory" not in players
    assert "turns" in players and "all" not in players.replace("mallory", "")


def test_players_mail_choice_set_by_the_admin(harness: Harness, env: dict[str, str | None]) -> None:
    h = harness
    h.new_game(seed="cli-mail")
    listed = ok(run_cli(env, "players", "--mail-all", A.upper()))
    player = h.player(A)
    assert player is not None and player.mail_all
    assert re.search(r"alice@example\.com\s*│\s*active\s*│\s*all", listed), listed
    ok(run_cli(env, "players", "--mail-turns", A))
    player = h.player(A)
    assert player is not None and not player.mail_all
    unknown = run_cli(env, "players", "--mail-all", "nobody@example.com")
    assert unknown.exit_code == 1 and "no player 'nobody@example.com'" in unknown.output
    player = h.player(A)
    assert player is not None and not player.mail_all  # nothing changed


def test_serve_once_processes_the_inbox_and_sends(
    harness: Harness, env: dict[str, str | None]
) -> None:
    h = harness
    game = h.service.new_game([ALICE, BOB], target=61, seed="cli-6")
    ok(run_cli(env, "serve", "--once"))  # sends the first mails
    assert h.count(A) == 1 and h.count(B) == 1
    cards = sorted(h.game(game).holding(0))[:2]
    h.send(reply(h.latest(A), A, "Alice", "discard " + " ".join(c.ascii for c in cards)))
    ok(run_cli(env, "serve", "--once"))
    assert h.last_inbound().status == "applied"
    # Bob was asked to discard already, and Alice's own move is no news to her.
    assert h.count(A) == 1 and h.count(B) == 1
    h.send(
        reply(
            h.latest(B),
            B,
            "Bob",
            "discard " + " ".join(c.ascii for c in sorted(h.game(game).holding(1))[:2]),
        )
    )
    ok(run_cli(env, "serve", "--once"))
    assert h.count(A) == 2 and h.count(B) == 2  # the starter is cut: news for both
    assert {r.status for r in h.outbox()} == {"sent"}


# -- configuration --------------------------------------------------------------------


def test_config_masks_secrets(tmp_path: Path) -> None:
    env = cli_env(
        tmp_path,
        "postgresql+psycopg://pbem:db-s3cret@127.0.0.1:5432/pbem",
        inbound_url="imap://player%40x.org:imap-s3cret@mail.example.com:993/INBOX?tls=implicit",
        outbound_url="smtp://relay:smtp-s3cret@smtp.example.com:587?tls=starttls",
    )
    out = ok(run_cli(env, "config"))
    assert "s3cret" not in out
    assert out.count("***") == 3
    assert "mail.example.com" in out and "smtp.example.com" in out


@pytest.mark.parametrize(
    ("content", "phrase"),
    [
        ('domain = "x.org"\nbogus = 1\n', "bogus"),
        ("domain = \n", "is not valid TOML"),
        ("reminder_hours = -5\n", "reminder_hours"),
        ('[pbem]\ntimeout_action = "explode"\n', "timeout_action"),
        ("poll_seconds = 'soon'\n", "poll_seconds"),
        (b"\xff\xfe\x00garbage", "is not valid TOML"),
    ],
)
def test_a_bad_config_file_is_one_line(tmp_path: Path, content: str | bytes, phrase: str) -> None:
    path = tmp_path / "pbem.toml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    env = cli_env(tmp_path)
    for args in (("config",), ("game", "list")):
        one_line_error(run_cli(env, "--config", str(path), *args), phrase, str(path))


def test_a_missing_config_file_and_a_bad_environment_value(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    one_line_error(run_cli(env, "--config", str(tmp_path / "no.toml"), "config"), "does not exist")
    bad = cli_env(tmp_path, reminder_hours="often")
    one_line_error(run_cli(bad, "config"), "reminder_hours")


def test_the_action_log_is_append_only_in_the_listing(
    harness: Harness, env: dict[str, str | None]
) -> None:
    """The moves a game lists are its logged actions, in order, with who made them."""
    h = harness
    game = play_some(h, 5)
    out = ok(run_cli(env, "game", "replay", str(game)))
    with Session(h.db) as session:
        seqs = [
            r.seq
            for r in session.exec(
                select(m.ActionLog)
                .where(m.ActionLog.game_id == game)
                .order_by(col(m.ActionLog.seq))
            )
        ]
    assert [int(n) for n in re.findall(r"^#(\d+) ", out, re.M)] == seqs
