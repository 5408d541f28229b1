"""Reading every mail a player gets, as the player reads it: a recorder and its checks.

`Reader` stands between the players and a `Harness`: every mail a player sends goes
through it (`Reader.send`), and after each daemon step it reads the new mail of every
person at the table and notes, for each, what that person could answer then — the mail
is written for the state after the step, so that is the state it must ask about: the
engine's legal moves for their seat in the mail's game (`Game.legal_actions`, written as
`pbem.demo.bots.command_for` writes them), a cut while their seat has not cut, ``rematch`` or
``next`` once the game is over, an invitation's answers.

`findings` then reads each person's mail in the order the service queued it and returns
every place where a mail

1. **asks again what the player just did**: after a ``cut`` no mail of that game asks
   for one; after a move no later mail asks the question it answered (the same hand,
   phase, cards and count); after ``rematch`` or ``next`` no later mail of that game
   offers it, after an invitation's answer no mail of that invitation asks again; and
   the mail answering a command never tells the player to send that command (and
   what it reports on, under "About your reply", is the command they sent). Beside
   that, no game mail tells its reader to send a command of the moment (``cut``,
   ``next``, ``rematch``, ``accept``, a move) that is not an answer they may send now;
2. **says the same thing twice in a row** to one person: two mails whose text parts are
   the same once dates, Message-IDs and reply addresses are left out, or two mails of a
   game in a row asking the same question (the README: "not a second time with the
   same question");
3. **expects an answer without a one-click link for it**: a turn mail on the reader's
   turn (a ``mailto:`` link for every legal move but ``count N``, whose number the player
   works out), a cut request (``cut``), an invitation (``accept``, ``decline``,
   ``never``), a game-over mail (``rematch``, or ``next`` in a match going on), a
   confirmation request (a confirming answer, and the ``never`` it offers) — and no link
   that is not such an answer or an offer. A two-player discard links all fifteen
   pairs (`DISCARD_LINKS`), with or without hints, in the hand's card order (never
   ranked: a free hint); the reply line's card in a play mail with hints is linked too
   (its box is a link), so that one answer may be linked twice;
4. **offers a command only as text**: every command its notes and its result ask the
   reader to send ('Send "back" when you return', 'Reply "archive" for …', '"rematch
   best of 3" makes it a match') is a link;
5. **repeats the board for a note**: a mail that only carries notes (another player
   away or back, hints asked for, the answer to a setting) — no news, no move asked,
   no result — is a short mail of its own, without the hand and the board.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import parseaddr
from itertools import pairwise
from pathlib import Path

from sqlmodel import Session, col, select

from engine import Claim, InvalidSyntaxError, PlayerView, parse_card
from pbem.demo.bots import command_for, cut_request, text_of, view_of
from pbem.render.invite import ANSWERS as INVITE_ANSWERS
from pbem.render.invite import SUBJECT as INVITE_SUBJECT
from pbem.render.links import DISCARD_LINKS
from pbem.store import models as m
from tests.e2e.helpers import Harness, parse
from tests.e2e.mailto import links_in

GAME_SUBJECT = re.compile(r"\[Cribbage (\d+)\]")
CONFIRM_SUBJECT = "[Cribbage] Please confirm your request"


@dataclass
class Letter:
    """One mail a person received, with what they could answer when it was written."""

    address: str
    msg: EmailMessage
    seq: int  # the daemon step that brought it
    order: float = 0  # its place in the outbox (the order the service queued it)
    game_id: int | None = None
    seat: int | None = None
    players: int = 0
    hints: bool = False
    legal: frozenset[str] = frozenset()  # the engine's legal moves for the seat
    answers: frozenset[str] = frozenset()  # what the mail must link

    @property
    def subject(self) -> str:
        return str(self.msg["Subject"])

    @property
    def message_id(self) -> str:
        return str(self.msg["Message-ID"]).strip()

    @property
    def in_reply_to(self) -> str:
        return str(self.msg.get("In-Reply-To", "")).strip()

    @property
    def reply_to(self) -> str:
        return parseaddr(str(self.msg.get("Reply-To", "")))[1]

    @property
    def text(self) -> str:
        return text_of(self.msg)

    @property
    def view(self) -> PlayerView | None:
        return view_of(self.msg)


@dataclass
class Sent:
    """One mail a person sent, and what the service made of it."""

    address: str
    command: str  # its first line, as `command` reads it ("" for no command)
    message_id: str
    answering: str  # the Message-ID of the mail it answers ("" for a fresh mail)
    game_id: int | None
    status: str
    reason: str
    seq: int  # the first `Letter.seq` that may answer it


@dataclass
class Reader:
    """Sends the players' mail through the harness; reads what every person received."""

    h: Harness
    people: Sequence[str]
    letters: dict[str, Letter] = field(default_factory=dict)
    sent: list[Sent] = field(default_factory=list)
    files: dict[str, set[str]] = field(default_factory=dict)
    steps: int = 0

    def send(self, sender: str, raw: bytes) -> Sent:
        """Deliver ``raw`` (a mail from ``sender``), run a daemon step, read new mail."""
        mail = parse(raw)
        self.steps += 1
        self.h.deliver(raw)
        row = self.h.last_inbound()
        sent = Sent(
            address=sender,
            command=command(first_line(text_of(mail))),
            message_id=str(mail["Message-ID"]).strip(),
            answering=str(mail.get("In-Reply-To", "")).strip(),
            game_id=row.game_id,
            status=row.status,
            reason=row.reason or "",
            seq=self.steps,
        )
        self.sent.append(sent)
        self.collect()
        return sent

    def step(self) -> None:
        self.steps += 1
        self.h.step()
        self.collect()

    def collect(self) -> None:
        """Read every person's new mail and note what they could answer now."""
        games: dict[int, _GameNow] = {}
        new: list[Letter] = []
        for address in self.people:
            known = self.files.setdefault(address, set())
            for name, raw in self.h.mail_files(address):
                if name not in known:
                    known.add(name)
                    letter = Letter(address, parse(raw), self.steps)
                    self._note(letter, games)
                    new.append(letter)
        if not new:
            return
        with Session(self.h.db) as session:
            ids = [x.message_id for x in new]
            order = dict(
                session.exec(
                    select(m.Outbox.message_id, m.Outbox.id).where(
                        col(m.Outbox.message_id).in_(ids)
                    )
                ).all()
            )
        for letter in new:
            letter.order = order.get(letter.message_id) or 0
            self.letters[letter.message_id] = letter

    def _note(self, letter: Letter, games: dict[int, _GameNow]) -> None:
        if letter.subject == INVITE_SUBJECT:
            letter.answers = frozenset(INVITE_ANSWERS)
            return
        if letter.subject == CONFIRM_SUBJECT:
            letter.answers = frozenset({CONFIRMING, "never"})
            return
        found = GAME_SUBJECT.search(letter.subject)
        if found is None:
            return
        game_id = int(found.group(1))
        now = games.get(game_id) or games.setdefault(game_id, _game_now(self.h, game_id))
        row = now.row
        seat = now.seats.get(letter.address)
        letter.game_id, letter.seat = game_id, seat
        letter.players = int(row.settings["players"])
        letter.hints = bool(row.hints)
        if seat is None:
            return
        if row.status == m.GameStatus.CUTTING.value:
            cut = any(int(e["seat"]) == seat for e in row.entropy or ())
            letter.answers = frozenset() if cut else frozenset({"cut"})
            return
        game = self.h.game(game_id)
        if game.is_over:
            if row.status == m.GameStatus.FINISHED.value:
                # What a finished game leads on to: in a match not yet won, "next" when
                # the next game waits for the players' answers as their cuts (a fair
                # game; otherwise it starts by itself); else a rematch (not in a closed
                # lobby).
                if now.match_going_on:
                    letter.answers = frozenset({"next"} if row.commitment else ())
                elif self.h.settings.lobby != "closed":
                    letter.answers = frozenset({"rematch"})
            return
        legal = game.legal_actions(seat)
        letter.legal = frozenset(command_for(a).lower() for a in legal)
        answers = {command_for(a).lower() for a in legal if not isinstance(a, Claim)}
        letter.answers = frozenset(answers)

    def mails(self, address: str) -> list[Letter]:
        """Every mail ``address`` received, in the order the service queued them."""
        return sorted(
            (x for x in self.letters.values() if x.address == address),
            key=lambda x: (x.seq, x.order),
        )

    def latest(self, address: str, game_id: int) -> Letter:
        """``address``'s latest mail of game ``game_id``."""
        mails = [x for x in self.mails(address) if x.game_id == game_id]
        assert mails, f"{address} has no mail of game {game_id}"
        return mails[-1]


