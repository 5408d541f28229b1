"""A harness for whole-service tests: real Maildirs in and out, a real database, the daemon.

``Harness`` wires a :class:`~pbem.config.Settings` (data in ``tmp_path``, domain
``pbem.test``, reminders and timeouts off) to ``build_daemon``. Players "send" mail by
dropping raw messages into the inbox Maildir; ``step()`` runs one daemon step; what each
player received is read back from its outbox Maildir (``ROOT/<address>/``), oldest first.

Replies are written the way real mail clients write them (``reply(..., style=...)``):
Gmail, Outlook, Apple Mail, Thunderbird, a phone, HTML only, quoted-printable, base64,
ISO-8859-1, top- and bottom-posted. ``hidden_from`` tells which cards a seat may not know,
so a test can look for them in what that seat received.
"""

from __future__ import annotations

import base64
import email
import email.policy
import html
import mailbox
import os
import quopri
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage, Message
from email.utils import format_datetime, make_msgid, parseaddr
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from engine import Action, Card, Event, Game, PlayerView, computer, parse_card
from engine import Settings as GameSettings
from pbem.config import Settings
from pbem.demo.bots import command_for, text_of, view_of
from pbem.run.daemon import Daemon, StepStats
from pbem.run.runtime import build_daemon
from pbem.service import Service
from pbem.store import models as m
from pbem.transport.maildir import recipient_folder_name

DOMAIN = "pbem.test"
SERVICE_ADDRESS = f"cribbage@{DOMAIN}"
START = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)

ALICE = ("alice@example.com", "Alice")
BOB = ("bob@example.org", "Bob")
CAROL = ("carol@example.net", "Carol")
DAVE = ("dave@example.com", "Dave")
PEOPLE = (ALICE, BOB, CAROL, DAVE)
STRANGER = "mallory@evil.example"


class Clock:
    """A test clock: starts at ``START`` and moves 1 ms per reading (so times are distinct);
    ``advance`` jumps ahead."""

    def __init__(self, start: datetime = START) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta

    def catch_up(self) -> None:
        """Jump to the real time (after the command line, which runs on it, changed rows)."""
        self.now = max(self.now, datetime.now(UTC)) + timedelta(seconds=1)


def make_settings(tmp_path: Path, db_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": tmp_path,
        "database_url": db_url,
        "domain": DOMAIN,
        "reminder_hours": 0,
        "timeout_days": 0,
        "poll_seconds": 0.01,
        "outbox_backoff_seconds": 30,
    }
    values.update(overrides)
    return Settings(**values)


def parse(raw: bytes) -> EmailMessage:
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    return msg


_GAME_TAG = re.compile(r"\[Cribbage \d+\]")


def about(msg: Message) -> str:
    """What a mail is about, as its Subject said before every mail of a game had the
    game's one Subject: a game mail's tag and the state line its text starts with
    ("[Cribbage 3] Hand 1 — your turn: discard"); any other mail's Subject."""
    subject = str(msg["Subject"])
    tag = _GAME_TAG.match(subject)
    if tag is None or not isinstance(msg, EmailMessage):
        return subject
    part = msg.get_body(preferencelist=("plain",))
    if part is None:
        return subject
    first = str(part.get_content()).strip().splitlines()[0]
    return f"{tag.group(0)} {first}"


def read_maildir(folder: Path) -> list[tuple[str, bytes]]:
    """``(file name, bytes)`` of every message of a Maildir folder (new and cur)."""
    found: list[tuple[str, bytes]] = []
    for sub in ("new", "cur"):
        where = folder / sub
        if where.is_dir():
            for entry in sorted(where.iterdir()):
                found.append((entry.name, entry.read_bytes()))
    return found


