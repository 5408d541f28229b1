"""Addresses strangers write, through the flow: a non-ASCII address is refused with a
reason where it is read — never a crash when a mail to it is composed."""

from __future__ import annotations

import email
from email.policy import default

import pytest
from sqlmodel import Session, select

from pbem.service import intake
from pbem.service.flow import handle
from pbem.store import models as m
from pbem.store.db import session_scope
from pbem.store.inbound import insert_inbound_many, message_key
from tests.pbem.service.desk import NOW, Desk

ANN = "ann@play.example"


def run(desk: Desk, inbound_id: int) -> tuple[str, str]:
    with Session(desk.ctx.db) as session:
        row = session.get(m.Inbound, inbound_id)
        assert row is not None
        outcome = handle(desk.ctx, session, row)
        session.commit()
        return outcome.status, outcome.reason


def outbox(desk: Desk) -> list[m.Outbox]:
    with Session(desk.ctx.db) as session:
        rows = Desk.outbox(session)
        for row in rows:
            session.expunge(row)
        return rows


@pytest.mark.parametrize("invitee", ["üser@idn.test", "Zoë@Exämple.com"])
def test_a_challenge_to_a_non_ascii_address_is_answered_not_quarantined(
    desk: Desk, invitee: str
) -> None:
    desk.new_game()  # Ann plays already: she may challenge
    before = len(outbox(desk))
    status, reason = run(desk, desk.store(ANN, f"challenge {invitee}"))
    assert status == "rejected", reason
    assert f"{invitee.lower()}: only plain ASCII addresses can be invited" in reason
    with Session(desk.ctx.db) as session:
        assert session.exec(select(m.Invitation)).all() == []
    new = outbox(desk)[before:]
    assert [row.recipient for row in new] == [ANN]  # the answer, to the challenger alone
    told = email.message_from_bytes(new[0].raw, policy=default)
    body = told.get_body(("plain",))
    assert body is not None
    assert "only plain ASCII addresses can be invited" in " ".join(body.get_content().split())


def test_an_international_domain_in_its_ascii_form_is_invited(desk: Desk) -> None:
    desk.new_game()
    status, reason = run(desk, desk.store(ANN, "challenge user@xn--bcher-kva.example"))
    assert status != "failed", reason
    assert "only plain ASCII" not in reason


def store_raw(desk: Desk, raw: bytes) -> int:
    """``raw`` stored as the transport stores it (headers in UTF-8, as SMTPUTF8 mail
    arrives); its inbound id."""
    peeked_sender, subject, msg_id = intake.peek_headers(raw)
    with session_scope(desk.ctx.db) as session:
        row = (raw, "test", message_key(raw, msg_id), peeked_sender, subject)
        [(inbound_id, _)] = insert_inbound_many(session, [row], now=NOW)
    return inbound_id


@pytest.mark.parametrize("sender", ["üser@idn.test", "Üser <üser@play.example>"])
def test_mail_from_a_non_ascii_address_is_ignored_with_the_reason(desk: Desk, sender: str) -> None:
    desk.new_game()
    before = len(outbox(desk))
    raw = (
        f"From: {sender}\r\nTo: {desk.ctx.settings.address}\r\nSubject: hi\r\n"
        "Message-ID: <utf8-from@idn.test>\r\nContent-Type: text/plain; charset=utf-8\r\n"
        "\r\nnew\r\n"
    ).encode()
    status, reason = run(desk, store_raw(desk, raw))
    assert (status, reason) == ("ignored", "the From address is not a plain address")
    assert len(outbox(desk)) == before
