"""``pbem verify --mail`` and the standalone verifier's ``--mail``: the link through the
player's own sent answer (``docs/pbem-deal-3.md`` section 11). In a challenge the mail
that asks for the invitee's cut is the invitation, without a game number; the answer
(``accept``) is the cut, and the archive's cut text holds its Message-ID. With that
answer saved (the Sent folder) beside the invitation, the invitation's commitment is
checked against the archive's: a server that swapped its seed after the accepts is
caught even when no mail of the game itself was saved. On both databases."""

from __future__ import annotations

import json
import mailbox
import re
import subprocess
import sys
from collections.abc import Iterator
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from engine.mailcheck import LINKED, Mail, check_mail
from pbem.cli.fair import read_mails
from tests.e2e.helpers import ALICE, Harness, cli_env, reply
from tests.e2e.test_lobby import ask_sure, invite_to
from tests.pbem.test_deal_mail import STANDALONE, replayed, verify

A, B = ALICE[0], "bob@example.org"


@pytest.fixture
def fair(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    harness = Harness.build(
        tmp_path, db_url, db_engine, fair_deals=True, max_unproven_answers_per_day=20
    )
    harness.new_game()  # Alice is a player of the service: she may challenge
    yield harness
    harness.close()


def save(folder: Path, mails: list[EmailMessage]) -> Path:
    """``mails`` as an mbox at ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    box = mailbox.mbox(str(folder / "saved.mbox"))
    for msg in mails:
        box.add(msg)
    box.flush()
    return folder / "saved.mbox"


def standalone(archive: dict[str, Any], mail: Path, tmp: Path) -> str:
    """What the standalone verifier's ``--mail`` says (stdout and stderr, one line)."""
    path = tmp / "standalone.json"
    path.write_text(json.dumps(archive), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-I", str(STANDALONE), str(path), "--mail", str(mail)],
        capture_output=True,
        text=True,
        check=False,
    )
    return " ".join((done.stdout + done.stderr).split())


def challenge(h: Harness, tmp: Path) -> tuple[dict[str, Any], EmailMessage, EmailMessage]:
    """Alice challenges Bob, Bob accepts by a reply (his cut), the game is played out:
    its archive, Bob's invitation and his sent accept."""
    ask_sure(h, A, f"challenge {B} to 61")
    (invitation,) = invite_to(h, B)
    raw = reply(invitation, B, "Bob", "accept 7 swans")
    h.deliver(raw)
    game_id = h.last_inbound().game_id
    assert game_id is not None, h.last_inbound().reason
    h.play_until(game_id, lambda g: g.is_over)
    h.step()
    answer = message_from_bytes(raw, policy=policy.default)
    assert isinstance(answer, EmailMessage)
    archive = h.service.export(game_id)
    texts = [e["text"] for e in archive["deal_proof"]["entropy"]]
    assert any(t.startswith(str(answer["Message-ID"]).strip()) for t in texts), texts
    return archive, invitation, answer


def test_the_invitation_answered_with_the_cut_is_checked(fair: Harness, tmp_path: Path) -> None:
    h = fair
    archive, invitation, answer = challenge(h, tmp_path)
    assert re.search(r"\[Cribbage \d+\]", str(invitation["Subject"])) is None  # no game
    swapped = replayed(archive, "5e" * 32, archive["deal_proof"]["entropy"])
    env = cli_env(tmp_path / "cli", h.settings.db_url)
    # The invitation and Bob's answer alone: the game's mails are not needed.
    alone = save(tmp_path / "alone", [invitation, answer])
    result = verify(env, archive, alone, tmp_path)
    assert result.exit_code == 0, result.output
    assert f"{LINKED} (1 mail)" in " ".join(result.stdout.split())
    assert f"checked: the player's mail: {LINKED} (1 mail)" in standalone(archive, alone, tmp_path)
    result = verify(env, swapped, alone, tmp_path)
    said = " ".join(result.stderr.split())
    assert result.exit_code == 1 and "check mail" in said, result.output
    caught = (
        "the invitation you answered with your cut showed commitment "
        f"{archive['deal_proof']['commitment']}, the archive's is "
        f"{swapped['deal_proof']['commitment']}: the server seed was changed after it was shown"
    )
    assert caught in said and caught in standalone(swapped, alone, tmp_path)
    # With every mail Bob got and his Sent folder: the link is one check among the rest.
    everything = save(tmp_path / "all", [*h.received(B), answer])
    result = verify(env, archive, everything, tmp_path)
    said = " ".join(result.stdout.split())
    assert result.exit_code == 0 and f"{LINKED} (1 mail)" in said, result.output
    assert "receipt (" in said and "cut hashes (" in said
    result = verify(env, swapped, everything, tmp_path)
    said = " ".join(result.stderr.split())
    assert result.exit_code == 1 and "the invitation you answered with your cut" in said
    # Without the sent answer the invitation is not linked: nothing of the game is saved.
    result = verify(env, swapped, save(tmp_path / "nosent", [invitation]), tmp_path)
    assert result.exit_code == 1 and "no saved mail is of game" in result.stderr
    assert "the invitation you answered" not in " ".join(result.stderr.split())


def test_the_link_needs_the_answer_to_be_a_recorded_cut(fair: Harness, tmp_path: Path) -> None:
    """An answer whose Message-ID is in no cut text, or one whose In-Reply-To names no
    saved mail, links nothing; a (subject, text) pair still reads as a mail."""
    archive, invitation, answer = challenge(fair, tmp_path)
    proof = archive["deal_proof"]
    mails = read_mails(save(tmp_path / "saved", [invitation, answer]))
    assert [m.message_id for m in mails][1] == str(answer["Message-ID"])
    assert mails[1].in_reply_to == str(invitation["Message-ID"])
    forged = dict(archive, deal_proof=dict(proof, commitment="ab" * 32))
    assert not check_mail(forged, mails).ok
    stranger = Mail(mails[1].subject, mails[1].text, "<other@example.org>", mails[1].in_reply_to)
    orphan = Mail(mails[1].subject, mails[1].text, mails[1].message_id, "<gone@example.org>")
    for answered in (stranger, orphan):
        seen = check_mail(forged, [mails[0], answered])
        assert seen.problems == [f"no saved mail is of game {proof['game']}"]
    seen = check_mail(archive, [(m.subject, m.text) for m in mails])
    assert not any(c.startswith(LINKED) for c in seen.checked)