@dataclass
class Harness:
    """The service over real Maildirs and a real database, driven one step at a time."""

    tmp_path: Path
    db: Engine
    settings: Settings
    clock: Clock
    daemon: Daemon
    # Each delivered mail parsed once, by its file (path, size, mtime): the tests read a
    # player's newest mail before every reply, and parsing the whole folder each time made
    # a game's worth of replies quadratic.
    parsed: dict[tuple[str, int, int], tuple[EmailMessage, str]] = field(
        default_factory=dict, repr=False
    )

    @classmethod
    def build(cls, tmp_path: Path, db_url: str, db: Engine, **overrides: Any) -> Harness:
        settings = make_settings(tmp_path, db_url, **overrides)
        clock = Clock()
        daemon = build_daemon(settings, db, clock=clock)
        return cls(tmp_path, db, settings, clock, daemon)

    # -- wiring -------------------------------------------------------------------------

    @property
    def service(self) -> Service:
        return self.daemon.service

    @property
    def inbox_dir(self) -> Path:
        return Path(self.settings.inbound.removeprefix("maildir:").split("?", 1)[0])

    @property
    def outbox_dir(self) -> Path:
        return Path(self.settings.outbound.removeprefix("maildir:").split("?", 1)[0])

    def close(self) -> None:
        """Let go of the daemon's connections (its inbox reader lock on PostgreSQL) and
        of its wake-up descriptors."""
        self.daemon._drop_reader()
        self.daemon.wakeup.close()

    def restart(self, **service_changes: Any) -> None:
        """A new daemon on the same database and folders (as after a crash)."""
        self.close()
        self.daemon = build_daemon(self.settings, self.db, clock=self.clock)
        for name, value in service_changes.items():
            setattr(self.daemon.service, name, value)

    # -- games --------------------------------------------------------------------------

    def new_game(
        self,
        people: Sequence[tuple[str, str]] = (ALICE, BOB),
        *,
        target: int = 61,
        seed: str = "e2e",
        muggins: bool = False,
        deliver: bool = True,
    ) -> int:
        game_id = self.service.new_game(list(people), target=target, seed=seed, muggins=muggins)
        if deliver:
            self.step()
        return game_id

    def game(self, game_id: int) -> Game:
        with Session(self.db) as session:
            row = session.get(m.Game, game_id)
            assert row is not None
            return self.service.load_game(session, row)

    def game_row(self, game_id: int) -> m.Game:
        with Session(self.db) as session:
            row = session.get(m.Game, game_id)
            assert row is not None
            session.expunge(row)
            return row

    def log(self, game_id: int) -> list[tuple[int, int | None, dict[str, Any], bool]]:
        """The action log: (seq, seat, action, auto)."""
        with Session(self.db) as session:
            rows = session.exec(
                select(m.ActionLog)
                .where(m.ActionLog.game_id == game_id)
                .order_by(col(m.ActionLog.seq))
            ).all()
            return [(r.seq, r.seat, dict(r.action), r.auto) for r in rows]

    def inbound(self) -> list[m.Inbound]:
        with Session(self.db) as session:
            rows = list(session.exec(select(m.Inbound).order_by(col(m.Inbound.id))).all())
            for row in rows:
                session.expunge(row)
            return rows

    def last_inbound(self) -> m.Inbound:
        """The newest stored mail (read alone: the history may be long)."""
        with Session(self.db) as session:
            newest = select(m.Inbound).order_by(col(m.Inbound.id).desc()).limit(1)
            row = session.exec(newest).first()
            assert row is not None, "nothing was received"
            session.expunge(row)
            return row

    def outbox(self) -> list[m.Outbox]:
        with Session(self.db) as session:
            rows = list(session.exec(select(m.Outbox).order_by(col(m.Outbox.id))).all())
            for row in rows:
                session.expunge(row)
            return rows

    def player(self, address: str) -> m.Player | None:
        with Session(self.db) as session:
            row = session.exec(select(m.Player).where(m.Player.email == address)).first()
            if row is not None:
                session.expunge(row)
            return row

    def mail_all(self, address: str, every: bool = True) -> None:
        """Set a player's choice of a mail after every move (as "mail all" would)."""
        with Session(self.db) as session:
            row = session.exec(select(m.Player).where(m.Player.email == address)).one()
            row.mail_all = every
            session.add(row)
            session.commit()

    def token(self, game_id: int, seat: int) -> str:
        with Session(self.db) as session:
            row = session.exec(
                select(m.Seat).where(m.Seat.game_id == game_id, m.Seat.seat == seat)
            ).one()
            return row.token

    # -- mail in ------------------------------------------------------------------------

    def send(self, raw: bytes) -> None:
        """Deliver ``raw`` into the service's inbox Maildir, as an MDA would."""
        box = mailbox.Maildir(str(self.inbox_dir), create=True)
        box.add(mailbox.MaildirMessage(raw))

    def step(self) -> StepStats:
        return self.daemon.step()

    def deliver(self, raw: bytes) -> StepStats:
        """Send ``raw`` and run one daemon step."""
        self.send(raw)
        return self.step()

    # -- mail out -----------------------------------------------------------------------

    def mail_files(self, address: str) -> list[tuple[str, bytes]]:
        return read_maildir(self.outbox_dir / recipient_folder_name(address))

    def received(self, address: str) -> list[EmailMessage]:
        """Every message delivered to ``address``, in the order the service queued them.

        The same file gives the same message object on every call: change a copy. (The
        order is read for these messages alone: the history may be long.)"""
        folder = self.outbox_dir / recipient_folder_name(address)
        files: list[tuple[EmailMessage, str]] = []
        for sub in ("new", "cur"):
            where = folder / sub
            if not where.is_dir():
                continue
            for entry in sorted(where.iterdir()):
                stat = entry.stat()
                key = (str(entry), stat.st_size, stat.st_mtime_ns)
                known = self.parsed.get(key)
                if known is None:
                    msg = parse(entry.read_bytes())
                    known = self.parsed[key] = (msg, str(msg["Message-ID"]))
                files.append(known)
        wanted = sorted({message_id for _, message_id in files})
        order: dict[str, int] = {}
        with Session(self.db) as session:
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                queued = session.exec(
                    select(m.Outbox.message_id, m.Outbox.id).where(
                        col(m.Outbox.message_id).in_(part)
                    )
                ).all()
                order.update((message_id, row_id or 0) for message_id, row_id in queued)
        found = [(order.get(message_id, 1 << 60), msg) for msg, message_id in files]
        found.sort(key=lambda pair: pair[0])
        return [msg for _, msg in found]

    def count(self, address: str) -> int:
        """How many messages were delivered to ``address`` (the files, none of them read)."""
        folder = self.outbox_dir / recipient_folder_name(address)
        return sum(
            sum(1 for _ in (folder / sub).iterdir())
            for sub in ("new", "cur")
            if (folder / sub).is_dir()
        )

    def latest(self, address: str) -> EmailMessage:
        mails = self.received(address)
        assert mails, f"{address} received nothing"
        return mails[-1]

    def new_mail(self, address: str, before: int) -> list[EmailMessage]:
        return self.received(address)[before:]

    def view(self, address: str) -> PlayerView:
        """The view in the newest mail to ``address`` that carries one."""
        for msg in reversed(self.received(address)):
            view = view_of(msg)
            if view is not None:
                return view
        raise AssertionError(f"no mail to {address} carries a view")

    def counts(self, addresses: Iterable[str]) -> dict[str, int]:
        return {address: self.count(address) for address in addresses}

    # -- playing by mail ----------------------------------------------------------------

    def answer(self, address: str, body: str, *, style: str = "gmail", **options: Any) -> StepStats:
        """``address`` replies ``body`` to its newest mail; one daemon step."""
        name = next((n for a, n in PEOPLE if a == address), address.split("@")[0].title())
        raw = reply(self.latest(address), address, name, body, style=style, **options)
        return self.deliver(raw)

    def confirm(self, address: str, answer: str = "yes") -> m.Inbound:
        """``address`` answers the newest "Did you send this?" request it got (one click:
        a reply to its token); one daemon step. The answer's inbound row."""
        with Session(self.db) as session:
            row = session.exec(
                select(m.Outbox)
                .where(m.Outbox.recipient == address, m.Outbox.kind == "confirm")
                .order_by(col(m.Outbox.id).desc())
            ).first()
            assert row is not None, f"no confirmation request went to {address}"
            request = parse(row.raw)
        name = next((n for a, n in PEOPLE if a == address), address.split("@")[0].title())
        self.deliver(reply(request, address, name, answer))
        return self.last_inbound()

    def move(self, game_id: int, action: Action, *, style: str = "gmail") -> StepStats:
        """The player of ``action.seat`` asks for it by mail."""
        return self.answer(self.address_of(game_id, action.seat), command_for(action), style=style)

    def address_of(self, game_id: int, seat: int) -> str:
        with Session(self.db) as session:
            seat_row = session.exec(
                select(m.Seat).where(m.Seat.game_id == game_id, m.Seat.seat == seat)
            ).one()
            player = session.get(m.Player, seat_row.player_id)
            assert player is not None
            return player.email

    def play_until(
        self, game_id: int, done: Callable[[Game], bool], *, level: str = "random"
    ) -> Game:
        """Move by mail (computer choices, sent as replies) until ``done(game)``.

        The choices are those of :func:`simulate` with the same level, so a seed found
        with :func:`find_seed` reaches the same position.
        """
        rng = random.Random(7)
        for _ in range(MAX_MOVES):
            game = self.game(game_id)
            if done(game):
                return game
            assert not game.is_over, "the game ended before the wanted position"
            seat = game.to_act()[0]
            self.move(game_id, computer.choose_action(game, seat, rng, level))
            assert self.last_inbound().status == "applied", self.last_inbound().reason
        raise AssertionError("the wanted position never came")