@dataclass(frozen=True)
class _GameNow:
    row: m.Game
    seats: dict[str, int]  # address → seat
    match_going_on: bool


def _game_now(h: Harness, game_id: int) -> _GameNow:
    with Session(h.db) as session:
        row = session.get(m.Game, game_id)
        assert row is not None
        seats: dict[str, int] = {}
        for seat in session.exec(select(m.Seat).where(m.Seat.game_id == game_id)):
            player = session.get(m.Player, seat.player_id)
            assert player is not None
            seats[player.email] = seat.seat
        match = session.get(m.Match, row.match_id) if row.match_id else None
        going_on = match is not None and match.status == "active"
        session.expunge(row)
    return _GameNow(row, seats, going_on)


# -- reading what a mail asks for -------------------------------------------------------

CONFIRMING = "(any words)"
"""A confirmation request's answer: any reply but a refusal confirms."""

REFUSING = ("never", "stop", "unsubscribe", "no")

WORDY = ("cut", "next", "rematch", "accept", "decline")
"""Answers that may carry words after them."""

MOMENT = ("cut", "next", "rematch", "accept", "decline", "discard", "play", "go", "muggins")
"""Commands that answer a mail of the moment: a game mail may tell its reader to send one
only when it is an answer they may send now."""

VERBS = frozenset(
    (
        *MOMENT,
        *("count", "resign", "hand", "status", "history", "hint", "hints", "help"),
        *("archive", "say", "name", "mail", "stop", "start", "digest", "away", "back"),
        *("observers", "standings", "ratings", "new", "challenge", "cancel", "games"),
        *("watch", "unwatch", "never"),
    )
)

