"""``pbem player forget``: no trace of the player's address, names or cut Message-IDs
left in any table or in the database's files, the games still replaying and their deals
verifying fully (``pbem-deal/2`` derives the key from the cuts' SHA-256) in all three
verifiers, the other player's receipt still checking, the player's later mail a
stranger's, a suppression kept under a hash; and every way it refuses."""

from __future__ import annotations

import email
import email.policy
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlmodel import Session, col
from sqlmodel import select as select_rows

from engine.dealcheck import verify_archive
from engine.fairness import PROTOCOL, text_hash
from pbem.render.replay import replay_page
from pbem.service.policy import forgotten_key, is_suppressed, lift, suppress
from pbem.store import models as m
from pbem.store.copy import tables
from tests.e2e.helpers import ALICE, BOB, DAVE, Harness, cli_env, reply, run_cli
from tests.pbem.ops_helpers import Installation, clone
from tests.pbem.replay.browser import launch, open_page

STANDALONE = Path(__file__).resolve().parents[2] / "docs" / "pbem_deal_verify.py"

CUT_ID = "alice-cut@example.com"  # the Message-ID of Alice's cut mail


@pytest.fixture
def installation(ops_installation: Installation, tmp_path: Path) -> Iterator[Installation]:
    made = clone(ops_installation, tmp_path)
    yield made
    made.harness.close()
    made.harness.db.dispose()


def env_for(harness: Harness) -> dict[str, str | None]:
    return cli_env(harness.tmp_path / "cli", harness.settings.db_url)


def readable(value: Any) -> str:
    """A stored value as text a person could read: a raw mail with every part decoded."""
    if isinstance(value, bytes):
        parts = [value.decode("latin-1")]
        msg = email.message_from_bytes(value, policy=email.policy.default)
        for part in msg.walk():
            parts += [f"{k}: {v}" for k, v in part.items()]
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                parts.append(payload.decode("utf-8", "replace"))
        return "\n".join(parts)
    return json.dumps(value, default=str, ensure_ascii=False)


def traces_left(harness: Harness, patterns: list[re.Pattern[str]]) -> list[str]:
    """Where any of ``patterns`` is found: in each row of each table, and in the bytes of
    every file of the database (the SQLite file, its write-ahead log)."""
    found: list[str] = []
    with harness.db.connect() as conn:
        for table in tables():
            [key] = table.primary_key.columns
            for row in conn.execute(select(table)):
                for column, value in row._mapping.items():
                    text = readable(value)
                    found += [
                        f"{table.name}.{column} ({key.name} {row._mapping[key.name]}): {p.pattern}"
                        for p in patterns
                        if p.search(text)
                    ]
    database = Path(harness.settings.db_url.removeprefix("sqlite:///"))
    for path in database.parent.glob(database.name + "*"):
        data = path.read_bytes().decode("latin-1")
        found += [f"file {path.name}: {p.pattern}" for p in patterns if p.search(data)]
    return found


ALICE_TRACES = [
    re.compile(re.escape(ALICE[0]), re.IGNORECASE),
    re.compile(r"(?<!\w)Alice(?!\w)"),
    re.compile(re.escape(CUT_ID)),
]