MAX_MOVES = 400


def simulate(game: Game, done: Callable[[Game], bool], level: str = "random") -> bool:
    """Play ``game`` as ``Harness.play_until`` would (forced moves applied as the service
    does); whether ``done`` is reached."""
    rng = random.Random(7)
    for _ in range(MAX_MOVES):
        while not game.is_over and (forced := game.forced_action()) is not None:
            game.apply(forced)
        if done(game):
            return True
        if game.is_over:
            return False
        seat = game.to_act()[0]
        game.apply(computer.choose_action(game, seat, rng, level))
    return False


def find_seed(
    prefix: str,
    done: Callable[[Game], bool],
    *,
    players: int = 2,
    target: int = 61,
    muggins: bool = False,
    level: str = "random",
) -> str:
    """The first seed ``prefix-N`` whose game reaches ``done`` when played by ``play_until``."""
    for n in range(500):
        seed = f"{prefix}-{n}"
        settings = GameSettings(players=players, target=target, muggins=muggins)
        if simulate(Game(settings, seed), done, level):
            return seed
    raise AssertionError(f"no seed {prefix}-N reaches the position")


# -- writing replies like mail clients do -------------------------------------------------

STYLES = (
    "gmail",
    "gmail_html_only",
    "outlook",
    "outlook_block",
    "apple",
    "thunderbird",
    "iphone",
    "bottom",
    "base64",
    "latin1",
)


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.splitlines())


