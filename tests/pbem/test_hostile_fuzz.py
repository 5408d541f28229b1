"""A property-based fuzz of the whole path a received mail takes, on SQLite and on
PostgreSQL: arbitrary bytes, hostile header values (NUL, encoded words hiding NUL or
broken charsets, huge headers, surrogates), arbitrary MIME trees (nested multiparts, bad
boundaries, bad transfer encodings, bad base64), mixed with real players' replies (valid
tokens, some with real moves). Whatever arrives, the daemon's step never raises, every
message ends in a final state, and every game still replays and verifies.

The profile is fixed for CI (``derandomize``: the same 200 examples on every run, about
560 messages; about 30 s per backend on a 2-core machine).
"""

from __future__ import annotations

import base64
import mailbox
import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import Session, select

from engine import computer, load, to_archive
from pbem.demo.bots import command_for
from pbem.store import models as m
from tests.e2e.helpers import (
    ALICE,
    BOB,
    CAROL,
    DAVE,
    Harness,
    bounce,
    cli_env,
    reply,
    run_cli,
)

EXAMPLES = 200
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- header values ---------------------------------------------------------------------

_ANY_CHAR = st.characters(codec=None, exclude_categories=())  # surrogates and controls too
_ASCII_JUNK = st.text(st.characters(min_codepoint=0, max_codepoint=127), max_size=40)
_CHARSETS = st.sampled_from(
    ["utf-8", "us-ascii", "iso-8859-1", "utf-16", "x-bogus", "", "utf-8*en", "iso-2022-jp"]
)