QUOTED = re.compile(r"""["“']([^"”'\n]{1,60})["”']""")
SENTENCE = re.compile(r"(?<=[.;:!?])\s+(?=[A-Z“\"'(])")
ASKING = re.compile(r"\b(?:reply|replies|write|answer|send)\b", re.IGNORECASE)


def _word(word: str) -> str:
    """A card as a command writes it (``6♣`` → ``6c``); any other word lower-cased."""
    if any(ch.isdigit() or ch in "♠♥♦♣" for ch in word) or len(word) == 2:
        try:
            return parse_card(word).ascii.lower()
        except InvalidSyntaxError:
            pass
    return word.lower()


def command(line: str) -> str:
    """``line`` as a command reads: lower case, cards in ASCII (``Play 6♣`` → ``play
    6c``); "" when it does not start with a command's verb."""
    words = [_word(w) for w in line.replace(",", " ").split()]
    return " ".join(words) if words and words[0] in VERBS else ""


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def linked(letter: Letter) -> list[str]:
    """The commands of the mail's one-click links, in order (a link to a reply address
    with no command in it — the games list's — is left out)."""
    return [c for c in (link.body.strip().lower() for link in links_in(letter.msg)) if c]


def reply_lines(text: str) -> list[str]:
    """The reply lines of a mail: those of its "Your turn" box (indented eight spaces,
    after the ``>>>`` headline) and of a "Your reply" section."""
    lines = text.splitlines()
    found: list[str] = []
    for i, line in enumerate(lines):
        if line.startswith(">>> "):
            for after in lines[i + 1 :]:
                if after and not after.startswith(" "):
                    break
                if after.startswith(" " * 8) and after.strip():
                    found.append(after.strip())
        if line == "Your reply" and i + 2 < len(lines):
            found.append(lines[i + 2].strip())
    return found