def _attribution_name(original: Message) -> tuple[str, str]:
    name, address = parseaddr(str(original.get("From", "")))
    return name or "Cribbage", address


def reply(
    original: Message,
    sender: str,
    sender_name: str,
    body: str,
    *,
    style: str = "gmail",
    to: str | None = None,
    threading: bool = True,
    subject: str | None = None,
    message_id: str | None = None,
    date: datetime | None = None,
) -> bytes:
    """A reply to ``original`` from ``sender`` saying ``body``, as the mail client
    ``style`` writes it (see ``STYLES``).

    ``to`` replaces the address replied to (by default the Reply-To, else the From);
    ``threading=False`` drops In-Reply-To and References.
    """
    when = date or datetime(2024, 3, 2, 9, 30, tzinfo=UTC)
    orig_text = text_of(original)
    orig_subject = str(original.get("Subject", ""))
    orig_date = str(original.get("Date", ""))
    their_name, their_address = _attribution_name(original)
    target = to or str(original.get("Reply-To") or original.get("From") or "")

    headers: list[tuple[str, str]] = [
        ("From", f"{sender_name} <{sender}>"),
        ("To", target),
        ("Subject", subject if subject is not None else _re(orig_subject, style)),
        ("Date", format_datetime(when)),
        ("Message-ID", message_id or make_msgid(domain=sender.split("@", 1)[-1])),
    ]
    original_id = str(original.get("Message-ID", "")).strip()
    if threading and original_id:
        refs = str(original.get("References", "")).split()
        headers.append(("In-Reply-To", original_id))
        headers.append(("References", " ".join([*refs, original_id])))
    headers.append(("MIME-Version", "1.0"))

    if style == "gmail":
        attribution = f"On {orig_date} {their_name} <{their_address}> wrote:"
        text = f"{body}\n\n{attribution}\n\n{_quote(orig_text)}\n"
        html_part = (
            f'<div dir="ltr">{html.escape(body)}</div><br><div class="gmail_quote">'
            f'<div dir="ltr" class="gmail_attr">{html.escape(attribution)}<br></div>'
            f'<blockquote class="gmail_quote">{html.escape(orig_text)}</blockquote></div>'
        )
        return _alternative(headers, text, html_part, "quoted-printable")
    if style == "gmail_html_only":
        attribution = f"On {orig_date} {their_name} &lt;{their_address}&gt; wrote:"
        markup = (
            f'<div dir="ltr"><div>{html.escape(body)}</div><div><br></div></div><br>'
            f'<div class="gmail_quote"><div dir="ltr" class="gmail_attr">{attribution}<br>'
            f'</div><blockquote class="gmail_quote"><p>{html.escape(orig_text)}</p>'
            "</blockquote></div>\n"
        )
        return _single(headers, markup, "html", "utf-8", "base64")
    if style == "outlook":
        text = (
            f"{body}\r\n\r\n-----Original Message-----\r\nFrom: {their_name} "
            f"<{their_address}>\r\nSent: Friday, March 1, 2024 12:00 PM\r\n"
            f"To: {sender_name} <{sender}>\r\nSubject: {orig_subject}\r\n\r\n{orig_text}\r\n"
        )
        headers.append(("Thread-Index", "AdpQ2x3Yk9vWb1cRQ0mP7n4ZbJ3hWg=="))
        headers.append(("X-Mailer", "Microsoft Outlook 16.0"))
        charset = "windows-1252" if _encodable(text, "windows-1252") else "utf-8"
        return _single(headers, text, "plain", charset, "quoted-printable")
    if style == "outlook_block":
        text = (
            f"{body}\n\n________________________________\nFrom: {their_name} "
            f"<{their_address}>\nSent: Friday, March 1, 2024 12:00:00 PM\n"
            f"To: {sender_name} <{sender}>\nSubject: {orig_subject}\n\n{orig_text}\n"
        )
        return _single(headers, text, "plain", "utf-8", "quoted-printable")
    if style == "apple":
        attribution = f"> On 1 Mar 2024, at 12:00, {their_name} <{their_address}> wrote:"
        text = f"{body}\n\n{attribution}\n>\n{_quote(orig_text)}\n"
        headers.append(("X-Mailer", "Apple Mail (2.3774.300.61.1.2)"))
        return _single(headers, text, "plain", "utf-8", "quoted-printable", flowed=True)
    if style == "thunderbird":
        attribution = f"On 01/03/2024 12:00, {their_name} wrote:"
        text = f"{body}\n\n{attribution}\n{_quote(orig_text)}\n"
        headers.append(("User-Agent", "Mozilla/5.0 Thunderbird/115.8.0"))
        return _single(headers, text, "plain", "utf-8", "8bit", flowed=True)
    if style == "iphone":
        attribution = f"On Mar 1, 2024, at 12:00 PM, {their_name} <{their_address}> wrote:"
        text = f"{body}\n\nSent from my iPhone\n\n{attribution}\n\n{_quote(orig_text)}\n"
        markup = f'<html><body dir="auto"><div dir="ltr">{html.escape(body)}</div></body></html>'
        headers.append(("X-Mailer", "iPhone Mail (21C66)"))
        return _alternative(headers, text, markup, "quoted-printable")
    if style == "bottom":
        attribution = f"{their_name} wrote:"
        text = f"{attribution}\n{_quote(orig_text)}\n\n{body}\n"
        return _single(headers, text, "plain", "utf-8", "8bit")
    if style == "base64":
        text = f"{body}\n\nOn {orig_date}, {their_name} wrote:\n{_quote(orig_text)}\n"
        return _single(headers, text, "plain", "utf-8", "base64")
    if style == "latin1":
        attribution = f"Le 01/03/2024 à 12:00, {their_name} a écrit :"
        text = f"{body}\n\nÀ bientôt, Renée\n\n{attribution}\n{_quote(_latin1(orig_text))}\n"
        return _single(headers, text, "plain", "iso-8859-1", "8bit")
    raise ValueError(f"unknown style {style!r}")


