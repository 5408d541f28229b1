"""What a test of one service stage needs: a `Context` on the test database, games made
by the games stage, mails stored as the transport stores them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

from sqlmodel import Session, select

from pbem.commands import parse_reply
from pbem.mail.tokens import reply_address
from pbem.service import admin, intake
from pbem.service.context import Context, load_game, seats_of
from pbem.service.moves import Known
from pbem.store import models as m
from pbem.store.db import session_scope
from pbem.store.inbound import insert_inbound_many, message_key

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
PLAYERS = [("ann@play.example", "Ann"), ("bob@play.example", "Bob"), ("cy@play.example", "Cy")]


@dataclass
class Desk:
    """A context on the test database, and what a stage test needs around it."""

    ctx: Context
    steps: list[str]
    sent: int = 0

    def new_game(self, players: int = 2, **options: Any) -> int:
        return admin.new_game(self.ctx, PLAYERS[:players], seed="stage-test", **options)

    def token(self, game_id: int, seat: int) -> str:
        with Session(self.ctx.db) as session:
            return seats_of(session, game_id)[seat].seat.token

    def store(self, sender: str, body: str, token: str | None = None, **headers: str) -> int:
        """A mail from ``sender`` to the seat of ``token`` (None: the plain address),
        stored as the transport stores it; its inbound id."""
        settings = self.ctx.settings
        msg = EmailMessage()
        msg["From"] = sender
        msg["To"] = (
            reply_address(settings.local_part, token, settings.domain)
            if token
            else settings.address
        )
        msg["Subject"] = "Re: Cribbage"
        msg["Date"] = format_datetime(NOW)
        self.sent += 1
        msg["Message-ID"] = f"<stage{self.sent}@play.example>"
        for name, value in headers.items():
            msg[name.replace("_", "-")] = value
        msg.set_content(body + "\n")
        raw = msg.as_bytes()
        peeked_sender, subject, msg_id = intake.peek_headers(raw)
        with session_scope(self.ctx.db) as session:
            row = (raw, "test", message_key(raw, msg_id), peeked_sender, subject)
            [(inbound_id, _)] = insert_inbound_many(session, [row], now=NOW)
        return inbound_id

    def delivered(self) -> None:
        """Every mail queued so far was taken by the relay at ``NOW`` (a player's clock
        runs from their turn mail's delivery)."""
        from pbem.store.outbox import mark_sent

        with session_scope(self.ctx.db) as session:
            for row in self.outbox(session):
                if row.status == m.OutboxStatus.PENDING.value and row.id is not None:
                    mark_sent(session, row.id, now=NOW)

    @staticmethod
    def outbox(session: Session) -> list[m.Outbox]:
        """The outbox as ``session`` sees it (its own writes included)."""
        return list(session.exec(select(m.Outbox).order_by(m.Outbox.id)))  # type: ignore[arg-type]

    def known(self, session: Session, game_id: int, seat: int, body: str, **kw: Any) -> Known:
        """What intake hands to play for ``body`` from the player of ``seat``."""
        game_row = session.get(m.Game, game_id)
        assert game_row is not None
        seats = seats_of(session, game_id)
        parsed = parse_reply(body)
        return Known(
            game_row, seats, seat, seats[seat].player.email, parsed.commands, parsed.ignored, **kw
        )

    def discard(self, session: Session, game_id: int, seat: int) -> str:
        """A legal discard for ``seat`` now."""
        game_row = session.get(m.Game, game_id)
        assert game_row is not None
        game = load_game(self.ctx, session, game_row)
        need = 2 if game.players == 2 else 1
        return "discard " + " ".join(c.ascii for c in sorted(game.holding(seat))[:need])
