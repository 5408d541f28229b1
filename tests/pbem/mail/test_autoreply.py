"""Machines: bounces from Postfix, Exchange, Gmail and qmail; vacation replies; lists; loops."""

from __future__ import annotations

import email
from pathlib import Path

import pytest

from pbem.mail.autoreply import AutoKind, BounceInfo, bounce_details, classify, message_ids
from pbem.mail.decoding import RAW_POLICY
from pbem.mail.reading import read_message

MACHINES = Path(__file__).parent / "machines"
OURS = {"play@cribbage.example.org"}
LOOP = "cribbage.example.org"


def read(name: str) -> tuple[AutoKind | None, str, BounceInfo | None]:
    mail = read_message((MACHINES / name).read_bytes(), our_addresses=OURS, loop_value=LOOP)
    return mail.auto, mail.auto_reason, mail.bounce


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("postfix_bounce.eml", AutoKind.BOUNCE),
        ("postfix_delayed.eml", AutoKind.BOUNCE),
        ("exchange_ndr.eml", AutoKind.BOUNCE),
        ("gmail_dsn.eml", AutoKind.BOUNCE),
        ("qmail_failure.eml", AutoKind.BOUNCE),
        ("gmail_vacation.eml", AutoKind.AUTO_REPLY),
        ("exchange_oof.eml", AutoKind.AUTO_REPLY),
        ("german_oof_subject_only.eml", AutoKind.AUTO_REPLY),
        ("french_oof_subject_only.eml", AutoKind.AUTO_REPLY),
        ("sieve_vacation.eml", AutoKind.AUTO_REPLY),
        ("yandex_autoreply.eml", AutoKind.AUTO_REPLY),
        ("read_receipt.eml", AutoKind.AUTO_REPLY),
        ("mailing_list.eml", AutoKind.LIST),
        ("human_auto_submitted_no.eml", None),
    ],
)
def test_kind(name: str, kind: AutoKind | None) -> None:
    found, reason, bounce = read(name)
    assert found == kind, reason
    assert bool(reason) == (kind is not None)
    assert (bounce is not None) == (kind == AutoKind.BOUNCE)


@pytest.mark.parametrize(
    ("name", "recipients", "original_id", "status"),
    [
        (
            "postfix_bounce.eml",
            ("nobody@example.net",),
            "g12.s7.k5x2ablq7vrm4ysoyhd3@cribbage.example.org",
            "5.1.1",
        ),
        (
            "exchange_ndr.eml",
            ("dave@contoso.example",),
            "g12.s9.k5x2ablq7vrm4ysoyhd3@cribbage.example.org",
            "5.1.10",
        ),
        (
            "gmail_dsn.eml",
            ("nobody.here.123@gmail.com",),
            "g12.s3.zzyyxxwwvvuuttssrrqq@cribbage.example.org",
            "5.1.1",
        ),
        (
            "qmail_failure.eml",
            ("olduser@example.com",),
            "g12.s5.abcdefghijklmnopqrst@cribbage.example.org",
            None,
        ),
    ],
)
def test_bounce_details(
    name: str, recipients: tuple[str, ...], original_id: str, status: str | None
) -> None:
    _, _, bounce = read(name)
    assert bounce is not None
    assert bounce.recipients == recipients
    assert bounce.original_message_id == original_id
    assert bounce.status == status
    assert bounce.permanent
    assert bounce.delayed == ()


def test_postfix_diagnostic_is_unfolded() -> None:
    _, _, bounce = read("postfix_bounce.eml")
    assert bounce is not None and bounce.action == "failed"
    assert bounce.diagnostic == (
        "smtp; 550 5.1.1 <nobody@example.net>: Recipient address rejected: "
        "User unknown in virtual mailbox table"
    )


def test_delay_warning_is_not_a_failure() -> None:
    _, _, bounce = read("postfix_delayed.eml")
    assert bounce is not None
    assert bounce.recipients == ()
    assert bounce.delayed == ("slow@example.com",)
    assert not bounce.permanent
    assert bounce.status == "4.4.1"
    assert bounce.original_message_id == "g14.s1.qq3mbxk2v7yzt4ldw5ra@cribbage.example.org"


def test_embedded_loop_header_does_not_make_a_bounce_a_loop() -> None:
    # the Postfix bounce carries our message, X-PBEM-Loop included, in its body
    kind, _, _ = read("postfix_bounce.eml")
    assert kind == AutoKind.BOUNCE


def _msg(headers: str, body: str = "play 7c\n") -> email.message.Message:
    return email.message_from_bytes((headers + "\n" + body).encode(), policy=RAW_POLICY)