def _re(subject: str, style: str) -> str:
    if subject.lower().startswith(("re:", "aw:")):
        return subject
    prefix = {"outlook": "RE: ", "outlook_block": "RE: ", "latin1": "Réf : "}.get(style, "Re: ")
    return prefix + subject


def _encodable(text: str, charset: str) -> bool:
    try:
        text.encode(charset)
    except UnicodeEncodeError:
        return False
    return True


def _latin1(text: str) -> str:
    return text.encode("iso-8859-1", "replace").decode("iso-8859-1")


def _encode_header(name: str, value: str) -> str:
    if value.isascii():
        return f"{name}: {value}"
    if name in ("From", "To"):
        display, address = parseaddr(value)
        encoded = base64.b64encode(display.encode()).decode()
        return f"{name}: =?utf-8?b?{encoded}?= <{address}>"
    encoded = base64.b64encode(value.encode()).decode()
    return f"{name}: =?utf-8?b?{encoded}?="


def _head(headers: Sequence[tuple[str, str]]) -> bytes:
    return "\r\n".join(_encode_header(n, v) for n, v in headers).encode("ascii") + b"\r\n"


def _body_bytes(text: str, charset: str, cte: str) -> bytes:
    data = text.replace("\r\n", "\n").encode(charset, "replace")
    if cte == "base64":
        encoded = base64.encodebytes(data)
    elif cte == "quoted-printable":
        encoded = quopri.encodestring(data)
    else:
        encoded = data
    return encoded.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def _single(
    headers: Sequence[tuple[str, str]],
    text: str,
    subtype: str,
    charset: str,
    cte: str,
    *,
    flowed: bool = False,
) -> bytes:
    params = f"; charset={charset}" + ("; format=flowed" if flowed else "")
    head = _head(
        [
            *headers,
            ("Content-Type", f"text/{subtype}{params}"),
            ("Content-Transfer-Encoding", cte),
        ]
    )
    return head + b"\r\n" + _body_bytes(text, charset, cte)


