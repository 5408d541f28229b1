"""talk (mail): table talk relayed at once to everyone who follows a game.

A short mail ("Alice says: …", no cards, no board) to each follower whose game mail of
this transaction did not already carry it, and one to the game's watchers. The talk is
stored by `pbem.service.game.talk`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

from sqlmodel import Session

from pbem.render import MailContext, Said, render_talk
from pbem.service.context import Context, Seated, game_subject, is_computer
from pbem.service.game.talk import followers
from pbem.service.send import envelope, watchers
from pbem.store import models as m


def relay(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: Sequence[Seated],
    said: Sequence[m.Talk],
    inbound_id: int,
    now: datetime,
    watchers_told: Collection[int] = (),
) -> None:
    """Mail ``said`` at once to each follower but the speaker whose game mail of this
    transaction did not already show it: a short mail, no cards. Not to a player who
    said ``stop``, nor to a computer seat (see `pbem.service.send.envelope.enqueue`); nor to
    the watchers whose board mail of this move carried it (``watchers_told``)."""

    if not said or game_row.id is None:
        return
    newest = max(t.id or 0 for t in said)
    speakers = {t.seat for t in said}
    names = {s.seat.seat: s.name for s in seats}
    for seated in followers(session, game_row, seats):
        seat = seated.seat.seat
        if seated.seat.heard_talk >= newest or is_computer(game_row, seat):
            continue
        lines = tuple(
            Said(names.get(t.seat, f"Seat {t.seat + 1}"), t.text) for t in said if t.seat != seat
        )
        if not lines or speakers == {seat}:
            continue
        about = MailContext(
            game_id=game_row.id,
            names=tuple(s.name for s in seats),
            recipient_seat=seat,
            reply_hint="",
            talk=lines,
            subject=game_subject(game_row, seats),
        )
        mail = render_talk(about)
        envelope.enqueue(
            ctx, session, game_row, seated, mail, "talk", f"t{inbound_id}", now, unsolicited=True
        )
    # The game's observers (``watch GAME``) hear it too: all of it in one short mail.
    lines = tuple(Said(names.get(t.seat, f"Seat {t.seat + 1}"), t.text) for t in said)
    watchers.relay_talk(ctx, session, game_row, lines, now, watchers_told)