def offered(letter: Letter) -> set[str]:
    """Every command the mail tells its reader to send: its links, its reply lines (a
    list of choices, "play one of: 7♣ 8♦", counts as each of them) and every quoted
    command in a sentence that asks for a reply ('Reply "rematch" for …')."""
    found = set(linked(letter))
    for line in reply_lines(letter.text):
        choices = re.match(r"(\w+) (?:one|two) of: (.*)$", line)
        if choices and " two of: " in line:
            found.add(f"{choices.group(1)} (two of the cards)")
        elif choices:
            found |= {command(f"{choices.group(1)} {card}") for card in choices.group(2).split()}
        else:
            found.add(command(line) or line.lower())
    flat = " ".join(letter.text.split())
    for sentence in SENTENCE.split(flat):
        if ASKING.search(sentence) or sentence.startswith("Plain letters work too"):
            found |= {command(q) for q in QUOTED.findall(sentence)}
    found.discard("")
    return found


def about_reply(text: str) -> list[str]:
    """The commands the "About your reply" section of a mail reports on (``[done]
    play 7c — …`` → ``play 7c``)."""
    section = re.search(r"^About your reply\n-+\n(.*?)(?:\n\n|\Z)", text, re.M | re.S)
    if section is None:
        return []
    found = re.findall(r"^  \[[a-z ]+\] +(\S[^—\n]*?) —", section.group(1), re.MULTILINE)
    return [command(c) or c.lower() for c in found]


def question(letter: Letter) -> tuple[object, ...] | None:
    """What a turn mail asks: its game, hand, phase, the reader's cards and the count
    (None for a mail that asks no move)."""
    view = letter.view
    if view is None or not view.my_turn or not view.legal or view.outcome is not None:
        return None
    return (letter.game_id, view.hand_no, view.phase, view.holding, view.count, len(view.plays))


def normalized(letter: Letter) -> str:
    """The text part less what differs between two sendings of one mail: dates,
    Message-IDs, reply addresses."""
    text = re.sub(r"<[^<>\s]+@[^<>\s]+>", "<id>", letter.text.replace("\r\n", "\n"))
    return re.sub(r"\b[\w.-]+\+[\w-]+@[\w.-]+", "<reply address>", text)


# -- the checks -------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One place a mail fails a check: which, to whom, which mail, and what is wrong."""

    check: str
    address: str
    subject: str
    index: int  # the mail's place in the recipient's mailbox (0: the first)
    detail: str

    def __str__(self) -> str:
        return f"[{self.check}] {self.address} #{self.index} {self.subject!r}: {self.detail}"


def findings(reader: Reader) -> list[Finding]:
    """Every place a mail of ``reader``'s session fails one of the three checks."""
    found: list[Finding] = []
    for address in reader.people:
        mails = reader.mails(address)
        index = {x.message_id: i for i, x in enumerate(mails)}
        found += asks_again(reader, address, mails, index)
        found += said_twice(address, mails)
        found += one_click(address, mails)
        found += offers_linked(address, mails)
        found += note_repeats_board(address, mails)
    return found


_NOTE_HEADINGS = re.compile(r"^(?:Note|Notes|About your reply)\n-+$", re.MULTILINE)
_MORE_THAN_NOTES = re.compile(
    r"^(?:Since your last mail|The hand so far|The game so far|GAME OVER: |>>> )", re.MULTILINE
)


def note_repeats_board(address: str, mails: list[Letter]) -> Iterable[Finding]:
    """Check 5: a mail of notes alone does not send the hand and the board again."""
    for i, letter in enumerate(mails):
        text = letter.text.replace("\r\n", "\n")
        if letter.game_id is None or not _NOTE_HEADINGS.search(text):
            continue
        if _MORE_THAN_NOTES.search(text) or question(letter) is not None:
            continue
        if "[already]" in text or "[confirm?]" in text or "hand" in about_reply(text):
            continue  # where the game is, asked for or needed: the board is the answer
        if "Scores — " in text or "Your cards" in text:
            yield Finding("note with board", address, letter.subject, i, "repeats the board")


