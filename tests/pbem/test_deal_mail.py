"""``pbem verify --mail``: a game's archive checked against the player's own saved mail
(`engine.mailcheck`) — .eml files, an mbox or a Maildir folder. Forgeries made as a
cheating server would, by playing the game again through the engine from another key:
each verifies from the archive alone, and the player's mail catches it."""

from __future__ import annotations

import copy
import json
import mailbox
import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from engine import Game, Settings, to_archive
from engine.archive import replay_archive
from engine.dealcheck import verify_archive
from engine.dealkey import key_v3
from engine.fairness import commitment, deal_records, text_hash
from tests.deal_corpus import _play
from tests.e2e.helpers import ALICE, BOB, CAROL, Harness, cli_env, run_cli

STANDALONE = Path(__file__).resolve().parents[2] / "docs" / "pbem_deal_verify.py"


@pytest.fixture
def fair(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(tmp_path, db_url, db_engine, fair_deals=True)
    yield harness
    harness.close()


def replayed(
    archive: dict[str, Any], server_seed: str, entropy: list[dict[str, Any]]
) -> dict[str, Any]:
    """``archive`` dealt again from ``server_seed`` and ``entropy`` (the key re-derived,
    the game played again by the engine, its records and hashes made anew): consistent
    in itself, as a forger would make it."""
    forged = copy.deepcopy(archive)
    proof = forged["deal_proof"]
    pairs = [(e["seat"], e["sha256"]) for e in entropy]
    key = key_v3(server_seed, proof["game"], forged["settings"]["players"], pairs)
    game = Game(Settings.from_json(forged["settings"]), key)
    _play(game, random.Random(1), {}, None)
    again = to_archive(game)
    forged.update(seed=key, actions=again["actions"], state_hash=again["state_hash"])
    records = deal_records(replay_archive(forged))
    proof.update(
        server_seed=server_seed,
        commitment=commitment(server_seed),
        entropy=entropy,
        draws=records["draws"],
        deals=records["deals"],
        result={"scores": list(game.outcome.scores), "winner": game.outcome.winner}
        if game.outcome
        else None,
    )
    accepted = {e["seat"]: e for e in entropy}
    proof["cuts"] = [
        {**c, "text": accepted[c["seat"]]["text"], "sha256": accepted[c["seat"]]["sha256"]}
        if c["accepted"] and c["seat"] in accepted
        else c
        for c in proof["cuts"]
    ]
    assert verify_archive(forged).ok, verify_archive(forged).message
    return forged


def save_mail(h: Harness, who: str, folder: Path) -> dict[str, Path]:
    """``who``'s mail saved three ways: .eml files, an mbox, a Maildir."""
    got = h.received(who)
    emls = folder / "eml"
    emls.mkdir(parents=True)
    for number, msg in enumerate(got):
        (emls / f"{number:03}.eml").write_bytes(msg.as_bytes())
    box = mailbox.mbox(str(folder / "mail.mbox"))
    maildir = mailbox.Maildir(str(folder / "Maildir"))
    for msg in got:
        box.add(msg)
        maildir.add(msg)
    box.flush()
    return {"eml": emls, "mbox": folder / "mail.mbox", "maildir": folder / "Maildir"}


def verify(env: dict[str, str | None], archive: dict[str, Any], mail: Path, tmp: Path) -> Any:
    """``pbem verify --mail``; the standalone verifier's ``--mail`` must agree (its exit
    status, and the check that failed)."""
    path = tmp / "archive.json"
    path.write_text(json.dumps(archive), encoding="utf-8")
    result = run_cli(env, "verify", str(path), "--mail", str(mail))
    done = subprocess.run(
        [sys.executable, "-I", str(STANDALONE), str(path), "--mail", str(mail)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == result.exit_code, (result.output, done.stdout + done.stderr)
    assert "Traceback" not in done.stderr
    if result.exit_code == 0:
        assert "checked: the player's mail: commitment" in done.stdout
    elif "check mail" in result.stderr:
        assert "check mail" in done.stderr
    return result


@dataclass(frozen=True)
class MailCorpus:
    """A fair game played by mail, Alice's saved mail of it (three ways), and archives
    forged as a cheating server would make them; each verifies from the archive alone."""

    archive: dict[str, Any]
    saved: dict[str, Path]
    swapped: dict[str, Any]
    """The server seed swapped after the cuts: a new S and C, the same cuts."""
    moved: dict[str, Any]
    """Alice's cut replaced by one replayed from another game (Carol's)."""
    other: dict[str, Any]
    """The archive of that other game: none of Alice's mail is of it."""


def mail_corpus(h: Harness, folder: Path) -> MailCorpus:
    """Play the game, save Alice's mail under ``folder``, forge the archives."""
    other = h.service.new_game([CAROL, BOB], target=61)  # a game whose cut is replayed
    game_id = h.service.new_game([ALICE, BOB], target=61)
    h.step()
    h.answer(CAROL[0], "cut carol's words")
    h.answer(ALICE[0], "cut 9 swans")
    h.answer(BOB[0], "cut")
    h.play_until(game_id, lambda g: g.is_over)
    h.step()
    archive = h.service.export(game_id)
    proof = archive["deal_proof"]
    carol = h.service.export(other)["deal_proof"]["entropy"][0]
    assert text_hash(carol["text"]) == carol["sha256"]
    moved = [dict(carol, seat=0), *proof["entropy"][1:]]
    return MailCorpus(
        archive,
        save_mail(h, ALICE[0], folder / "alice"),
        replayed(archive, "5e" * 32, proof["entropy"]),
        replayed(archive, proof["server_seed"], moved),
        h.service.export(other),
    )


def test_the_players_mail_catches_what_the_archive_alone_cannot(
    fair: Harness, tmp_path: Path
) -> None:
    corpus = mail_corpus(fair, tmp_path)
    archive, saved = corpus.archive, corpus.saved
    env = cli_env(tmp_path / "cli", fair.settings.db_url)
    for kind, where in saved.items():
        result = verify(env, archive, where, tmp_path)
        assert result.exit_code == 0, (kind, result.output)
        said = " ".join(result.stdout.split())
        assert "checked: the player's mail: commitment (" in said, said
        assert "receipt (1 mail)" in said and "cut hashes (" in said and "seats" in said
    # 1. The server seed swapped after the cuts: a new S and C, the same cuts.
    result = verify(env, corpus.swapped, saved["mbox"], tmp_path)
    assert result.exit_code == 1 and "check mail" in result.stderr
    assert "the server seed was changed after it was shown" in " ".join(result.stderr.split())
    # 2. Alice's cut replaced by one replayed from another game (Carol's, game `other`).
    result = verify(env, corpus.moved, saved["maildir"], tmp_path)
    said = " ".join(result.stderr.split())
    assert result.exit_code == 1 and "receipt quotes" in said and "Alice's cut" in said
    # 3. Mail of another game only: nothing to check against, said so.
    result = verify(env, corpus.other, saved["eml"], tmp_path)
    assert result.exit_code == 1 and "no saved mail is of game" in result.stderr
    # A path that is no mail at all: a clean error.
    result = verify(env, archive, tmp_path / "nowhere", tmp_path)
    assert result.exit_code == 1 and "cannot read the mail" in result.stderr
