"""Charsets, encoded words, format=flowed and HTML: lenient, never raising."""

from __future__ import annotations

import email
from email.message import Message

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.mail.decoding import (
    RAW_POLICY,
    decode_bytes,
    decode_rfc2047,
    header_text,
    html_to_text,
    part_text,
    unflow,
)


@pytest.mark.parametrize(
    ("data", "charset", "expected"),
    [
        (b"play 7c", None, "play 7c"),
        ("5♥".encode(), "utf-8", "5♥"),
        ("5♥".encode(), None, "5♥"),  # missing declaration
        ("5♥".encode(), "iso-8859-1", "5♥"),  # wrong declaration: valid UTF-8 wins
        ("5♥".encode(), "us-ascii", "5♥"),
        ("très".encode("latin-1"), "iso-8859-1", "très"),
        ("très".encode("latin-1"), "utf-8", "très"),  # mislabelled Latin-1
        ("très".encode("latin-1"), None, "très"),
        ("“go” – I’m out".encode("cp1252"), "iso-8859-1", "“go” – I’m out"),  # 1252 as Latin-1
        ("“go”".encode("cp1252"), "windows-1252", "“go”"),
        ("très".encode("latin-1"), "x-no-such-charset", "très"),
        ("5♥".encode(), "x-no-such-charset", "5♥"),
        ("žluťoučký".encode("iso-8859-2"), "iso-8859-2", "žluťoučký"),
        ("Привет".encode("koi8-r"), "koi8-r", "Привет"),
        ("トランプ".encode("shift_jis"), "shift_jis", "トランプ"),
        (b"\x81\x8d", "cp1252", "\x81\x8d"),  # the holes in 1252 fall back to Latin-1
        ("go".encode("utf-16-le"), "utf-16-le", "go"),
        ("5♥".encode("utf-16"), "utf-16", "5♥"),
    ],
)
def test_decode_bytes(data: bytes, charset: str | None, expected: str) -> None:
    assert decode_bytes(data, charset) == expected


@given(st.binary(), st.sampled_from([None, "utf-8", "iso-8859-1", "bogus", "shift_jis", "utf-16"]))
def test_decode_bytes_never_raises(data: bytes, charset: str | None) -> None:
    assert isinstance(decode_bytes(data, charset), str)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain", "plain"),
        ("=?utf-8?q?play_7=E2=99=A3?=", "play 7♣"),
        ("=?UTF-8?B?cGxheSA34pmj?=", "play 7♣"),
        ("Re: =?utf-8?q?caf=C3=A9?= ok", "Re: café ok"),
        ("=?utf-8?q?a?= =?utf-8?q?b?=", "ab"),  # whitespace between words is dropped
        ("=?utf-8?q?a?=\r\n =?utf-8?q?b?=", "ab"),
        ("=?utf-8?q?a?= b", "a b"),
        ("=?utf-8?b?4pk=?==?utf-8?b?pQ==?=", "♥"),  # a character split over two words
        ("=?utf-8?b?4pml?", "=?utf-8?b?4pml?"),  # not an encoded word
        ("=?utf-8?b?4pml?=", "♥"),
        ("=?utf-8?b?4pm?=", "\u2619"[0:0] + decode_bytes(b"\xe2\x99", "utf-8")),  # bad padding
        ("=?x-unknown?q?caf=E9?=", "café"),
        ("=?iso-8859-1?q?Ren=E9e?=", "Renée"),
        ("=?utf-8*en?q?hi?=", "hi"),
        ("=?utf-8?b?!!!?=", ""),
    ],
)
def test_decode_rfc2047(value: str, expected: str) -> None:
    assert decode_rfc2047(value) == expected


def test_raw_8bit_headers_are_decoded() -> None:
    raw = "Subject: café 5♥\n\nx\n".encode()
    msg = email.message_from_bytes(raw, policy=RAW_POLICY)
    assert header_text(msg, "Subject") == "café 5♥"
    latin = email.message_from_bytes("Subject: café\n\nx\n".encode("latin-1"), policy=RAW_POLICY)
    assert header_text(latin, "Subject") == "café"


def test_raw_8bit_headers_from_a_compat32_message() -> None:
    msg = email.message_from_bytes("Subject: café 5♥\n\nx\n".encode())
    assert header_text(msg, "Subject") == "café 5♥"


def test_unflow() -> None:
    text = "play 7c and then \nI will say go\n> quoted \n> line\n-- \nsig"
    assert unflow(text) == "play 7c and then I will say go\n> quoted line\n-- \nsig"
    assert unflow(" From the start") == "From the start"  # space-stuffing
    assert unflow("joined \nword", delsp=True) == "joinedword"


def test_format_flowed_part() -> None:
    raw = b"Content-Type: text/plain; charset=utf-8; format=flowed\n\nplay 7c and \nthen go\n"
    part = email.message_from_bytes(raw, policy=RAW_POLICY)
    assert part_text(part) == "play 7c and then go\n"


def test_html_charset_from_meta() -> None:
    raw = (
        b"Content-Type: text/html\n\n"
        b'<html><head><meta charset="windows-1252"></head><body>\x93go\x94</body></html>'
    )
    part: Message = email.message_from_bytes(raw, policy=RAW_POLICY)
    assert "“go”" in part_text(part)


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<p>play 7&#9827;</p>", "play 7♣"),
        ("<div>5&hearts; <b>7&#9827;</b></div>", "5♥ 7♣"),
        ("<div>1. go</div><div>- muggins</div>", "1. go\n- muggins"),
        ("<p>a</p><blockquote><p>Reply with: go</p></blockquote>", "a\n> Reply with: go"),
        (
            "<p>see <a href='https://x.example'>the rules</a><img src='x.png' alt='logo'></p>",
            "see the rules",
        ),
        ("<p>5&#9829;&#65039;&nbsp;ok</p>", "5♥\ufe0f ok"),
        ("<table><tr><td>go</td></tr></table>", "go"),
        ("<p>unclosed <b>tags <i>everywhere", "unclosed tags everywhere"),
    ],
)
def test_html_to_text(html: str, expected: str) -> None:
    assert html_to_text(html) == expected


@given(st.text())
def test_html_to_text_never_raises(html: str) -> None:
    assert isinstance(html_to_text(html), str)