# Where a mail's own offers are: its notes and its result, above the news, the hand, the
# board and the footer (whose list of commands is a reference, not an offer).
_BELOW_OFFERS = re.compile(
    r"^(?:Since your last mail|The hand so far|The game so far|Your cards|Scores — |-- )$|"
    r"^>>> ",
    re.MULTILINE,
)
_OFFER = re.compile(r"""\b(?:[Rr]eply|[Ss]end)\s+["“']([a-z][a-z0-9 ]{0,30}?)["”']""")
_ALSO = re.compile(r"""; ["“']([a-z][a-z0-9 ]{0,30}?)["”'] makes""")


def offers(letter: Letter) -> set[str]:
    """The commands a mail's notes and result ask its reader to send."""
    text = letter.text.replace("\r\n", "\n")
    cut = _BELOW_OFFERS.search(text)
    head = " ".join((text[: cut.start()] if cut else text).split())
    return set(_OFFER.findall(head)) | set(_ALSO.findall(head))


def offers_linked(address: str, mails: list[Letter]) -> Iterable[Finding]:
    """Check 4: every offer of a mail's notes and result is a one-click link (when the
    mail has a reply address to link to)."""
    for i, letter in enumerate(mails):
        if letter.game_id is None or letter.seat is None or not letter.reply_to:
            continue
        got = set(linked(letter))
        for missing in sorted(offers(letter) - got):
            yield Finding("offer is text", address, letter.subject, i, f"{missing!r} not a link")


def asks_again(
    reader: Reader, address: str, mails: list[Letter], index: dict[str, int]
) -> Iterable[Finding]:
    """Check 1: no mail asks the player to do what they just did."""

    def finding(letter: Letter, detail: str) -> Finding:
        return Finding("asks again", address, letter.subject, index[letter.message_id], detail)

    for letter in mails:
        if letter.game_id is None or letter.seat is None:
            continue
        moment = {c for c in offered(letter) if c.split()[0] in MOMENT}
        allowed = letter.answers | letter.legal
        if letter.players == 2 and any(a.startswith("discard ") for a in letter.answers):
            allowed |= {"discard (two of the cards)"}  # "discard two of: …" (no hints)
        # A cut, a rematch or an invitation's answer may say more ("cut 17 purple
        # elephants", "rematch best of 3").
        words = {a for a in allowed if a in WORDY}
        for wrong in sorted(c for c in moment - allowed if c.split()[0] not in words):
            yield finding(letter, f"tells the reader to send {wrong!r}, not an answer now")
    for sent in reader.sent:
        if sent.address != address or sent.status != "applied" or not sent.command:
            continue
        verb = sent.command.split()[0]
        answered = reader.letters.get(sent.answering)
        later = [x for x in mails if x.seq >= sent.seq]
        for letter in later:
            # Its answers: the mails of the same daemon step threaded after it, or that
            # report on it (a game's first mail may start a thread of its own).
            if letter.seq != sent.seq or not (
                letter.in_reply_to == sent.message_id or about_reply(letter.text)
            ):
                continue
            again = {c for c in offered(letter) if c.split()[0] == verb}
            if verb in MOMENT and verb not in WORDY:
                again = {c for c in again if c == sent.command}
            for wrong in sorted(again):
                yield finding(letter, f"answers {sent.command!r} and asks for {wrong!r}")
            told = about_reply(letter.text)
            if told and not any(c.split()[:1] == [verb] for c in told):
                yield finding(letter, f"answers {sent.command!r} as if it said {told}")
        if answered is None:
            continue
        if verb in ("cut", "next", "rematch") and answered.game_id is not None:
            for letter in later:
                if letter.game_id != answered.game_id:
                    continue
                asked = {c for c in offered(letter) | letter.answers if c.split()[0] == verb}
                if verb == "cut" and cut_request(letter.msg):
                    asked.add("cut (the cut request)")
                for wrong in sorted(asked):
                    yield finding(letter, f"after {sent.command!r}, asks for {wrong!r} again")
        if verb in INVITE_ANSWERS and answered.subject == INVITE_SUBJECT:
            for letter in later:
                if letter.reply_to == answered.reply_to:
                    yield finding(letter, f"after {sent.command!r}, the invitation asks again")
        asked_then = question(answered)
        if verb in MOMENT and asked_then is not None:
            for letter in later:
                if question(letter) == asked_then:
                    yield finding(letter, f"after {sent.command!r}, asks the same question again")