@pytest.mark.parametrize(
    ("headers", "kind"),
    [
        ("From: play@cribbage.example.org\n", AutoKind.LOOP),
        ("From: PLAY+k5x2ablq7vrm4ysoyhd3@Cribbage.Example.org\n", AutoKind.LOOP),
        ("From: bob@example.com\nX-PBEM-Loop: cribbage.example.org\n", AutoKind.LOOP),
        ("From: bob@example.com\nX-PBEM-Loop: other.example\n", None),
        ("From: bob@example.com\nAuto-Submitted: auto-generated\n", AutoKind.AUTO_REPLY),
        ("From: bob@example.com\nAuto-Submitted: No\n", None),
        ("From: bob@example.com\nX-Autorespond: yes\n", AutoKind.AUTO_REPLY),
        ("From: bob@example.com\nPrecedence: junk\n", AutoKind.AUTO_REPLY),
        ("From: bob@example.com\nPrecedence: bulk\n", AutoKind.AUTO_REPLY),
        ("From: bob@example.com\nPrecedence: list\n", AutoKind.LIST),
        ("From: bob@example.com\nList-Unsubscribe: <mailto:u@x>\n", AutoKind.LIST),
        ("From: bob@example.com\nReturn-Path: <>\n", AutoKind.BOUNCE),
        ("From: bob@example.com\nReturn-Path: <bob@example.com>\n", None),
        ("From: postmaster@example.com\n", AutoKind.BOUNCE),
        ("From: Mail Delivery System <mail@example.com>\n", AutoKind.BOUNCE),
        ("From: bob@example.com\nX-Failed-Recipients: a@x\n", AutoKind.BOUNCE),
        ("From: bob@example.com\nSubject: Out of Office: [Cribbage 1] x\n", AutoKind.AUTO_REPLY),
        ("From: bob@example.com\nSubject: Automatic reply: x\n", AutoKind.AUTO_REPLY),
        ("From: bob@example.com\nSubject: Autoreply: x\n", AutoKind.AUTO_REPLY),
        ("From: bob@example.com\nSubject: Auto-Reply: x\n", AutoKind.AUTO_REPLY),
        ("From: bob@example.com\nSubject: Respuesta automática: x\n", AutoKind.AUTO_REPLY),
        ("From: bob@example.com\nSubject: Risposta automatica: x\n", AutoKind.AUTO_REPLY),
        ("From: bob@example.com\nSubject: Automatisch antwoord: x\n", AutoKind.AUTO_REPLY),
        ("From: bob@example.com\nSubject: Autosvar: x\n", AutoKind.AUTO_REPLY),
        ("From: bob@example.com\nSubject: Undeliverable: x\n", AutoKind.BOUNCE),
        ("From: bob@example.com\nSubject: Re: [Cribbage 12] Your turn\n", None),
        ("From: bob@example.com\nSubject: Re: play 7c, then I'm out\n", None),
        ("From: bob@example.com\nSubject: Re: office hours\n", None),
    ],
)
def test_classify_headers(headers: str, kind: AutoKind | None) -> None:
    found, reason = classify(_msg(headers), _sender(headers), OURS, LOOP)
    assert found == kind, reason


def _sender(headers: str) -> str:
    from pbem.mail.address import normalize_address

    line = next(h for h in headers.splitlines() if h.startswith("From:"))
    return normalize_address(line[5:])


def test_without_a_loop_value_any_loop_header_counts() -> None:
    msg = _msg("From: bob@example.com\nX-PBEM-Loop: other.example\n")
    assert classify(msg, "bob@example.com", set(), "")[0] == AutoKind.LOOP


def test_bounce_details_of_non_bounce_is_empty() -> None:
    info = bounce_details(_msg("From: bob@example.com\n"))
    assert info == BounceInfo()
    assert not info.permanent


def test_bounce_without_dsn_uses_x_failed_recipients_and_in_reply_to() -> None:
    msg = _msg(
        "From: MAILER-DAEMON@mx.example\nX-Failed-Recipients: Gone@Example.com, b@x.org\n"
        "In-Reply-To: <g1.s2.abcdefghijklmnopqrst@cribbage.example.org>\n",
        "Mail delivery failed.\n",
    )
    info = bounce_details(msg)
    assert info.recipients == ("gone@example.com", "b@x.org")
    assert info.original_message_id == "g1.s2.abcdefghijklmnopqrst@cribbage.example.org"


def test_message_ids() -> None:
    assert message_ids("<a@x> (comment) <b@y>\n <a@x>") == ["a@x", "b@y"]
    assert message_ids("a@x b@y none") == ["a@x", "b@y"]
    assert message_ids("") == [] and message_ids(None) == []
