"""compose: MIME that survives SMTP, and reads back as what was written."""

from __future__ import annotations

import base64
import email
import quopri
from datetime import UTC, datetime, timedelta, timezone
from email.policy import default
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.mail.address import is_valid_address
from pbem.mail.autoreply import AutoKind
from pbem.mail.compose import MAX_REFERENCES, compose
from pbem.mail.reading import read_message
from pbem.mail.tokens import find_tokens, message_id, reply_address
from pbem.names import clean_name

DOMAIN = "cribbage.example.org"
TOKEN = "k5x2ablq7vrm4ysoyhd3"
SUBJECT = "[Cribbage 12] Your turn — the count is 15: 5♥ 7♣ J♦ Q♠"
TEXT = (
    "Bob vs Alice — hand 3, the play\n\n"
    "The count is 15. Your hand: 5♥ 7♣ J♦ Q♠ 10♡\ufe0f\n\n"
    "Reply with: play 7♣\n"
)
HTML = "<p>The count is 15. Your hand: 5♥ 7♣ J♦ Q♠</p><p>Reply with: <b>play 7♣</b></p>\n"
GMAIL_ID = "CAJ8x9Yc3kZ1-a-very-long-gmail-message-id-" + "a" * 60 + "@mail.gmail.com"


def build(**overrides: Any) -> bytes:
    args: dict[str, Any] = {
        "sender": f"play@{DOMAIN}",
        "sender_name": "Cribbage",
        "to": "zoe@example.com",
        "to_name": "Zoë Ünal",
        "subject": SUBJECT,
        "text": TEXT,
        "html": HTML,
        "message_id": message_id(TOKEN, 12, 7, DOMAIN),
        "in_reply_to": f"<{GMAIL_ID}>",
        "references": [f"<g12.s1.{TOKEN}@{DOMAIN}>", GMAIL_ID],
        "reply_to": reply_address("play", TOKEN, DOMAIN),
        "loop_value": DOMAIN,
        "date": datetime(2024, 1, 1, 10, 0, tzinfo=UTC),
    }
    args.update(overrides)
    return compose(**args)


def test_round_trip() -> None:
    raw = build()
    mail = read_message(raw)
    assert mail.subject == SUBJECT
    assert mail.body == TEXT
    assert mail.sender == f"play@{DOMAIN}" and mail.sender_name == "Cribbage"
    assert mail.to == ("zoe@example.com",)
    assert mail.reply_to == f"play+{TOKEN}@{DOMAIN}"
    assert mail.message_id == f"g12.s7.{TOKEN}@{DOMAIN}"
    assert mail.in_reply_to == (GMAIL_ID,)
    assert mail.references == (f"g12.s1.{TOKEN}@{DOMAIN}", GMAIL_ID)
    assert mail.date == datetime(2024, 1, 1, 10, 0, tzinfo=UTC)
    assert mail.problem is None


def test_our_mail_coming_back_is_a_loop() -> None:
    raw = build()
    by_address = read_message(raw, our_addresses={f"play@{DOMAIN}"})
    assert by_address.auto == AutoKind.LOOP
    # forwarded by someone else but still carrying our loop header
    forwarded = raw.replace(f"From: Cribbage <play@{DOMAIN}>".encode(), b"From: eve@example.com")
    by_header = read_message(forwarded, our_addresses={f"play@{DOMAIN}"}, loop_value=DOMAIN)
    assert by_header.sender == "eve@example.com"
    assert by_header.auto == AutoKind.LOOP
    # even with nothing configured, Auto-Submitted gives it away
    assert read_message(forwarded).auto is not None


def test_smtp_safe() -> None:
    raw = build(text=TEXT + "x" * 3000 + "\n" + "♣" * 1000 + "\n", html=HTML + "y" * 5000)
    assert raw.isascii()
    lines = raw.split(b"\r\n")
    assert b"\n" not in raw.replace(b"\r\n", b"")
    assert max(len(line) for line in lines) <= 998
    for line in lines:
        if not line.startswith((b"In-Reply-To:", b"References:", b" <")):
            assert len(line) <= 78, line