def said_twice(address: str, mails: list[Letter]) -> Iterable[Finding]:
    """Check 2: no two mails in a row to one person say the same thing."""
    for i, (before, after) in enumerate(pairwise(mails), start=1):
        if normalized(before) == normalized(after):
            yield Finding(
                "said twice", address, after.subject, i, "the same text as the mail before"
            )
    last: dict[int, Letter] = {}
    for i, letter in enumerate(mails):
        if letter.game_id is None:
            continue
        previous = last.get(letter.game_id)
        last[letter.game_id] = letter
        asked = question(letter)
        if previous is not None and asked is not None and question(previous) == asked:
            yield Finding(
                "said twice",
                address,
                letter.subject,
                i,
                "asks the question of its game's mail before",
            )


def one_click(address: str, mails: list[Letter]) -> Iterable[Finding]:
    """Check 3: each answer a mail expects has its one-click link, and no link is
    anything else."""
    for i, letter in enumerate(mails):

        def finding(detail: str, letter: Letter = letter, i: int = i) -> Finding:
            return Finding("one click", address, letter.subject, i, detail)

        links = linked(letter)
        suggested = {command(x) for x in reply_lines(letter.text)}
        twice = {c for c in links if links.count(c) > 1}
        if any(c not in suggested or links.count(c) > 2 for c in twice):
            yield finding(f"links an answer twice: {links}")
        got = set(links)
        view = letter.view
        if letter.legal and view is not None:
            shown = {command_for(a).lower() for a in view.legal}
            if shown != letter.legal:
                yield finding(f"view.json's legal moves {sorted(shown)} are not the engine's")
        if letter.answers == {CONFIRMING, "never"}:
            confirming = {c for c in got if c.split()[0] not in REFUSING}
            if not confirming or "never" not in got:
                yield finding(f"expects a confirming answer and 'never'; links {links}")
            continue
        is_discard = any(a.startswith("discard ") for a in letter.answers)
        if is_discard and letter.players == 2 and view is not None:
            # All fifteen pairs, in the hand's card order: never ranked.
            pairs = [x for x in links if x.startswith("discard ")]
            order = [c.ascii.lower() for c in view.holding]
            ranks = [tuple(order.index(w) for w in x.split()[1:]) for x in pairs]
            if len(set(pairs)) != DISCARD_LINKS or ranks != sorted(ranks):
                yield finding(f"links {pairs}, not the {DISCARD_LINKS} pairs in card order")
        for missing in sorted(letter.answers - got):
            yield finding(f"no one-click link for {missing!r}")
        for extra in sorted(got - letter.answers - offers(letter)):
            yield finding(f"links {extra!r}, not an answer it expects now")


def report(found: Sequence[Finding]) -> str:
    return "\n".join(str(f) for f in found) or "no findings"


def dump(reader: Reader, folder: Path) -> None:
    """Write each person's mail, in order, to ``folder`` (to read them by eye)."""
    folder.mkdir(parents=True, exist_ok=True)
    for address in reader.people:
        with open(folder / f"{address}.txt", "w") as out:
            for i, letter in enumerate(reader.mails(address)):
                out.write(f"===== {i} {letter.subject}  game={letter.game_id}")
                out.write(f" seat={letter.seat} hints={letter.hints} answers=")
                out.write(f"{sorted(letter.answers)} links={linked(letter)}\n")
                out.write(f"offered={sorted(offered(letter))}\n{letter.text}\n")
        with open(folder / f"{address}.sent.txt", "w") as out:
            for sent in reader.sent:
                if sent.address == address:
                    out.write(f"{sent.message_id} game={sent.game_id} {sent.status}: ")
                    out.write(f"{sent.reason}\n    {sent.command!r}\n")
