"""clean_name: names and table talk that anyone may write, as one line of visible text."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.names import NAME_LIMIT, clean_name
from pbem.render.words import clean_name as render_clean_name


@pytest.mark.parametrize(
    ("written", "kept"),
    [
        ("Alice Smith", "Alice Smith"),
        ("  Zoë   Ünal ", "Zoë Ünal"),
        # bidi embeddings, overrides, isolates and marks
        ("moc.lapyap\u202e@Ann", "moc.lapyap@Ann"),
        ("\u202aA\u202bB\u202cC\u202dD\u202eE", "ABCDE"),
        ("\u2066A\u2067B\u2068C\u2069D", "ABCD"),
        ("A\u200eB\u200fC\u061cD", "ABCD"),
        # zero-width and other format characters, blanks that show as nothing
        ("A\u200bn\u200cn\u200d\u2060\ufeff\u00ad", "Ann"),
        ("Ann\U000e0041\U000e007f", "Ann"),
        ("\u3164\u115f\u2800Ann\u034f", "Ann"),
        # controls: whitespace folds to one space, the rest goes
        ("Ann\r\nBcc: eve@evil.test", "Ann Bcc: eve@evil.test"),
        ("Ann\tB\x0bC\x0cD\x85E\u2028F\u2029G", "Ann B C D E F G"),
        ("A\x00n\x07n\x1b[31m\x7f\x9b", "Ann[31m"),
        # RFC 2047 encoded words written as text
        ("=?utf-8?b?RXZpbA0KQmNjOiB4QHk=?=", "utf-8?b?RXZpbA0KQmNjOiB4QHk="),
        ("=?utf-8?q?Bob?= <bob@x.test>", "utf-8?q?Bob <bob@x.test>"),
        ("==??utf-8?q?x??==", "utf-8?q?x"),
        ("=\u200b?utf-8?q?x?\u200b=", "utf-8?q?x"),
        # lone surrogates (undecodable bytes)
        ("Eve\udce9", "Eve"),
        ("\u202e\u200b \r\n", ""),
    ],
)
def test_clean_name(written: str, kept: str) -> None:
    assert clean_name(written, 100) == kept


def test_long_names_are_cut() -> None:
    assert clean_name("n" * 200, NAME_LIMIT) == "n" * (NAME_LIMIT - 1) + "…"
    assert clean_name("Ann", 40) == "Ann"


def test_the_renderers_clean_with_the_same_function() -> None:
    assert render_clean_name is clean_name


@given(st.text(max_size=300), st.integers(min_value=1, max_value=120))
def test_what_is_left_is_one_line_of_visible_text(written: str, limit: int) -> None:
    kept = clean_name(written, limit)
    assert len(kept) <= limit
    assert kept == kept.strip() and "  " not in kept
    assert "=?" not in kept and "?=" not in kept
    for char in kept:
        assert unicodedata.category(char) not in ("Cc", "Cf", "Cs", "Zl", "Zp"), repr(char)
        assert not char.isspace() or char == " "
    assert clean_name(kept, limit) == kept  # cleaning twice changes nothing
