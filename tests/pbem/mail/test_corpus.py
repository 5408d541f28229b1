"""Replies as real clients send them: each .eml in corpus/ beside the reply text we expect."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.mail.reading import read_message
from pbem.mail.tokens import find_tokens

CORPUS = Path(__file__).parent / "corpus"
MESSAGES = sorted(CORPUS.glob("*.eml"))
TOKEN = "k5x2ablq7vrm4ysoyhd3"


def _expected(path: Path) -> str:
    return path.with_suffix(".expected").read_text(encoding="utf-8").rstrip("\n")


def test_corpus_is_complete() -> None:
    assert len(MESSAGES) >= 25
    for path in MESSAGES:
        assert path.with_suffix(".expected").exists(), path.name


@pytest.mark.parametrize("path", MESSAGES, ids=[p.stem for p in MESSAGES])
def test_reply_text(path: Path) -> None:
    mail = read_message(path.read_bytes())
    assert mail.reply_text == _expected(path)


@pytest.mark.parametrize("path", MESSAGES, ids=[p.stem for p in MESSAGES])
def test_replies_are_read_cleanly(path: Path) -> None:
    mail = read_message(
        path.read_bytes(),
        our_addresses={"play@cribbage.example.org"},
        loop_value="cribbage.example.org",
    )
    assert mail.problem is None
    assert mail.auto is None, mail.auto_reason
    assert mail.sender and mail.sender == mail.sender.lower()
    assert mail.message_id and "<" not in mail.message_id
    # our own quoted mail never survives
    assert "Reply with" not in mail.reply_text
    assert "Cribbage by mail" not in mail.reply_text
    assert not any(line.startswith(">") for line in mail.reply_text.splitlines())
    # the reply address and the threading headers both lead back to the seat
    assert find_tokens(mail, "play", "cribbage.example.org") == [TOKEN]


def test_body_keeps_the_quote_reply_text_does_not() -> None:
    mail = read_message((CORPUS / "gmail_toppost_alternative_qp.eml").read_bytes())
    assert "Reply with: play 7♣" in mail.body
    assert mail.reply_text == "play 7c"


def test_suit_symbols_and_variation_selectors_survive() -> None:
    mail = read_message((CORPUS / "base64_suit_variants.eml").read_bytes())
    for symbol in ("♡", "♢", "♤\ufe0f", "♧", "♥\ufe0f"):
        assert symbol in mail.reply_text