def _bytes_of(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


@st.composite
def encoded_word(draw: st.DrawFn) -> bytes:
    payload = draw(st.binary(max_size=30) | st.text(_ANY_CHAR, max_size=20).map(_bytes_of))
    if draw(st.booleans()):
        payload = payload + b"\x00" + payload
    charset = draw(_CHARSETS)
    if draw(st.booleans()):
        body = base64.b64encode(payload)
        if draw(st.booleans()):
            body = body[:-1] + b"!"  # bad base64
        return b"=?" + charset.encode() + b"?b?" + body + b"?="
    quoted = "".join(f"={byte:02X}" for byte in payload).encode()
    return b"=?" + charset.encode() + b"?q?" + quoted + b"?="


header_value = st.one_of(
    st.text(_ANY_CHAR, max_size=60).map(_bytes_of),
    _ASCII_JUNK.map(str.encode),
    encoded_word(),
    st.lists(encoded_word(), min_size=1, max_size=4).map(b" ".join),
    st.binary(max_size=80),
    st.integers(1000, 30000).map(lambda n: b"x" * n),  # huge
    st.sampled_from(
        [
            b"a@x.test <eve@evil.test>",
            b"alice@example.com, bob@example.org",
            b"<alice@example.com\x00>",
            b'"alice@example.com" <mallory@evil.example>',
            b"=?utf-8?q?hello=00world?=",
            b"undisclosed-recipients:;",
            b"",
        ]
    ),
)


def _no_newlines(value: bytes) -> bytes:
    return value.replace(b"\r", b" ").replace(b"\n", b" ")


header = st.tuples(
    st.sampled_from(
        [
            "From",
            "To",
            "Subject",
            "Message-ID",
            "In-Reply-To",
            "References",
            "Reply-To",
            "Content-Type",
            "Content-Transfer-Encoding",
            "Auto-Submitted",
            "Return-Path",
            "Authentication-Results",
            "X-Failed-Recipients",
            "X-Junk",
        ]
    ),
    header_value.map(_no_newlines),
)

# -- MIME trees -------------------------------------------------------------------------

_ENCODINGS = st.sampled_from(["7bit", "8bit", "base64", "quoted-printable", "x-uuencode", "bogus"])
_TYPES = st.sampled_from(
    ["text/plain", "text/html", "application/octet-stream", "message/rfc822", "text/x-junk"]
)


@st.composite
def leaf(draw: st.DrawFn) -> bytes:
    encoding = draw(_ENCODINGS)
    payload = draw(st.binary(max_size=200) | st.text(_ANY_CHAR, max_size=100).map(_bytes_of))
    if encoding == "base64" and draw(st.booleans()):
        payload = base64.encodebytes(payload)
    head = (
        f'Content-Type: {draw(_TYPES)}; charset="{draw(_CHARSETS)}"\r\n'
        f"Content-Transfer-Encoding: {encoding}\r\n"
    ).encode()
    return head + b"\r\n" + payload


def _multipart(children: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    @st.composite
    def build(draw: st.DrawFn) -> bytes:
        boundary = draw(st.sampled_from(["b1", "==x==", "", "a" * 80, "b1\x00"]))
        used = draw(st.sampled_from([boundary, "other", boundary + "-"]))
        subtype = draw(st.sampled_from(["mixed", "alternative", "related", "report", "signed"]))
        parts = draw(st.lists(children, max_size=4))
        body = b"".join(b"--" + used.encode() + b"\r\n" + part + b"\r\n" for part in parts)
        if draw(st.booleans()):
            body += b"--" + used.encode() + b"--\r\n"
        head = f'Content-Type: multipart/{subtype}; boundary="{boundary}"\r\n'.encode()
        return head + b"\r\n" + body

    return build()


mime_tree = st.recursive(leaf(), _multipart, max_leaves=6)


@st.composite
def junk_mail(draw: st.DrawFn) -> bytes:
    shape = draw(st.sampled_from(["bytes", "headers", "mime"]))
    if shape == "bytes":
        return draw(st.binary(max_size=3000))
    headers = draw(st.lists(header, max_size=8))
    head = b"".join(name.encode() + b": " + value + b"\r\n" for name, value in headers)
    if shape == "headers":
        return head + b"\r\n" + draw(st.binary(max_size=500))
    return head + b"MIME-Version: 1.0\r\n" + draw(mime_tree)


# A player's reply: who answers, what they write, and how the mail is spoilt.
player_reply = st.tuples(
    st.integers(0, 3),
    st.sampled_from(["move", "move-in-subject", "text", "nothing", "tagged", "bounce"]),
    st.lists(header, max_size=3),
    st.text(_ANY_CHAR, max_size=80),
)

message = st.one_of(junk_mail(), player_reply)

PEOPLE = (ALICE, BOB, CAROL, DAVE)


def _reply_bytes(h: Harness, games: list[int], rng: random.Random, drawn: tuple) -> bytes:
    who, what, extra, text = drawn
    address, name = PEOPLE[who]
    game_id = games[who // 2]
    game = h.game(game_id)
    seat = who % 2
    body, subject = text, None
    if what == "bounce":  # of our last mail to this player, reported for someone
        failed = PEOPLE[(who + len(text)) % 4][0]
        return bounce(h.mail_files(address)[-1][1], failed)
    if what == "tagged":
        address = address.replace("@", "+games@")
    if what.startswith("move") and not game.is_over and seat in game.to_act():
        command = command_for(computer.choose_action(game, seat, rng))
        body, subject = (command, None) if what == "move" else ("", f"Re: {command}")
    elif what == "nothing":
        body = ""
    raw = reply(h.latest(PEOPLE[who][0]), address, name, body, subject=subject)
    head, _, rest = raw.partition(b"\n\n")
    spoilt = b"".join(n.encode() + b": " + v + b"\n" for n, v in extra)
    return head + b"\n" + spoilt + b"\n" + rest


def _fuzz(h: Harness, tmp_path: Path, db_url: str) -> None:
    games = [h.new_game((ALICE, BOB), seed="fuzz-1"), h.new_game((CAROL, DAVE), seed="fuzz-2")]
    rng = random.Random(11)
    seen = {"examples": 0, "messages": 0}
    inbox = mailbox.Maildir(str(h.inbox_dir), create=True)

    @FUZZ
    @given(st.lists(message, min_size=1, max_size=5))
    def deliver(batch: list[bytes | tuple]) -> None:
        for item in batch:
            raw = item if isinstance(item, bytes) else _reply_bytes(h, games, rng, item)
            inbox.add(raw)  # the bytes as they are
        h.step()  # never raises
        seen["examples"] += 1
        seen["messages"] += len(batch)
        with Session(h.db) as session:
            pending = session.exec(
                select(m.Inbound.id).where(m.Inbound.status == m.InboundStatus.PENDING.value)
            ).all()
        assert pending == []

    deliver()
    assert seen["examples"] >= EXAMPLES  # every example ran (none was rejected)
    rows = h.inbound()
    # Every message ended, and none by an unexpected error in processing (status failed).
    assert rows and all(row.status in ("applied", "rejected", "ignored") for row in rows), [
        (row.id, row.status, row.reason) for row in rows if row.status == "failed"
    ]
    assert any(row.status == "applied" for row in rows)  # real moves got through the junk
    env = cli_env(tmp_path / "cli", db_url)
    for game_id in games:
        game = h.game(game_id)
        assert load(to_archive(game)).state_hash() == h.game_row(game_id).state_hash
        result = run_cli(env, "game", "replay", str(game_id), "--verify")
        assert result.exit_code == 0 and "verified:" in result.stdout, result.output


def test_hostile_mail_never_stops_the_service(
    harness: Harness, tmp_path: Path, db_url: str
) -> None:
    _fuzz(harness, tmp_path, db_url)
