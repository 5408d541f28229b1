"""A received mail is parsed once, when it is stored (`read_received`): what it gives is
what each separate reading finds parsing the bytes again — the stored sender, subject
and Message-ID (`peek_headers`), the mail intake reads (`read_message`) and the
mailboxes the index lists (`named_mailboxes`) — for real clients' replies and for junk."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from pbem.mail.named import NamedMail, named_mailboxes
from pbem.mail.reading import read_message, read_received
from pbem.service.intake import peek_headers
from tests.pbem.test_hostile_fuzz import junk_mail

CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.eml"))
OURS = {"play@cribbage.example.org"}
LOOP = "cribbage.example.org"


def _same_as_reading_again(raw: bytes) -> bool:
    """Whether `read_received` finds what the separate readings find; False when it gave
    up (each reading then parses the bytes itself)."""
    first = read_received(raw, our_addresses=OURS, loop_value=LOOP)
    if first is None:
        return False
    assert isinstance(first.raw, NamedMail) and bytes(first.raw) == raw
    assert (first.sender, first.subject, first.message_id) == peek_headers(raw)
    assert first.mail == read_message(raw, our_addresses=OURS, loop_value=LOOP)
    own = ["Play+Tok@cribbage.example.org"]
    assert named_mailboxes(first.raw, own) == named_mailboxes(raw, own)
    return True


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_a_clients_reply_read_once_reads_as_read_again(path: Path) -> None:
    assert _same_as_reading_again(path.read_bytes())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(junk_mail())
def test_junk_read_once_reads_as_read_again(raw: bytes) -> None:
    if not _same_as_reading_again(raw):
        assert not raw.strip() or read_message(raw).problem is not None


def test_an_empty_mail_is_left_to_each_reading() -> None:
    assert read_received(b"") is None and read_received(b" \r\n") is None
    assert peek_headers(b"") == (None, None, None)