def test_forgetting_a_player_leaves_no_trace_and_every_game_checks_out(
    installation: Installation,
) -> None:
    harness = installation.harness
    env = env_for(harness)
    assert traces_left(harness, ALICE_TRACES)  # the search finds what is there
    before = harness.service.export(installation.finished)
    assert any(e.get("text", "").startswith(f"<{CUT_ID}>") for e in before["deal_proof"]["entropy"])

    # Alice still plays: her games must be aborted first.
    result = run_cli(env, "player", "forget", ALICE[0], "--yes")
    assert result.exit_code == 1
    waiting = f"{installation.cutting}, {installation.active}"
    assert f"alice@example.com plays in games not over yet ({waiting})" in result.stderr
    assert "--abort-games" in result.stderr

    result = run_cli(env, "player", "forget", "Alice <ALICE@Example.com>", "--abort-games", "--yes")
    assert result.exit_code == 0, result.output
    player_id = 1
    pseudonym = f"forgotten-{player_id}@forgotten.invalid"
    assert f"game {installation.cutting} aborted: a player asked to be forgotten" in result.stdout
    assert f"game {installation.active} aborted" in result.stdout
    assert f"is now {pseudonym} (Forgotten player {player_id}); 4 of its games: " in result.stdout
    assert re.search(r"3 replayed, 1 with \d+ deals verified\n", result.stdout)
    assert "forgotten at its player's request" not in result.stdout  # the key derives
    assert re.search(r"\ninbound +\d+ rows rewritten\n", result.stdout)
    assert re.search(r"\noutbox +\d+ rows rewritten\n", result.stdout)

    # No trace of her address, name or cut in any table or file of the database.
    assert traces_left(harness, ALICE_TRACES) == []
    assert traces_left(harness, [re.compile(re.escape(pseudonym))])  # she is there, renamed

    # Her games replay; the finished one's deals verify, her cut kept as its SHA-256.
    audit = harness.service.audit()
    assert audit.ok and audit.games == 5 and audit.replayed == 4, audit.problems
    after = harness.service.export(installation.finished)
    assert after["players"][0] == {"email": pseudonym, "name": f"Forgotten player {player_id}"}
    assert after["deal_proof"]["protocol"] == PROTOCOL
    assert after["deal_proof"]["entropy"][1] == before["deal_proof"]["entropy"][1]  # Bob's
    alice_text = before["deal_proof"]["entropy"][0]["text"]
    bob_text = before["deal_proof"]["entropy"][1]["text"]
    kept = after["deal_proof"]["entropy"][0]
    assert kept == {"seat": 0, "sha256": text_hash(alice_text)}
    # Her cut mail: listed still, by its hash and a pseudonym Message-ID.
    cuts = [c for c in after["deal_proof"]["cuts"] if c["seat"] == 0]
    assert cuts and all("text" not in c for c in cuts)
    assert cuts[-1]["sha256"] == kept["sha256"] and cuts[-1]["accepted"] is True
    assert cuts[-1]["message_id"].endswith("@forgotten.invalid>")
    verdict = verify_archive(after)
    assert verdict.ok and verdict.deals == verify_archive(before).deals
    assert verdict.notes == []  # verified fully: nothing "cannot be derived"
    result = run_cli(env, "verify", "--game", str(installation.finished))
    assert result.exit_code == 0, result.output
    assert "deals verified" in result.stdout and "note:" not in result.stdout
    # The receipts still check: Bob's text, and Alice's (she kept hers) against its hash.
    for seat, text in ((1, bob_text), (0, alice_text)):
        args = ["--seat", str(seat), "--cut", text]
        result = run_cli(env, "verify", "--game", str(installation.finished), *args)
        assert result.exit_code == 0, result.output
        assert f"seat {seat}'s cut as recorded is the text of the receipt" in result.stdout
    args = ["--seat", "0", "--cut", "x"]
    result = run_cli(env, "verify", "--game", str(installation.finished), *args)
    assert result.exit_code == 1 and "check cut" in result.stderr
    # The standalone verifier and the replay page: the same full verdict.
    archive = harness.tmp_path / "forgotten.json"
    archive.write_text(json.dumps(after), encoding="utf-8")
    for args in ([], ["--seat", "1", "--cut", bob_text]):
        done = subprocess.run(
            [sys.executable, "-I", str(STANDALONE), str(archive), *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert f"all {verdict.deals} deals verified" in done.stdout
        assert "forgotten" not in done.stdout + done.stderr
    # Imported elsewhere, the archive keeps the hash alone, and verifies in full again.
    imported = run_cli(env, "game", "import", str(archive), "--again")
    assert imported.exit_code == 0, imported.output
    copy = imported.stdout.split("imported as game ")[1].split()[0]
    result = run_cli(env, "verify", "--game", copy)
    assert result.exit_code == 0 and "deals verified" in result.stdout, result.output
    assert "note:" not in result.stdout
    assert harness.service.export(int(copy))["deal_proof"]["entropy"][0] == kept
    page = harness.tmp_path / "forgotten.html"
    page.write_text(replay_page(after).html, encoding="utf-8")
    for browser in launch():
        context, tab = open_page(browser, page)
        try:
            assert tab.errors == []
            text = tab.inner_text("#verify")
            assert tab.get_attribute("#verify", "data-state") == "verified", text
            assert "the seed comes from it and the players' cuts" in text
        finally:
            context.close()
    # The published site (pages and archives) is made from the database: no trace either.
    site = harness.tmp_path / "site"
    result = run_cli(env, "site", str(site))
    assert result.exit_code == 0, result.output
    files = [path for path in site.rglob("*") if path.is_file()]
    assert any(path.suffix == ".json" for path in files)
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")
        assert not [p.pattern for p in ALICE_TRACES if p.search(text)], path
    # The standings name her by her pseudonym only.
    result = run_cli(env, "standings")
    assert "Alice" not in result.stdout and ALICE[0] not in result.stdout
    assert "Forgotten player 1" in result.stdout
    # The stored table is the one a recomputation gives, under the pseudonym.
    result = run_cli(env, "standings", "--check")
    assert result.exit_code == 0, result.output

    # Her later mail is a stranger's: her old reply address leads nowhere.
    mails = harness.count(ALICE[0])
    old = harness.received(ALICE[0])[-1]
    harness.deliver(reply(old, ALICE[0], ALICE[1], "play 5h"))
    assert harness.last_inbound().status == "ignored"
    assert harness.count(ALICE[0]) == mails  # no answer
    with Session(harness.db) as session:
        player = session.get(m.Player, player_id)
        assert player is not None and player.email == pseudonym
        pending = session.exec(
            select_rows(m.Outbox).where(
                col(m.Outbox.recipient) == pseudonym, col(m.Outbox.status) == "pending"
            )
        ).all()
        assert not pending  # nothing will ever go to the pseudonym


def test_a_suppression_outlives_the_address(installation: Installation) -> None:
    harness = installation.harness
    now = datetime(2024, 3, 2, tzinfo=UTC)
    ctx = harness.service._ctx()
    with Session(harness.db) as session:
        suppress(ctx, session, DAVE[0], "never", now, days=None)
        session.commit()
    result = run_cli(env_for(harness), "player", "forget", DAVE[0], "--abort-games", "--yes")
    assert result.exit_code == 0, result.output
    assert "its suppression is kept, under a one-way hash of the mailbox" in result.stdout
    dave = [re.compile(re.escape(DAVE[0]), re.IGNORECASE), re.compile(r"(?<!\w)Dave(?!\w)")]
    assert traces_left(harness, dave) == []
    with Session(harness.db) as session:
        key = forgotten_key(DAVE[0])
        row = session.exec(select_rows(m.Consent).where(col(m.Consent.mailbox) == key)).one()
        assert row.suppressed == "never"
        assert is_suppressed(session, DAVE[0], now)
        assert is_suppressed(session, "Dave+cribbage@example.com", now)
        assert not is_suppressed(session, BOB[0], now)
        # "start" still lifts it.
        assert lift(ctx, session, DAVE[0])
        assert not is_suppressed(session, DAVE[0], now)


def test_forget_refuses_what_it_cannot_do(installation: Installation) -> None:
    env = env_for(installation.harness)
    result = run_cli(env, "player", "forget", "nobody@example.com", "--yes")
    assert result.exit_code == 1 and "knows nothing of nobody@example.com" in result.stderr
    result = run_cli(env, "player", "forget", "not an address", "--yes")
    assert result.exit_code == 1 and "is not a player's address" in result.stderr
    result = run_cli(env, "player", "forget", "forgotten-1@forgotten.invalid", "--yes")
    assert result.exit_code == 1 and "is not a player's address" in result.stderr
    result = run_cli(env, "player", "forget", BOB[0], input="n\n")
    assert result.exit_code == 1 and "nothing forgotten" in result.stderr
    assert installation.harness.player(BOB[0]) is not None


def test_a_forgotten_cut_mail_is_stored_and_compacted_on_both_backends(db_engine: Any) -> None:
    """``cut_mail`` takes a row with no text and its hash (the migration's schema), and
    `compact` rewrites every table it names on SQLite and PostgreSQL alike."""
    from pbem.service.forget import COMPACTED, compact

    digest = text_hash("<a@example.com> 5")
    now = datetime(2026, 11, 27, tzinfo=UTC)
    with Session(db_engine) as session:
        game = m.Game(
            settings={"players": 2},
            seed="s",
            status="finished",
            created_at=now,
            updated_at=now,
            last_move_at=now,
        )
        session.add(game)
        session.flush()
        assert game.id is not None
        session.add(
            m.CutMail(
                game_id=game.id,
                seat=0,
                message_id="<forgotten-1-0@forgotten.invalid>",
                received_at=now,
                text=None,
                sha256=digest,
                accepted=True,
            )
        )
        session.commit()
    assert "cut_mail" in COMPACTED
    compact(db_engine)
    with Session(db_engine) as session:
        row = session.exec(select_rows(m.CutMail)).one()
        assert row.text is None and row.sha256 == digest
