"""README's "Play by hand on the embedded default", step by step with the real CLI in a
fresh folder and no settings: a game against the computer, the cut request in the
player's Maildir, a reply file handed in with ``pbem ingest``, the next mail holding the
cards, and a discard the same way."""

from __future__ import annotations

import email
import email.policy
import os
import subprocess
from email.message import EmailMessage
from email.utils import parseaddr
from pathlib import Path

from pbem.demo.bots import view_of

ME = "me@example.org"


def pbem(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    done = subprocess.run(
        ["pbem", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def mails(cwd: Path) -> list[EmailMessage]:
    folder = cwd / "pbem-data" / "outbox" / ME / "new"
    found = []
    for path in sorted(folder.iterdir(), key=lambda p: p.stat().st_mtime_ns):
        msg = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        assert isinstance(msg, EmailMessage)
        found.append(msg)
    return found


def reply(cwd: Path, to: EmailMessage, command: str) -> None:
    address = parseaddr(str(to["Reply-To"]))[1]
    text = f"From: {ME}\nTo: {address}\nSubject: Re: {to['Subject']}\n\n{command}\n"
    (cwd / "reply.eml").write_text(text, encoding="utf-8")
    assert "applied" in pbem(cwd, "ingest", "reply.eml")
    pbem(cwd, "serve", "--once")


def test_the_readme_walkthrough(tmp_path: Path) -> None:
    pbem(tmp_path, "init")
    pbem(tmp_path, "game", "new", f"Me={ME}", "--computer", "--to", "61")
    pbem(tmp_path, "serve", "--once")
    (first,) = mails(tmp_path)
    assert str(first["Subject"]) == "[Cribbage 1] Me v Computer"
    assert "Please cut for the deal" in first.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    assert parseaddr(str(first["Reply-To"]))[1].endswith("@pbem.localhost")
    reply(tmp_path, first, "cut")
    dealt = mails(tmp_path)[-1]
    view = view_of(dealt)
    assert view is not None and len(view.holding) == 6
    reply(tmp_path, dealt, "discard " + " ".join(c.ascii for c in view.holding[:2]))
    after = view_of(mails(tmp_path)[-1])
    assert after is not None and len(after.holding) == 4