def test_structure_and_headers() -> None:
    msg = email.message_from_bytes(build(), policy=default)
    assert msg.get_content_type() == "multipart/alternative"
    plain, html = msg.iter_parts()
    assert plain.get_content_type() == "text/plain" and plain.get_content_charset() == "utf-8"
    assert html.get_content_type() == "text/html" and html.get_content_charset() == "utf-8"
    # Short text full of suit signs: either encoding (the smaller: see below).
    assert plain["Content-Transfer-Encoding"] in ("quoted-printable", "base64")
    assert html["Content-Transfer-Encoding"] in ("quoted-printable", "base64")
    assert plain.get_content().replace("\r\n", "\n") == TEXT
    assert html.get_content().replace("\r\n", "\n") == HTML
    assert msg["Auto-Submitted"] == "auto-generated"
    assert msg["X-PBEM-Loop"] == DOMAIN
    assert msg["Date"] == "Mon, 01 Jan 2024 10:00:00 +0000"
    assert "Precedence" not in msg
    assert str(msg["To"]) == "Zoë Ünal <zoe@example.com>"


def test_subject_is_rfc2047_encoded() -> None:
    raw = build()
    header_block = raw.split(b"\r\n\r\n", 1)[0]
    assert b"=?utf-8?" in header_block
    assert "—".encode() not in header_block


def test_ids_are_never_encoded() -> None:
    raw = build()
    assert f"In-Reply-To: <{GMAIL_ID}>".encode() in raw
    assert f" <{GMAIL_ID}>\r\n".encode() in raw
    assert b"=?utf-8?q?=3C" not in raw


def test_plain_only_ascii_is_7bit() -> None:
    msg = email.message_from_bytes(build(text="play 7c\n", html=None), policy=default)
    assert msg.get_content_type() == "text/plain"
    assert msg["Content-Transfer-Encoding"] == "7bit"
    assert read_message(msg.as_bytes()).body == "play 7c\n"


def test_same_input_same_bytes_apart_from_boundaries() -> None:
    def stable(raw: bytes) -> bytes:
        return b"\n".join(line for line in raw.split(b"\r\n") if b"=_" not in line)

    assert stable(build()) == stable(build())


def test_references_are_trimmed_keeping_first_and_newest() -> None:
    refs = [f"<r{i}@x>" for i in range(50)]
    mail = read_message(build(references=refs))
    assert len(mail.references) == MAX_REFERENCES
    assert mail.references[0] == "r0@x"
    assert mail.references[-1] == "r49@x"
    assert mail.references[1] == f"r{50 - MAX_REFERENCES + 1}@x"


def test_no_threading_headers_when_none() -> None:
    msg = email.message_from_bytes(build(in_reply_to=None, references=[], reply_to=None))
    assert msg["In-Reply-To"] is None and msg["References"] is None and msg["Reply-To"] is None


def test_naive_and_other_zone_dates() -> None:
    naive = read_message(build(date=datetime(2024, 1, 1, 10, 0))).date
    assert naive == datetime(2024, 1, 1, 10, 0, tzinfo=UTC)
    zoned = datetime(2024, 1, 1, 11, 0, tzinfo=timezone(timedelta(hours=1)))
    assert read_message(build(date=zoned)).date == zoned
    assert read_message(build(date=None)).date is not None


def test_header_values_cannot_inject() -> None:
    raw = build(subject="hi\r\nBcc: eve@example.com", to_name="Zoë\nBcc: eve@example.com")
    msg = email.message_from_bytes(raw)
    assert msg["Bcc"] is None
    assert "Bcc: eve@example.com" in read_message(raw).subject


def test_extra_headers_and_attachments() -> None:
    raw = build(
        extra_headers={"List-Unsubscribe": "<mailto:play@cribbage.example.org?subject=stop>"},
        attachments=[("view.json", "application/json", b'{"hand": ["5H"]}')],
    )
    msg = email.message_from_bytes(raw, policy=default)
    assert msg["List-Unsubscribe"] == "<mailto:play@cribbage.example.org?subject=stop>"
    assert msg.get_content_type() == "multipart/mixed"
    attachment = next(iter(msg.iter_attachments()))
    assert attachment.get_filename() == "view.json"
    assert attachment.get_content() == b'{"hand": ["5H"]}'
    assert read_message(raw).body == TEXT


