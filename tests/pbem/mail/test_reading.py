"""read_message: headers, bodies, problems; and clean_subject."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.mail.reading import IncomingMail, clean_subject, read_message
from pbem.names import NAME_LIMIT

HEADERS = (
    "Return-Path: <Bob.Smith@Gmail.com>\n"
    "Delivered-To: play+k5x2ablq7vrm4ysoyhd3@cribbage.example.org\n"
    "X-Original-To: Play+K5X2ABLQ7VRM4YSOYHD3@cribbage.example.org\n"
    'From: "Smith, Bob" <Bob.Smith@Gmail.com>\n'
    "Reply-To: Bob <bob@example.net>\n"
    "To: Cribbage <play+k5x2ablq7vrm4ysoyhd3@cribbage.example.org>, carol@example.com\n"
    "Cc: =?utf-8?q?Zo=C3=AB=2C_the_judge?= <zoe@example.com>,\n dave@example.com\n"
    "Subject: =?utf-8?q?Re=3A_=5BCribbage_12=5D_Your_turn_=E2=80=94_play_7=E2=99=A3?=\n"
    "Date: Mon, 1 Jan 2024 10:05:03 +0000\n"
    "Message-ID: < CAHx7u9Q@mail.gmail.com >\n"
    "In-Reply-To: <g12.s7.k5x2ablq7vrm4ysoyhd3@cribbage.example.org> (Cribbage's message)\n"
    "References: <g12.s1.k5x2ablq7vrm4ysoyhd3@cribbage.example.org>\n"
    "\t<g12.s7.k5x2ablq7vrm4ysoyhd3@cribbage.example.org>\n"
)


def read(body: str = "play 7c\n", headers: str = HEADERS, **kwargs: object) -> IncomingMail:
    return read_message((headers + "\n" + body).encode(), **kwargs)  # type: ignore[arg-type]


def test_headers() -> None:
    mail = read()
    assert mail.message_id == "CAHx7u9Q@mail.gmail.com"
    assert mail.sender == "bob.smith@gmail.com"
    assert mail.sender_name == "Smith, Bob"
    assert mail.reply_to == "bob@example.net"
    assert mail.to == ("play+k5x2ablq7vrm4ysoyhd3@cribbage.example.org", "carol@example.com")
    assert mail.cc == ("zoe@example.com", "dave@example.com")
    assert mail.delivered_to == ("play+k5x2ablq7vrm4ysoyhd3@cribbage.example.org",)
    assert mail.original_to == ("play+k5x2ablq7vrm4ysoyhd3@cribbage.example.org",)
    assert mail.return_path == "bob.smith@gmail.com"
    assert mail.subject == "Re: [Cribbage 12] Your turn — play 7♣"
    assert mail.in_reply_to == ("g12.s7.k5x2ablq7vrm4ysoyhd3@cribbage.example.org",)
    assert mail.references == (
        "g12.s1.k5x2ablq7vrm4ysoyhd3@cribbage.example.org",
        "g12.s7.k5x2ablq7vrm4ysoyhd3@cribbage.example.org",
    )
    assert mail.date == datetime(2024, 1, 1, 10, 5, 3, tzinfo=UTC)
    assert mail.body == "play 7c\n"
    assert mail.reply_text == "play 7c"
    assert mail.auto is None and mail.bounce is None and mail.problem is None


def test_is_frozen() -> None:
    mail = read()
    with pytest.raises(AttributeError):
        mail.sender = "eve@example.com"  # type: ignore[misc]


def test_missing_headers() -> None:
    mail = read(headers="From: bob@example.com\n")
    assert mail.message_id is None
    assert mail.subject == ""
    assert mail.date is None
    assert mail.to == () and mail.in_reply_to == () and mail.references == ()
    assert mail.reply_to is None and mail.return_path is None
    assert mail.problem is None


def test_bad_date_and_ids() -> None:
    mail = read(
        headers="From: bob@example.com\nDate: yesterday-ish\nMessage-ID: bare-id@x\n"
        "References: a@x b@y junk\n"
    )
    assert mail.date is None
    assert mail.message_id == "bare-id@x"
    assert mail.references == ("a@x", "b@y")


def test_display_name_with_8bit_and_encoded_words() -> None:
    raw = "From: Zoë Ünal <zoe@example.com>\nSubject: café\n\ngo\n".encode()
    mail = read_message(raw)
    assert (mail.sender_name, mail.sender, mail.subject) == ("Zoë Ünal", "zoe@example.com", "café")


@pytest.mark.parametrize(
    ("from_header", "name"),
    [
        # Encoded controls, decoded by the header parser: whitespace folds, the rest goes.
        ("=?utf-8?b?RXZpbAtCY2M6CWV2ZRtbMG0=?= <zoe@example.com>", "Evil Bcc: eve[0m"),
        # An encoded word inside the encoded word: its markers go.
        ("=?utf-8?q?=3D=3Futf-8=3Fq=3FBob=3F=3D?= <zoe@example.com>", "utf-8?q?Bob"),
        # Bidi overrides, zero-width and invisible characters go.
        ("=?utf-8?q?PayPal_Security=E2=80=AE=E2=80=8B?= <zoe@example.com>", "PayPal Security"),
        ("=?utf-8?q?=E3=85=A4?= <zoe@example.com>", ""),
    ],
)
def test_the_display_name_is_cleaned_where_it_is_read(from_header: str, name: str) -> None:
    mail = read_message(f"From: {from_header}\nSubject: x\n\ngo\n".encode())
    assert (mail.sender_name, mail.sender) == (name, "zoe@example.com")


def test_an_encoded_line_break_in_the_display_name_is_no_sender_not_a_crash() -> None:
    raw = b"From: =?utf-8?b?RXZpbA0KQmNjOiBldmVAZXZpbC50ZXN0?= <zoe@example.com>\n\ngo\n"
    mail = read_message(raw)
    assert mail.sender == "" and mail.problem is not None and "From" in mail.problem


def test_a_display_name_is_cut_to_the_name_limit() -> None:
    mail = read_message(f"From: {'N' * 300} <zoe@example.com>\n\ngo\n".encode())
    assert len(mail.sender_name) == NAME_LIMIT and mail.sender_name.endswith("…")


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"", "empty message"),
        (b"   \r\n", "empty message"),
        (b"no headers at all, just words", "no sender address"),
        (b"From: bob@example.com\n\n", "no readable text body"),
        (b"Subject: x\n\n", "no sender address; no readable text body"),
        (
            b"From: bob@example.com\nContent-Type: application/octet-stream\n\n\x00\x01",
            "no readable text body",
        ),
    ],
)
def test_problems(raw: bytes, problem: str) -> None:
    assert read_message(raw).problem == problem


def test_broken_mime_still_reads() -> None:
    raw = (
        b"From: bob@example.com\nContent-Type: multipart/alternative; boundary=nope\n\n"
        b"--other\nContent-Type: text/plain\n\nplay 7c\n"
    )
    mail = read_message(raw)
    assert "play 7c" in mail.body


def test_bad_base64_and_qp() -> None:
    raw = (
        b"From: bob@example.com\nContent-Type: text/plain; charset=utf-8\n"
        b"Content-Transfer-Encoding: base64\n\ncGxheSA3Yw=\n!!!\n"
    )
    assert read_message(raw).problem is None
    raw = (
        b"From: bob@example.com\nContent-Type: text/plain; charset=utf-8\n"
        b"Content-Transfer-Encoding: quoted-printable\n\nplay 5=E2=99=A5=\n and =ZZ go\n"
    )
    assert read_message(raw).reply_text == "play 5♥ and =ZZ go"


def test_html_only_and_attachments_ignored() -> None:
    raw = (
        b"From: bob@example.com\nContent-Type: multipart/mixed; boundary=b\n\n"
        b"--b\nContent-Type: text/html; charset=utf-8\n\n<p>play <b>7&clubs;</b></p>\n"
        b"--b\nContent-Type: text/plain; name=notes.txt\nContent-Disposition: attachment;"
        b" filename=notes.txt\n\nplay 9h\n"
        b"--b\nContent-Type: message/rfc822\n\nFrom: x@y\n\nplay 2s\n"
        b"--b--\n"
    )
    assert read_message(raw).reply_text == "play 7♣"


def test_crlf_message() -> None:
    raw = (HEADERS + "\nplay 7c\n\n" + "> Reply with: go\n").replace("\n", "\r\n").encode()
    mail = read_message(raw)
    assert mail.reply_text == "play 7c"
    assert mail.subject == "Re: [Cribbage 12] Your turn — play 7♣"


def test_auto_is_filled() -> None:
    mail = read(headers=HEADERS + "Auto-Submitted: auto-replied\n")
    assert mail.auto is not None and mail.auto.value == "auto_reply"
    assert "auto-replied" in mail.auto_reason


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_on_garbage(raw: bytes) -> None:
    assert isinstance(read_message(raw), IncomingMail)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=500), st.text(max_size=500))
def test_never_raises_on_odd_text(headers: str, body: str) -> None:
    raw = f"From: {headers}\nSubject: {headers}\nContent-Type: {headers}\n\n{body}".encode(
        "utf-8", "surrogatepass"
    )
    assert isinstance(read_message(raw), IncomingMail)


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("play 7♣", "play 7♣"),
        ("Re: play 7c", "play 7c"),
        ("RE: Re: re:  go", "go"),
        ("Re: [Cribbage 12] Your turn — the count is 15", "Your turn — the count is 15"),
        ("Re: AW: [Cribbage 12] Re: play 7♣", "play 7♣"),
        ("Fwd: FW: WG: Fw: muggins", "muggins"),
        ("AW: SV: VS: Antw: R: TR: RE[2]: Re(3): Re^2: Odp: count 12", "count 12"),
        ("[cribbage 3] discard 5h jd", "discard 5h jd"),
        ("[Cribbage] help", "help"),
        ("Ｒe：x", "Ｒe：x"),
        ("Réf : go", "go"),
        ("", ""),
        ("Re:", ""),
        ("Reply with: play 7c", "Reply with: play 7c"),
        ("Relax, play 7c", "Relax, play 7c"),
        ("  spaced   out  ", "spaced out"),
    ],
)
def test_clean_subject(subject: str, expected: str) -> None:
    assert clean_subject(subject) == expected
