"""Settings by mail through the flow: ``name`` (cleaned, and never breaking the player's
own To) and ``start`` (only the setting that undoes ``stop``: it starts no game)."""

from __future__ import annotations

import base64
import email
from email.policy import default

import pytest
from sqlmodel import Session, func, select

from pbem.service.flow import handle
from pbem.store import models as m
from tests.pbem.service.desk import Desk

ANN = "ann@play.example"


def run(desk: Desk, inbound_id: int) -> tuple[str, str]:
    with Session(desk.ctx.db) as session:
        row = session.get(m.Inbound, inbound_id)
        assert row is not None
        outcome = handle(desk.ctx, session, row)
        session.commit()
        return outcome.status, outcome.reason


def _ew(text: str) -> str:
    return "=?utf-8?b?" + base64.b64encode(text.encode()).decode() + "?="


def ann(desk: Desk) -> m.Player:
    with Session(desk.ctx.db) as session:
        player = session.exec(select(m.Player).where(m.Player.email == ANN)).one()
        session.expunge(player)
        return player


def mails_to(desk: Desk, address: str) -> list[email.message.EmailMessage]:
    with Session(desk.ctx.db) as session:
        rows = Desk.outbox(session)
        return [
            email.message_from_bytes(r.raw, policy=default) for r in rows if r.recipient == address
        ]


HOSTILE_NAMES = [
    _ew("Evil\r\nBcc: eve@evil.test"),
    _ew("Evil") + "\u202e",
    "Ann\u202e\u2066\u200b Lee\u200f",
    "=?utf-8?q?Bob?= \x00\x1b[31m",
    "\u3164\u200b",
    "PayPal Security <security@paypal.com>\u202e",
]


def test_after_any_name_the_players_mails_have_a_to_of_exactly_their_address(
    desk: Desk,
) -> None:
    game_id = desk.new_game()
    token = desk.token(game_id, 0)
    for name in HOSTILE_NAMES:
        status, _ = run(desk, desk.store(ANN, f"name {name}\nhand", token))
        assert status in ("applied", "rejected")
        stored = ann(desk).display_name or ""
        for bad in ("\r", "\n", "\u202e", "\u2066", "\u200b", "\u200f", "\x00", "=?", "?="):
            assert bad not in stored, (name, stored)
    mails = mails_to(desk, ANN)
    assert len(mails) > len(HOSTILE_NAMES)  # each "hand" was answered
    for msg in mails:
        header = msg["To"]
        assert not header.defects, (str(header), header.defects)
        assert [a.addr_spec for a in header.addresses] == [ANN]
        assert "\n" not in header.addresses[0].display_name
        assert msg["Bcc"] is None


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        (_ew("Evil\r\nBcc: eve@evil.test"), "utf-8?b?RXZpbA0KQmNjOiBldmVAZXZpbC50ZXN0"),
        ("Ann\u202e\u2066\u200b Lee\u200f", "Ann Lee"),
        ("  Ann\t \tLee  ", "Ann Lee"),
    ],
)
def test_name_is_stored_cleaned(desk: Desk, written: str, stored: str) -> None:
    game_id = desk.new_game()
    status, reason = run(desk, desk.store(ANN, f"name {written}", desk.token(game_id, 0)))
    assert status == "applied", reason
    assert ann(desk).display_name == stored


@pytest.mark.parametrize(
    "written", ["\u200b\u202e", "=??=", "bob@evil.test", "Bob <bob@evil.test>"]
)
def test_a_name_of_nothing_visible_or_an_address_is_refused(desk: Desk, written: str) -> None:
    game_id = desk.new_game()
    status, _ = run(desk, desk.store(ANN, f"name {written}", desk.token(game_id, 0)))
    assert status == "rejected"
    assert ann(desk).display_name == "Ann"


def confirm(desk: Desk, held: tuple[str, str]) -> tuple[str, str]:
    """A setting to the plain address is proven by its From alone: it is held until
    ANN answers the one confirmation request it earned; her answer is read."""
    status, reason = held
    assert status == "applied", reason
    assert reason.endswith(f": held until {ANN} confirms (confirmation request sent)")
    assert mails_to(desk, ANN)[-1]["Subject"] == "[Cribbage] Please confirm your request"
    with Session(desk.ctx.db) as session:
        token = session.exec(
            select(m.Confirmation.token).where(
                m.Confirmation.mailbox == ANN,
                m.Confirmation.status == m.ConfirmationStatus.PENDING.value,
            )
        ).one()
    return run(desk, desk.store(ANN, "yes", token))


def test_start_to_the_plain_address_undoes_stop_and_starts_no_game(desk: Desk) -> None:
    desk.new_game()
    held = run(desk, desk.store(ANN, "stop"))
    assert not ann(desk).stopped  # not before ANN confirms
    status, reason = confirm(desk, held)
    assert status == "applied", reason
    assert ann(desk).stopped
    with Session(desk.ctx.db) as session:
        games = session.exec(select(func.count()).select_from(m.Game)).one()
    held = run(desk, desk.store(ANN, "start"))
    assert ann(desk).stopped
    status, reason = confirm(desk, held)
    assert status == "applied", reason
    assert not ann(desk).stopped
    with Session(desk.ctx.db) as session:
        assert session.exec(select(func.count()).select_from(m.Game)).one() == games
