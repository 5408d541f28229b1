"""intake alone: a stored mail → a known sender and game, or its final state."""

from __future__ import annotations

from sqlmodel import Session, select

from pbem.service import intake
from pbem.service.context import Outcome
from pbem.service.moves import Known
from pbem.store import models as m
from tests.pbem.service.desk import NOW, Desk

ANN, BOB = "ann@play.example", "bob@play.example"


def identify(desk: Desk, session: Session, inbound_id: int) -> Known | Outcome:
    row = session.get(m.Inbound, inbound_id)
    assert row is not None
    return intake.identify(desk.ctx, session, row, NOW)


def test_a_reply_with_its_seats_token_is_known_with_its_commands(desk: Desk) -> None:
    game_id = desk.new_game()
    inbound_id = desk.store(ANN, "hand\nhistory", desk.token(game_id, 0))
    with Session(desk.ctx.db) as session:
        known = identify(desk, session, inbound_id)
        assert isinstance(known, Known)
        assert (known.game_row.id, known.seat, known.sender) == (game_id, 0, ANN)
        assert [c.verb for c in known.commands] == ["hand", "history"]
        assert not known.tokenless
        assert session.get(m.Inbound, inbound_id).status == "pending"  # type: ignore[union-attr]


def test_an_auto_reply_ends_ignored_and_unanswered(desk: Desk) -> None:
    game_id = desk.new_game()
    inbound_id = desk.store(ANN, "I am away", desk.token(game_id, 0), Auto_Submitted="auto-replied")
    with Session(desk.ctx.db) as session:
        before = len(desk.outbox(session))
        outcome = identify(desk, session, inbound_id)
        assert isinstance(outcome, Outcome) and outcome.status == "ignored"
        assert "auto" in outcome.reason
        assert len(desk.outbox(session)) == before
        assert session.get(m.Inbound, inbound_id).status == "ignored"  # type: ignore[union-attr]


def test_an_unknown_sender_without_a_token_gets_no_reply(desk: Desk) -> None:
    desk.new_game()
    inbound_id = desk.store("eve@else.example", "help")
    with Session(desk.ctx.db) as session:
        before = len(desk.outbox(session))
        outcome = identify(desk, session, inbound_id)
        assert isinstance(outcome, Outcome)
        assert (outcome.status, outcome.reason) == (
            "ignored",
            "unknown sender and no game token: no reply",
        )
        assert len(desk.outbox(session)) == before


def test_another_players_token_is_refused_with_a_reply_to_the_sender(desk: Desk) -> None:
    game_id = desk.new_game()
    inbound_id = desk.store(BOB, "go", desk.token(game_id, 0))
    with Session(desk.ctx.db) as session:
        before = len(desk.outbox(session))
        outcome = identify(desk, session, inbound_id)
        assert isinstance(outcome, Outcome) and outcome.status == "rejected"
        assert outcome.game_id == game_id
        [mail] = desk.outbox(session)[before:]
        assert (mail.recipient, mail.kind) == (BOB, "error")
        assert b"Not your reply address" in mail.raw


def test_the_plain_address_is_routed_to_the_only_game_and_else_asks_which(desk: Desk) -> None:
    first = desk.new_game()
    inbound_id = desk.store(ANN, "hand")
    with Session(desk.ctx.db) as session:
        before = len(desk.outbox(session))
        # A From alone proves nothing: the mail for the only game is held, one
        # confirmation request goes to its sender, and a reply to it is the seat's mail.
        outcome = identify(desk, session, inbound_id)
        assert isinstance(outcome, Outcome)
        assert (outcome.status, outcome.game_id) == ("applied", first)
        assert outcome.reason == f"move: held until {ANN} confirms (confirmation request sent)"
        [mail] = desk.outbox(session)[before:]
        assert (mail.recipient, mail.kind) == (ANN, "confirm")
        [asked] = session.exec(select(m.Confirmation).where(m.Confirmation.mailbox == ANN))
        assert asked.inbound_id == inbound_id
        token = asked.token
        session.commit()
    answer_id = desk.store(ANN, "yes", token)
    with Session(desk.ctx.db) as session:
        known = identify(desk, session, answer_id)
        assert isinstance(known, Known)
        assert (known.game_row.id, known.seat, known.tokenless) == (first, 0, True)
        assert [c.verb for c in known.commands] == ["hand"]
    desk.new_game()
    inbound_id = desk.store(ANN, "hand")
    with Session(desk.ctx.db) as session:
        before = len(desk.outbox(session))
        outcome = identify(desk, session, inbound_id)
        assert isinstance(outcome, Outcome)
        assert (outcome.status, outcome.reason) == ("rejected", "no valid game token")
        [mail] = desk.outbox(session)[before:]
        assert mail.recipient == ANN and b"Which game" in mail.raw