@pytest.mark.parametrize(
    "overrides",
    [
        {"sender": "not an address"},
        {"to": "Bob <bob@example.com>"},
        {"reply_to": "x"},
        {"message_id": "<has space@x>"},
        {"in_reply_to": "<a<b@x>"},
        {"references": ["ok@x", ""]},
        {"loop_value": " "},
        {"extra_headers": {"Subject": "again"}},
        {"extra_headers": {"X-PBEM-Loop": "spoof"}},
        {"extra_headers": {"Bad Name": "x"}},
        {"attachments": [("a.bin", "nonsense", b"")]},
    ],
)
def test_rejects(overrides: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        build(**overrides)


def test_tokens_survive_the_round_trip_as_a_reply() -> None:
    ours = read_message(build())
    reply = (
        f"From: zoe@example.com\nTo: {ours.reply_to}\n"
        f"In-Reply-To: <{ours.message_id}>\nReferences: <{ours.message_id}>\n\nplay 7c\n"
    ).encode()
    assert find_tokens(read_message(reply), "play", DOMAIN) == [TOKEN]


@pytest.mark.parametrize(
    "subject",
    [
        "[Cribbage 12] Hand 3 — your turn: play",
        " ".join(["Ünïcødé"] * 20),
        "a—" + "x" * 200,
        "♥" * 60,
        "mixed ascii words and one é at the end of a long enough line to fold it twice over",
    ],
)
def test_a_non_ascii_subject_is_encoded_folded_and_read_back(subject: str) -> None:
    raw = build(subject=subject)
    lines = raw.split(b"\r\n\r\n", 1)[0].decode("ascii").split("\r\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Subject: "))
    folded = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith(" "):
            break
        folded.append(line)
    assert all(len(line) <= 78 for line in folded)
    words = [folded[0][len("Subject: ") :]] + [line[1:] for line in folded[1:]]
    assert all(len(word) <= 75 and word.startswith("=?utf-8?q?") for word in words)
    assert email.message_from_bytes(raw, policy=default)["Subject"] == subject


def _part_sizes(raw: bytes) -> dict[str, tuple[str, int]]:
    """Content type → (transfer encoding, encoded size) of each leaf part."""
    msg = email.message_from_bytes(raw, policy=default)
    return {
        part.get_content_type(): (str(part["Content-Transfer-Encoding"]), len(part.get_payload()))
        for part in msg.walk()
        if not part.is_multipart()
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Mostly ASCII, a few signs: quoted-printable is smaller.
        ("The count is 15, play 7♣ or go; the crib is yours.\n" * 40, "quoted-printable"),
        # Mostly non-ASCII: base64 is smaller.
        ("♥♦♣♠ ●○●○ ♥♦♣♠\n" * 40, "base64"),
    ],
)
def test_each_part_takes_the_smaller_of_quoted_printable_and_base64(
    text: str, expected: str
) -> None:
    raw = build(
        text=text, html=f"<pre>{text}</pre>\n", attachments=[("a.txt", "text/plain", text.encode())]
    )
    sizes = _part_sizes(raw)
    for kind in ("text/plain", "text/html"):
        assert sizes[kind][0] == expected, (kind, sizes)
    msg = email.message_from_bytes(raw, policy=default)
    plain = next(
        p for p in msg.walk() if p.get_content_type() == "text/plain" and not p.get_filename()
    )
    assert plain.get_content().replace("\r\n", "\n") == text
    # The other encoding would have been larger.
    data = text.replace("\n", "\r\n").encode()
    other = (
        len(base64.encodebytes(data))
        if expected == "quoted-printable"
        else len(quopri.encodestring(data))
    )
    assert sizes["text/plain"][1] < other


@pytest.mark.parametrize(
    ("name", "content_type"),
    [("cribbage-1.html", "text/html"), ("cribbage-1.json", "application/json")],
)
def test_a_text_attachment_names_its_charset(name: str, content_type: str) -> None:
    """A replay page or an archive says it is UTF-8, so a client that previews it by its
    MIME charset shows "Computer plays 7♥", not mojibake."""
    data = "Computer plays 7♥ — «fifteen two»".encode()
    raw = build(attachments=[(name, content_type, data)])
    msg = email.message_from_bytes(raw, policy=default)
    [attached] = [p for p in msg.walk() if p.get_filename() == name]
    assert attached.get_content_type() == content_type
    assert attached.get_content_charset() == "utf-8"
    payload = attached.get_payload(decode=True)
    assert isinstance(payload, bytes)
    assert payload.decode("utf-8") == data.decode()


def test_bytes_that_are_not_utf8_name_no_charset() -> None:
    raw = build(attachments=[("view.json", "application/json", bytes(range(256)))])
    msg = email.message_from_bytes(raw, policy=default)
    [attached] = [p for p in msg.walk() if p.get_filename() == "view.json"]
    assert attached.get_content_charset() is None


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"seat":1,"events":[]}' * 30, "quoted-printable"),  # JSON: ASCII, no line breaks
        (bytes(range(256)) * 3, "base64"),
        (b"line\r\nbreaks\nand =\r signs, kept as they are" * 3, "quoted-printable"),
    ],
)
def test_attachments_round_trip_whichever_encoding(data: bytes, expected: str) -> None:
    raw = build(attachments=[("view.json", "application/json", data)])
    msg = email.message_from_bytes(raw, policy=default)
    [attached] = [p for p in msg.walk() if p.get_filename() == "view.json"]
    assert attached.get_payload(decode=True) == data
    assert attached["Content-Transfer-Encoding"] == expected
    for line in raw.split(b"\r\n\r\n", 1)[1].split(b"\r\n"):
        assert len(line) <= 78


