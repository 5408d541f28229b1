"""Reply keys: making tokens, addresses and Message-IDs, and finding tokens again."""

from __future__ import annotations

import re

import pytest

from pbem.mail.reading import read_message
from pbem.mail.tokens import (
    OurMessageId,
    find_tokens,
    message_id,
    new_token,
    parse_message_id,
    reply_address,
)

DOMAIN = "cribbage.example.org"
T1 = "k5x2ablq7vrm4ysoyhd3"
T2 = "qq3mbxk2v7yzt4ldw5ra"
T3 = "abcdefghijklmnopqrst"


def test_new_token_shape_and_uniqueness() -> None:
    tokens = {new_token() for _ in range(1000)}
    assert len(tokens) == 1000
    for token in tokens:
        assert re.fullmatch(r"[a-z2-7]{20}", token)


def test_reply_address() -> None:
    assert reply_address("play", T1, DOMAIN) == f"play+{T1}@{DOMAIN}"
    for local, token, domain in [
        ("pl+ay", T1, DOMAIN),
        ("play@x", T1, DOMAIN),
        ("", T1, DOMAIN),
        ("play", "NOT A TOKEN", DOMAIN),
        ("play", T1, ""),
        ("play", T1, "a@b"),
    ]:
        with pytest.raises(ValueError):
            reply_address(local, token, domain)


def test_message_id_is_stable_and_parses_back() -> None:
    mid = message_id(T1, 12, 7, DOMAIN)
    assert mid == f"<g12.s7.{T1}@{DOMAIN}>"
    assert message_id(T1, 12, 7, DOMAIN) == mid  # a resend keeps its id
    assert parse_message_id(mid, DOMAIN) == OurMessageId(12, "7", T1)
    dotted = message_id(T1, 3, "p12.help", DOMAIN)
    assert dotted == f"<g3.sp12.help.{T1}@{DOMAIN}>"
    assert parse_message_id(dotted.strip("<>"), DOMAIN.upper()) == OurMessageId(3, "p12.help", T1)


@pytest.mark.parametrize(
    "value",
    [
        "CAHx7u9Q@mail.gmail.com",
        f"g12.s7.{T1}@other.example",
        f"g12.{T1}@{DOMAIN}",
        f"err.5.no-game@{DOMAIN}",
        "",
    ],
)
def test_parse_message_id_rejects_others(value: str) -> None:
    assert parse_message_id(value, DOMAIN) is None


@pytest.mark.parametrize(("seq", "game"), [("a b", 1), ("", 1), (".x", 1), ("x" * 65, 1), (1, -1)])
def test_message_id_rejects_bad_input(seq: str | int, game: int) -> None:
    with pytest.raises(ValueError):
        message_id(T1, game, seq, DOMAIN)


def test_find_tokens_priority() -> None:
    raw = (
        "From: bob@example.com\n"
        f"To: Someone <other@example.com>, PLAY+{T1.upper()}@Cribbage.Example.Org\n"
        f"Cc: play+{T2}@{DOMAIN}, play+{T1}@{DOMAIN}, play@{DOMAIN}\n"
        f"Delivered-To: play+{T3}@{DOMAIN}\n"
        f"X-Original-To: other+{T3}@{DOMAIN}\n"
        f"In-Reply-To: <g9.s1.{T3}@{DOMAIN}>\n"
        f"References: <g9.s1.aaaaaaaaaaaaaaaaaaaa@{DOMAIN}> <x@y>\n"
        f" <g9.s2.bbbbbbbbbbbbbbbbbbbb@{DOMAIN}>\n"
        "\nplay 7c\n"
    ).encode()
    mail = read_message(raw)
    assert find_tokens(mail, "play", DOMAIN) == [
        T1,
        T2,
        T3,
        "bbbbbbbbbbbbbbbbbbbb",  # References newest first
        "aaaaaaaaaaaaaaaaaaaa",
    ]


def test_find_tokens_from_threading_only() -> None:
    raw = (
        "From: bob@example.com\nTo: bob@example.com\n"
        f"References: <g9.s1.{T2}@{DOMAIN}> <g9.s2.{T1}@{DOMAIN}>\n\ngo\n"
    ).encode()
    assert find_tokens(read_message(raw), "play", DOMAIN) == [T1, T2]


def test_find_tokens_none() -> None:
    raw = b"From: bob@example.com\nTo: play@cribbage.example.org\n\ngo\n"
    assert find_tokens(read_message(raw), "play", DOMAIN) == []