def _alternative(headers: Sequence[tuple[str, str]], text: str, markup: str, cte: str) -> bytes:
    boundary = "000000000000a1b2c3d4e5f6"
    head = _head([*headers, ("Content-Type", f'multipart/alternative; boundary="{boundary}"')])
    parts = [head, b"\r\n"]
    for subtype, content in (("plain", text), ("html", markup)):
        parts.append(f"--{boundary}\r\n".encode())
        parts.append(
            f"Content-Type: text/{subtype}; charset=UTF-8\r\n"
            f"Content-Transfer-Encoding: {cte}\r\n\r\n".encode()
        )
        parts.append(_body_bytes(content, "utf-8", cte) + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts)


def plain_mail(
    sender: str,
    to: str,
    body: str,
    *,
    subject: str = "cribbage",
    extra: Sequence[tuple[str, str]] = (),
    message_id: str | None = None,
) -> bytes:
    """A fresh (non-reply) plain-text mail."""
    headers = [
        ("From", sender),
        ("To", to),
        ("Subject", subject),
        ("Date", format_datetime(datetime(2024, 3, 2, 9, 0, tzinfo=UTC))),
        ("Message-ID", message_id or make_msgid(domain="client.test")),
        ("MIME-Version", "1.0"),
        *extra,
    ]
    return _single(headers, body, "plain", "utf-8", "8bit")