@pytest.mark.parametrize(
    ("parts", "types"),
    [
        ("both", ["text/plain", "text/html"]),
        ("text", ["text/plain"]),
        ("html", ["text/html"]),
    ],
)
def test_parts_chosen_by_the_recipient(parts: str, types: list[str]) -> None:
    msg = email.message_from_bytes(
        build(parts=parts, attachments=[("view.json", "application/json", b"{}")]),
        policy=default,
    )
    leaves = [p.get_content_type() for p in msg.walk() if not p.is_multipart()]
    assert leaves == [*types, "application/json"]


def test_html_only_without_html_keeps_the_text() -> None:
    msg = email.message_from_bytes(build(parts="html", html=None), policy=default)
    assert msg.get_content_type() == "text/plain"


def test_parts_must_be_a_known_choice() -> None:
    with pytest.raises(ValueError, match="not a choice of parts"):
        build(parts="pdf")


# -- addresses and names that strangers choose ------------------------------------------

# Addresses is_valid_address accepts: dot-atoms of every character it allows, domains of
# letters, digits and hyphens (punycode included).
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,12}"
_LABEL = r"(?:xn--)?[a-z0-9](?:[a-z0-9-]{0,8}[a-z0-9])?"
VALID_ADDRESSES = st.from_regex(
    rf"\A{_ATOM}(?:\.{_ATOM}){{0,2}}@{_LABEL}(?:\.{_LABEL}){{0,2}}\Z"
).filter(is_valid_address)


def _header_lines(raw: bytes) -> list[bytes]:
    return raw.split(b"\r\n\r\n", 1)[0].split(b"\r\n")


@settings(max_examples=300, deadline=None)
@given(to=VALID_ADDRESSES, name=st.text(max_size=100))
def test_any_valid_address_with_any_name_composes_and_reads_back(to: str, name: str) -> None:
    raw = build(to=to, to_name=name, sender_name=name)
    assert raw.isascii()
    long_ids = (b"In-Reply-To:", b"References:", b" <")  # ids are never split
    assert all(len(line) <= 78 or line.startswith(long_ids) for line in _header_lines(raw))
    msg = email.message_from_bytes(raw, policy=default)
    header = msg["To"]
    assert not header.defects
    assert [a.addr_spec for a in header.addresses] == [to]
    shown = header.addresses[0].display_name
    # The name as cleaned (adjacent encoded-words of a long name read back with a space
    # between them by the standard library's parser).
    assert shown.replace(" ", "") == clean_name(name, 64).replace(" ", "")
    assert [a.addr_spec for a in msg["From"].addresses] == [f"play@{DOMAIN}"]


@pytest.mark.parametrize("to", ["üser@idn.test", "zoe@exämple.com", "bob@example.com\u202e"])
def test_a_non_ascii_address_is_refused_not_a_crash(to: str) -> None:
    with pytest.raises(ValueError) as refused:
        build(to=to)
    assert type(refused.value) is ValueError  # not UnicodeEncodeError
    assert "not a valid recipient address" in str(refused.value)


def _ew(text: str) -> str:
    return "=?utf-8?b?" + base64.b64encode(text.encode()).decode() + "?="


@pytest.mark.parametrize(
    "name",
    [
        _ew("Evil\r\nBcc: eve@evil.test"),
        "PayPal Security <security@paypal.com>\u202e",
        f"Zoë {_ew('x')}",
        "\u202eAnn\u200b\u2066 \x00\x1b[31m",
    ],
)
def test_a_name_never_reaches_the_to_as_an_encoded_word_or_control(name: str) -> None:
    raw = build(to_name=name)
    msg = email.message_from_bytes(raw, policy=default)
    (address,) = msg["To"].addresses
    assert address.addr_spec == "zoe@example.com"
    assert address.display_name == clean_name(name, 64)
    for bad in ("\r", "\n", "\u202e", "\u200b", "\u2066", "\x00", "\x1b", "=?", "?="):
        assert bad not in address.display_name
    assert msg["Bcc"] is None


def test_a_subject_that_looks_encoded_reads_back_as_written() -> None:
    subject = f"[Cribbage 12] {_ew('Evil')}"
    raw = build(subject=subject)
    assert f"Subject: {subject}".encode() not in raw
    assert email.message_from_bytes(raw, policy=default)["Subject"] == subject
