"""talk: table talk — ``say …`` relayed to everyone who follows a game.

A ``say`` line is kept whole and never read as commands (`pbem.commands.split_lines`):
``say play 5h`` plays nothing. What follows the word is stored as written (control
characters out, spaces collapsed, at most ``say_max_chars`` characters) in a `Talk` row,
in the mail's transaction; a player may say at most ``max_says_per_game_per_hour`` things
to one game in an hour (the rest are refused, and the sender told).

Who hears it: `followers` — the game's other seats — and the game's observers. Each
seat sees the talk it has not seen yet under the heading "Table talk" of its next game
mail (a seat remembers the last talk shown: ``Seat.heard_talk``). Besides, the talk is
relayed at once by a short mail ("Alice says: …", no cards and no board) to each follower
whose game mail does not go out in the same transaction — not to a player who said
``stop`` (they read it in their next game mail), never to the computer. An observer gets
the talk in the board mail of the move made by the same mail, else in a short mail of
its own: one mail per move either way (`pbem.service.send.watchers`). The sender gets no
answer for a say that went through; a refused one is answered, and so is the first say
of a game whose other seats are all the computer: the computer does not read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlmodel import Session, col, func, select

from pbem.commands import Command
from pbem.render import Notice, Said, clean_name
from pbem.service.context import Context, Seated, is_computer
from pbem.store import models as m
from pbem.store._sql import update_row


def followers(session: Session, game_row: m.Game, seats: Sequence[Seated]) -> list[Seated]:
    """Everyone who follows ``game_row`` and hears its table talk: its seats.

    The one place that says who follows a game: observers (``watch``) are added here,
    and every relay of table talk goes through it."""
    return list(seats)


def say(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: Sequence[Seated],
    seat: int,
    command: Command,
    events: int,
    inbound_id: int | None,
    now: datetime,
) -> tuple[Notice, m.Talk | None]:
    """Store what ``seat`` said (``command``: a ``say``), or refuse it (nothing to say,
    over the hourly limit); the notice for the sender and the stored talk."""
    assert game_row.id is not None
    shown = clean_name(command.line, 60)
    text = clean_name(command.args[0] if command.args else "", ctx.settings.say_max_chars)
    if not text:
        return Notice("refused", shown, "Say what? e.g. 'say well played'"), None
    limit = ctx.settings.max_says_per_game_per_hour
    recent = session.exec(
        select(func.count())
        .select_from(m.Talk)
        .where(
            m.Talk.game_id == game_row.id,
            m.Talk.seat == seat,
            col(m.Talk.created_at) >= now - timedelta(hours=1),
        )
    ).one()
    if recent >= limit:
        return (
            Notice(
                "refused",
                shown,
                f"You said {limit} things to this game in the last hour, as many as one "
                "may; this was not passed on. Try again later.",
            ),
            None,
        )
    talk = m.Talk(
        game_id=game_row.id,
        seat=seat,
        text=text,
        events=events,
        inbound_id=inbound_id,
        created_at=now,
    )
    session.add(talk)
    session.flush()
    assert talk.id is not None
    update_row(session, game_row, last_talk=talk.id)
    if all(is_computer(game_row, s.seat.seat) for s in seats if s.seat.seat != seat):
        return to_the_computer(session, game_row, seat, shown, talk), talk
    others = [f.name for f in followers(session, game_row, seats) if f.seat.seat != seat]
    told = ", ".join(others) or "nobody"
    return Notice("applied", shown, f"told {told}."), talk


COMPUTER_DOES_NOT_READ = (
    "The computer does not read table talk. What you say is kept in the game's history "
    "(you are told this once a game)."
)


def to_the_computer(
    session: Session, game_row: m.Game, seat: int, shown: str, talk: m.Talk
) -> Notice:
    """The notice for a ``say`` in a game whose other seats are all the computer: the
    first in the game is answered (an ``info`` notice: its mail goes to the sender, as
    any answer to their own mail), the later ones quietly kept."""
    earlier = session.exec(
        select(func.count())
        .select_from(m.Talk)
        .where(m.Talk.game_id == game_row.id, m.Talk.seat == seat, col(m.Talk.id) < talk.id)
    ).one()
    if earlier:
        return Notice("applied", shown, "kept in the game's history.")
    return Notice("info", shown, COMPUTER_DOES_NOT_READ)


def since(session: Session, game_row: m.Game, after: int) -> list[m.Talk]:
    """The table talk of a game after talk id ``after``, in order (one query, none when
    the game has no talk that new)."""
    assert game_row.id is not None
    if game_row.last_talk <= after:
        return []
    return list(
        session.exec(
            select(m.Talk)
            .where(m.Talk.game_id == game_row.id, col(m.Talk.id) > after)
            .order_by(col(m.Talk.id))
        ).all()
    )


def unheard(
    session: Session,
    game_row: m.Game,
    seats: Sequence[Seated],
    seated: Seated,
    rows: Sequence[m.Talk] | None = None,
) -> tuple[tuple[Said, ...], int]:
    """The talk of the other players ``seated`` has not seen in a game mail yet, and the
    id of the newest talk of the game (what the seat has heard once this is shown).
    ``rows``: the game's talk after some id at most the seat's ``heard_talk``, when read
    already (`since`)."""
    heard_so_far = seated.seat.heard_talk
    if game_row.last_talk <= heard_so_far:
        return (), heard_so_far  # nothing new: no query
    if rows is None:
        rows = since(session, game_row, heard_so_far)
    rows = [r for r in rows if (r.id or 0) > heard_so_far]
    if not rows:
        return (), heard_so_far
    names = {s.seat.seat: s.name for s in seats}
    said = tuple(
        Said(names.get(r.seat, f"Seat {r.seat + 1}"), r.text)
        for r in rows
        if r.seat != seated.seat.seat
    )
    return said, max(r.id or 0 for r in rows)


def heard(session: Session, seated: Seated, upto: int) -> None:
    """The seat's game mail showed the talk up to ``upto``."""
    if upto > seated.seat.heard_talk:
        update_row(session, seated.seat, heard_talk=upto)


def everything(session: Session, game_row: m.Game, seats: Sequence[Seated]) -> tuple[Said, ...]:
    """All the table talk of a game, in order (for the ``history`` mail)."""
    names = {s.seat.seat: s.name for s in seats}
    rows = session.exec(
        select(m.Talk).where(m.Talk.game_id == game_row.id).order_by(col(m.Talk.id))
    ).all()
    return tuple(Said(names.get(r.seat, f"Seat {r.seat + 1}"), r.text) for r in rows)