# -- what a seat may not know ----------------------------------------------------------


def _event_cards(e: Event) -> set[Card]:
    return set(e.cards) | {c for item in e.items for c in item.cards}


def hidden_from(game: Game, seat: int, told: Iterable[Event] = ()) -> set[Card]:
    """Cards ``seat`` may not know in ``game`` now: the pack, the crib, the others' hands —
    less every card made public this hand (played, turned, shown) and any card in a
    public event the mail reports (``told``: a past hand's show, the cut for deal)."""
    state = game.state_json()
    hidden = {parse_card(c) for c in state["pack"]} | {parse_card(c) for c in state["crib"]}
    for other in range(game.players):
        if other != seat:
            hidden |= set(game.holding(other)) | set(game.kept(other))
            hidden |= set(game.laid_away(other))
    public: set[Card] = {c for _, c, _ in game.plays}
    if game.starter is not None:
        public.add(game.starter)
    public |= set(game.showing())  # the hand or crib being counted lies face up
    for e in game.events:
        if e.private_to is None and e.hand == game.hand_no:
            public |= _event_cards(e)
    starters = {e.hand: e.cards for e in game.events if e.kind == "starter"}
    for e in told:
        if e.private_to is None:
            public |= _event_cards(e)
            if e.kind in ("show", "claim", "reveal", "muggins"):
                # A count is told with its hand's starter ("… + starter 5♠").
                public |= set(starters.get(e.hand, ()))
    own = set(game.holding(seat)) | set(game.kept(seat)) | set(game.laid_away(seat))
    return hidden - public - own


def view_cards(view: PlayerView) -> set[Card]:
    """Every card a view names, anywhere."""
    found = set(view.holding) | set(view.kept) | set(view.laid_away) | set(view.showing)
    found |= {c for _, c in view.count_cards} | {c for _, c, _ in view.plays}
    if view.starter is not None:
        found.add(view.starter)
    for e in view.events:
        found |= _event_cards(e)
    return found


def assert_private_events_are_own(view: PlayerView) -> None:
    for e in view.events:
        assert e.private_to in (None, view.seat), f"seat {view.seat} got {e}"


