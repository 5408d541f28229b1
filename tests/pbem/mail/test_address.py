"""Addresses: normalizing and validating."""

from __future__ import annotations

import pytest

from pbem.mail.address import from_mailbox, is_valid_address, normalize_address, parse_addresses


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("bob@example.com", "bob@example.com"),
        ("  Bob@Example.COM ", "bob@example.com"),
        ("Bob Smith <Bob@Example.com>", "bob@example.com"),
        ('"Smith, Bob" <bob@example.com>', "bob@example.com"),
        ("<bob@example.com>", "bob@example.com"),
        ("bob@example.com (Bob)", "bob@example.com"),
        ("MAILER-DAEMON", "mailer-daemon"),
        ("", ""),
        (None, ""),
        ("not an address", ""),
        ("<>", ""),
    ],
)
def test_normalize_address(value: str | None, expected: str) -> None:
    assert normalize_address(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "bob@example.com",
        "bob.smith+cribbage@mail.example.co.uk",
        "o'hara@example.ie",
        "alice@localhost",
        "a@b-c.example",
        "user@xn--bcher-kva.example",  # an international domain, in its ASCII form
    ],
)
def test_valid(value: str) -> None:
    assert is_valid_address(value)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "bob",
        "@example.com",
        "bob@",
        "bob@@example.com",
        "Bob <bob@example.com>",
        " bob@example.com",
        "bob smith@example.com",
        "bob..smith@example.com",
        ".bob@example.com",
        "bob@example..com",
        "bob@-example.com",
        "bob@example.com,eve@example.com",
        '"bob"@example.com',
        "bob@[192.0.2.1]",
        "x" * 65 + "@example.com",
        "bob@" + "a" * 64 + ".com",
        "bob@example.com\n",
        # Only plain ASCII: no header of ours could carry these (nor SMTP without SMTPUTF8).
        "zoë@example.com",
        "user@bücher.example",
        "üser@idn.test",
        "bob@example.com\u202e",
        "bob\u200b@example.com",
    ],
)
def test_invalid(value: str) -> None:
    assert not is_valid_address(value)


def test_parse_addresses_decodes_names_after_splitting() -> None:
    values = ["=?utf-8?q?Smith=2C_Bob?= <Bob@x.org>, carol@y.org", "bob@x.org"]
    assert parse_addresses(values) == [("Smith, Bob", "bob@x.org"), ("", "carol@y.org")]


@pytest.mark.parametrize("value", ["üser@idn.test", "Üser <üser@idn.test>", "a@bücher.example"])
def test_a_from_with_a_non_ascii_address_is_no_sender(value: str) -> None:
    assert from_mailbox([value]) == ("", "", "the From address is not a plain address")


def test_a_from_with_a_punycode_domain_is_a_sender() -> None:
    assert from_mailbox(["Ann <ann@xn--bcher-kva.example>"]) == (
        "Ann",
        "ann@xn--bcher-kva.example",
        None,
    )
