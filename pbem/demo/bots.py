"""Built-in simple players that play by email, exactly as a person would.

A ``MailboxPlayer`` reads its own Maildir, takes the newest game email, reads
the machine-readable part every game email carries (``view.json``: that
player's own view, nothing more), chooses a move with the computer strategy,
and answers with a reply that quotes the email it answers, the way a mail
client does.  The reply goes to the email's Reply-To address through a
delivery function (into the service's inbox Maildir, or over SMTP).
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import email.utils
import json
import mailbox
import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path
from typing import Any

from engine import Accept, Action, Claim, Discard, Go, Muggins, Play, PlayerView, Resign
from engine.computer import decide


def command_for(action: Action) -> str:
    """The email command that asks for ``action``, in ASCII card forms."""
    match action:
        case Discard(_, cards):
            return "discard " + " ".join(c.ascii for c in cards)
        case Play(_, card):
            return f"play {card.ascii}"
        case Go():
            return "go"
        case Claim(_, points):
            return f"count {points}"
        case Muggins():
            return "muggins"
        case Accept():
            return "accept"
        case Resign():
            return "resign confirm"  # a decided resignation: no question back
    raise TypeError(f"not an action: {action!r}")


def view_of(msg: email.message.Message) -> PlayerView | None:
    """The ``view.json`` part of a game email, or None."""
    for part in msg.walk():
        if part.get_filename() == "view.json" or part.get_content_type() == "application/json":
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                try:
                    return PlayerView.from_json(json.loads(payload.decode("utf-8")))
                except (ValueError, KeyError, TypeError):
                    return None
    return None


def cut_request(msg: email.message.Message) -> bool:
    """Whether ``msg`` asks its reader to cut for the deal (a fair game not dealt yet:
    its JSON part says ``{"cut": true, ...}``)."""
    for part in msg.walk():
        if part.get_filename() == "view.json" or part.get_content_type() == "application/json":
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                try:
                    data = json.loads(payload.decode("utf-8"))
                except ValueError:
                    return False
                return isinstance(data, dict) and data.get("cut") is True
    return False


CUT_WORDS = ("red", "blue", "lucky", "quiet", "seven", "cats", "pegs", "crib", "nobs", "fifteen")


def text_of(msg: email.message.Message) -> str:
    for part in msg.walk():
        if part.get_content_type() == "text/plain" and not part.get_filename():
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                return payload.decode(part.get_content_charset() or "utf-8", "replace")
    return ""


def unfold(value: object) -> str:
    """A header value as read with its folds (RFC 5322 §2.2.3: a line break before white
    space) taken out, as a mail client shows it and copies it into a reply."""
    return re.sub(r"\r?\n(?=[ \t])", "", str(value or "")).strip()


def quoted_reply(
    original: email.message.Message, sender: str, sender_name: str, body: str, now: datetime
) -> bytes:
    """A reply as a mail client writes it: Re: subject, threading headers, quoted history."""
    reply = EmailMessage(policy=email.policy.SMTP)
    reply["From"] = f"{sender_name} <{sender}>"
    reply["To"] = unfold(original.get("Reply-To") or original.get("From") or "")
    subject = unfold(original.get("Subject", ""))
    reply["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
    reply["Date"] = format_datetime(now)
    reply["Message-ID"] = make_msgid(domain=sender.split("@", 1)[-1])
    original_id = unfold(original.get("Message-ID", ""))
    if original_id:
        reply["In-Reply-To"] = original_id
        refs = str(original.get("References", "")).split()
        reply["References"] = " ".join([*refs, original_id])
    when = unfold(original.get("Date", "a moment ago"))
    who = unfold(original.get("From", "Cribbage"))
    quoted = "\n".join("> " + line if line else ">" for line in text_of(original).splitlines())
    reply.set_content(f"{body}\n\nOn {when}, {who} wrote:\n{quoted}\n")
    return reply.as_bytes()


def _ids(value: object) -> list[str]:
    return [part for part in str(value or "").split() if part.startswith("<")]


def thread_order(messages: list[email.message.Message]) -> list[email.message.Message]:
    """``messages`` with every reply after the messages it answers (In-Reply-To and
    References), otherwise in the order given.

    File times in a Maildir are too coarse to order mail delivered in one burst, and a
    mail server may deliver two mails sent a moment apart in the other order, but a
    thread says which message came later, as a mail client's thread view shows it. A
    reply need not name every message before it (game mails name the thread and the
    previous mail only), so a message's place is its depth in the thread: one more than
    the deepest message among ``messages`` that it answers.
    """
    by_id = {str(m.get("Message-ID", "")).strip(): m for m in messages}
    by_id.pop("", None)

    def parents(msg: email.message.Message) -> list[email.message.Message]:
        refs = set(_ids(msg.get("In-Reply-To"))) | set(_ids(msg.get("References")))
        return [by_id[ref] for ref in refs if ref in by_id and by_id[ref] is not msg]

    depths: dict[int, int] = {}
    for start in messages:
        stack: list[email.message.Message] = [start]
        on_path: set[int] = set()
        while stack:  # depth-first without recursion; a loop of references is cut
            msg = stack[-1]
            if id(msg) in depths:
                stack.pop()
                continue
            waiting = [p for p in parents(msg) if id(p) not in depths and id(p) not in on_path]
            if waiting and id(msg) not in on_path:
                on_path.add(id(msg))
                stack.extend(waiting)
                continue
            known = [depths[id(p)] for p in parents(msg) if id(p) in depths]
            depths[id(msg)] = 1 + max(known, default=-1)
            on_path.discard(id(msg))
            stack.pop()
    return sorted(messages, key=lambda msg: depths[id(msg)])


def maildir_fetch(folder: Path) -> Callable[[], list[email.message.Message]]:
    """New messages of a Maildir folder, oldest first; each is then marked read.

    Only ``new/`` is read: mail already read stays untouched in ``cur/``, so a long game
    does not make every fetch slower.
    """

    def fetch() -> list[email.message.Message]:
        new_dir, cur_dir = folder / "new", folder / "cur"
        if not new_dir.is_dir():
            return []
        cur_dir.mkdir(exist_ok=True)
        found: list[tuple[float, str, email.message.Message]] = []
        with os.scandir(new_dir) as entries:
            for entry in entries:
                if entry.name.startswith(".") or not entry.is_file():
                    continue
                key = entry.name.split(":", 1)[0]
                try:
                    when = entry.stat().st_mtime
                    raw = Path(entry.path).read_bytes()
                    os.rename(entry.path, cur_dir / f"{key}:2,S")
                except FileNotFoundError:
                    continue  # read by another reader meanwhile
                parsed = email.message_from_bytes(raw, policy=email.policy.default)
                found.append((when, key, parsed))
        found.sort(key=lambda item: (item[0], item[1]))
        return [m for _, _, m in found]

    return fetch


class ImapFetch:
    """New (unseen) messages of an IMAP folder, oldest first; each is then marked seen.

    One connection, reopened after a failure; the way a mail client polls.
    """

    def __init__(
        self, host: str, port: int, user: str, password: str, folder: str = "INBOX"
    ) -> None:
        self.host, self.port, self.user, self.password = host, port, user, password
        self.folder = folder
        self._client: Any = None

    def _connect(self) -> Any:
        from imapclient import IMAPClient

        client = IMAPClient(self.host, port=self.port, ssl=False, timeout=30)
        client.login(self.user, self.password)
        client.select_folder(self.folder)
        return client

    def __call__(self) -> list[email.message.Message]:
        for attempt in range(2):
            try:
                if self._client is None:
                    self._client = self._connect()
                client = self._client
                client.noop()
                uids = sorted(client.search(["UNSEEN"]))
                if not uids:
                    return []
                data = client.fetch(uids, ["BODY.PEEK[]"])
                client.add_flags(uids, [b"\\Seen"])
                return [
                    email.message_from_bytes(data[uid][b"BODY[]"], policy=email.policy.default)
                    for uid in uids
                    if uid in data
                ]
            except Exception:
                self.close()
                if attempt:
                    raise
        return []

    def close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.logout()
            self._client = None


def smtp_delivery(host: str, port: int, sender: str) -> Callable[[bytes], None]:
    """Send replies over SMTP the way a mail client does (envelope from the player)."""
    import smtplib

    def deliver(raw: bytes) -> None:
        msg = email.message_from_bytes(raw, policy=email.policy.default)
        to = [addr for _, addr in email.utils.getaddresses([str(msg.get("To", ""))])]
        with smtplib.SMTP(host, port, timeout=30) as smtp:
            smtp.sendmail(sender, to, raw)

    return deliver


def maildir_delivery(inbox: Path) -> Callable[[bytes], None]:
    """Deliver raw mail into a Maildir folder (as an MDA would)."""
    box = mailbox.Maildir(str(inbox), create=True)

    def deliver(raw: bytes) -> None:
        box.add(mailbox.MaildirMessage(raw))

    return deliver


@dataclass
class MailboxPlayer:
    """A computer player behind an email address."""

    address: str
    name: str
    fetch: Callable[[], list[email.message.Message]]
    deliver: Callable[[bytes], None]
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    level: str = "good"
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    seen: list[email.message.Message] = field(default_factory=list)
    replies: int = 0

    def read_new(self) -> list[email.message.Message]:
        """New messages in the mailbox, oldest first; they are then marked read."""
        new = self.fetch()
        self.seen.extend(new)
        return new

    def play(self) -> list[email.message.Message]:
        """Read new mail and answer the newest one that asks this player to move."""
        new = self.read_new()
        for msg in reversed(thread_order(new)):
            view = view_of(msg)
            if view is None:
                if cut_request(msg):
                    words = " ".join(self.rng.choice(CUT_WORDS) for _ in range(3))
                    said = f"cut {self.rng.randint(1, 999)} {words}"
                    self.deliver(quoted_reply(msg, self.address, self.name, said, self.clock()))
                    self.replies += 1
                    break
                continue
            if view.my_turn and view.legal and view.outcome is None:
                action = decide(view, self.rng, self.level)
                raw = quoted_reply(msg, self.address, self.name, command_for(action), self.clock())
                self.deliver(raw)
                self.replies += 1
            break
        return new