def fresh_env() -> dict[str, str]:
    """The environment without PBEM_* settings (for subprocess runs) but the tests'
    default of dealing games at once (``fair_deals`` off, see tests/conftest.py)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env["PBEM_FAIR_DEALS"] = "false"
    return env


# -- machines -------------------------------------------------------------------------


def vacation_reply(original: Message, sender: str) -> bytes:
    """An out-of-office answer to ``original``, as Gmail sends it (RFC 3834 headers)."""
    raw = reply(original, sender, sender.split("@")[0].title(), "I am away until Monday.")
    head, body = raw.split(b"\r\n\r\n", 1)
    head = head.replace(b"Subject: ", b"Subject: Out of office: ", 1)
    return head + b"\r\nAuto-Submitted: auto-replied\r\nPrecedence: bulk\r\n\r\n" + body


def bounce(original_raw: bytes, failed: str, *, reporting: str = "mx.example.net") -> bytes:
    """A Postfix-style delivery status notification for ``original_raw`` sent to ``failed``."""
    boundary = "4T2Y0X1Zz9.1709287205/mx.example.net"
    original_head = original_raw.split(b"\r\n\r\n", 1)[0].decode("ascii", "replace")
    return (
        "Return-Path: <>\r\n"
        f"From: MAILER-DAEMON@{reporting} (Mail Delivery System)\r\n"
        f"To: {SERVICE_ADDRESS}\r\n"
        "Subject: Undelivered Mail Returned to Sender\r\n"
        "Date: Fri, 01 Mar 2024 12:00:05 +0000\r\n"
        f"Message-ID: <20240301120005.{failed.replace('@', '.')}@{reporting}>\r\n"
        "Auto-Submitted: auto-replied\r\n"
        "MIME-Version: 1.0\r\n"
        "Content-Type: multipart/report; report-type=delivery-status;\r\n"
        f'\tboundary="{boundary}"\r\n'
        "\r\n"
        f"--{boundary}\r\n"
        "Content-Description: Notification\r\n"
        "Content-Type: text/plain; charset=us-ascii\r\n"
        "\r\n"
        f"<{failed}>: host {reporting} said: 550 5.1.1 User unknown\r\n"
        "\r\n"
        f"--{boundary}\r\n"
        "Content-Description: Delivery report\r\n"
        "Content-Type: message/delivery-status\r\n"
        "\r\n"
        f"Reporting-MTA: dns; {reporting}\r\n"
        "\r\n"
        f"Final-Recipient: rfc822; {failed}\r\n"
        "Action: failed\r\n"
        "Status: 5.1.1\r\n"
        f"Diagnostic-Code: smtp; 550 5.1.1 <{failed}>: User unknown\r\n"
        "\r\n"
        f"--{boundary}\r\n"
        "Content-Description: Undelivered Message Headers\r\n"
        "Content-Type: text/rfc822-headers\r\n"
        "\r\n"
        f"{original_head}\r\n"
        "\r\n"
        f"--{boundary}--\r\n"
    ).encode()


# -- the command line -------------------------------------------------------------------


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def cli_env(data_dir: Path, db_url: str | None = None, **settings: str) -> dict[str, str | None]:
    """Environment for ``pbem``: data in ``data_dir`` (and ``db_url`` if given), domain
    ``pbem.test``, and no stray ``PBEM_*`` setting or config file from the caller."""
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("PBEM_")}
    env.update({"PBEM_DATA_DIR": str(data_dir), "PBEM_DOMAIN": DOMAIN, "COLUMNS": "250"})
    env["PBEM_FAIR_DEALS"] = "false"  # the tests' default (tests/conftest.py)
    if db_url is not None:
        env["PBEM_DATABASE_URL"] = db_url
    env.update({f"PBEM_{k.upper()}": v for k, v in settings.items()})
    return env


def run_cli(env: dict[str, str | None], *args: str, input: str | None = None) -> CliResult:
    """Run ``pbem ARGS`` in-process (typer's CliRunner); engines it opens are disposed."""
    from unittest import mock

    from typer.testing import CliRunner

    import pbem.cli
    import pbem.cli.base
    from pbem.store.db import make_engine

    engines: list[Engine] = []

    def tracked(url: str, *a: Any, **kw: Any) -> Engine:
        engine = make_engine(url, *a, **kw)
        engines.append(engine)
        return engine

    runner = CliRunner()
    with (
        mock.patch.object(pbem.cli.base, "make_engine", tracked),
        mock.patch.object(pbem.cli.base.out, "_width", 250),
        mock.patch.object(pbem.cli.base.err, "_width", 250),
    ):
        try:
            result = runner.invoke(pbem.cli.app, list(args), env=env, input=input)
        finally:
            for engine in engines:
                engine.dispose()
    return CliResult(result.exit_code, result.stdout, result.stderr, result.exception)
