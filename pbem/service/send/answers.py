"""answers: the mails that answer a player's own mail in a game.

`answer_move` is the mail of one move: the turn mails (`pbem.service.send.turns`), the
reply to the writer when nothing else tells them where the game stands or what could not
be done (`reply_view`), and what they asked for — history, help, a hint, the archive,
the standings — then the table talk relayed and the others told what changed
(`tell_others`, `tell_away`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlmodel import Session

from engine import Game, player_view
from engine import Settings as GameSettings
from pbem.mail.compose import compose
from pbem.render import (
    Notice,
    render_archive,
    render_error,
    render_help,
    render_history,
    render_note,
    render_turn,
)
from pbem.render.board import house_rules
from pbem.render.hint import render_hint
from pbem.service.context import (
    Context,
    Seated,
    load_game,
    public_name,
    seats_of,
)
from pbem.service.game import hints, talk
from pbem.service.game.away import IN_PROGRESS, when
from pbem.service.moves import Move, answered_only
from pbem.service.send import turns
from pbem.service.send.archive import archive_bytes, game_archive
from pbem.service.send.envelope import (
    enqueue,
    envelope_for,
    may_mail_seat,
    queue,
    seat_reply_to,
)
from pbem.service.send.standings import send_standings
from pbem.service.send.talk import relay
from pbem.service.send.turns import (
    game_ending,
    mail_context,
    next_answer,
    replay_page,
    with_talk,
)
from pbem.store import models as m
from pbem.store.games import games_for_player


def reply_view(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: list[Seated],
    seat: int,
    inbound_id: int,
    notices: Sequence[Notice],
    kind: str,
    now: datetime,
) -> None:
    game = load_game(ctx, session, game_row)
    view = player_view(game, seat, len(game.events))
    said = with_talk(session, game_row, seats, seats[seat])
    finished = game_ending(ctx, game_row, game, None)
    about = mail_context(
        game_row,
        seats,
        seat,
        notices,
        len(game.events),
        said,
        reply_to=seat_reply_to(ctx, seats[seat]),
        ending=finished,
        following=next_answer(ctx, game_row, game),
    )
    if kind == "error":
        mail = render_error(about, view, "Your mail could not be applied")
    else:
        mail = render_turn(view, about)
    enqueue(
        ctx,
        session,
        game_row,
        seats[seat],
        mail,
        kind,
        f"i{inbound_id}",
        now,
        view_json=view.to_json(),
    )


def send_history(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    game: Game,
    seats: list[Seated],
    seat: int,
    inbound_id: int,
    now: datetime,
) -> None:
    view = player_view(game, seat, len(game.events))
    said = talk.everything(session, game_row, seats)
    finished = game_ending(ctx, game_row, game, None)
    about = mail_context(
        game_row,
        seats,
        seat,
        [],
        0,
        said,
        reply_to=seat_reply_to(ctx, seats[seat]),
        ending=finished,
        following=next_answer(ctx, game_row, game),
    )
    events = player_view(game, seat, 0).events
    mail = render_history(view, about, events)
    enqueue(ctx, session, game_row, seats[seat], mail, "history", f"h{inbound_id}", now)


def send_archive(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    game: Game,
    seats: list[Seated],
    seat: int,
    inbound_id: int,
    now: datetime,
) -> None:
    """A finished game's archive, as ``pbem game export`` writes it, to one player
    (a finished game hides nothing: every card was shown or may be, and the seed too),
    with its replay page, which replays the game and checks its deals in a browser."""
    assert game_row.id is not None
    name = f"cribbage-{game_row.id}.json"
    from pbem.store.games import cut_mails

    data = archive_bytes(game_archive(game_row, game, seats, cut_mails(session, game_row.id)))
    if not may_mail_seat(ctx, session, seats[seat], now):
        return
    page_name, _, page = replay_page(game_row, game, seats).attachment(seat, None)
    about = mail_context(game_row, seats, seat, [], len(game.events))
    mail = render_archive(about, name, page_name)
    envelope = envelope_for(
        ctx, session, game_row, seats[seat], "archive", f"x{inbound_id}", now, None
    )
    envelope["attachments"].append((name, "application/json", data))
    envelope["attachments"].append((page_name, "text/html", page))
    raw = compose(subject=mail.subject, text=mail.text, html=mail.html, **envelope)
    queue(ctx, session, envelope, "archive", game_row.id, raw, now)


def send_hint(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    game: Game,
    seats: list[Seated],
    seat: int,
    inbound_id: int,
    now: datetime,
) -> None:
    """A hint to the player of ``seat`` alone, built from their own views (see
    `pbem.service.game.hints.advice`), threaded after their last mail."""
    view = player_view(game, seat, len(game.events))
    about = mail_context(
        game_row, seats, seat, [], len(game.events), reply_to=seat_reply_to(ctx, seats[seat])
    )
    mail = render_hint(view, about, hints.advice(game, seat))
    enqueue(ctx, session, game_row, seats[seat], mail, "hint", f"k{inbound_id}", now)


def tell_others(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    game: Game,
    seats: list[Seated],
    seat: int,
    said: Sequence[str],
    tag: str,
    now: datetime,
) -> int:
    """Tell the game's other players what ``seat``'s mail changed that they must know
    (``said``: ``hints on|off``, ``observers on|off``, a turn mail that failed for good):
    one mail each, where the game stands with those notes; through `enqueue`, so the
    policy is asked. Nobody whose own turn mail failed for good is mailed (it would not
    get through). Returns how many mails were queued."""
    told = 0
    if not said:
        return told
    for seated in seats:
        other = seated.seat.seat
        if other == seat or seated.seat.mail_failed_at is not None:
            continue
        notes = [Notice("info", "", line) for line in said]
        about = mail_context(
            game_row, seats, other, notes, len(game.events), reply_to=seat_reply_to(ctx, seated)
        )
        # A note of its own: the board is in the player's last game mail.
        told += enqueue(
            ctx,
            session,
            game_row,
            seated,
            render_note(about, "Note"),
            "status",
            tag,
            now,
            unsolicited=True,
        )
    return told


def send_help(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: list[Seated],
    seat: int,
    inbound_id: int,
    now: datetime,
) -> None:
    about = mail_context(game_row, seats, seat, [], 0)
    rules = GameSettings.from_json(game_row.settings)
    mail = render_help(
        about,
        f"Cribbage {game_row.id}",
        rules=house_rules(rules.players, rules.target, rules.muggins, rules.skunk),
    )
    enqueue(ctx, session, game_row, seats[seat], mail, "help", f"p{inbound_id}", now)


def answer_move(ctx: Context, session: Session, move: Move, inbound_id: int, now: datetime) -> None:
    """The mails of a played mail: the turn mails after its moves, or the answer to its
    questions, or the reply saying what could not be done; then history and help when
    asked for."""
    known = move.known
    game_row, seats, seat, wants = known.game_row, known.seats, known.seat, move.wants
    if move.refusal is not None:
        reply_view(ctx, session, game_row, seats, seat, inbound_id, move.notices, "error", now)
        return
    game = move.game
    assert game is not None
    watched: set[int] = set()
    if move.actions:
        # What the others must know goes in their mails of this move (a note forces one).
        notes = [Notice("info", "", said) for said in move.tell_others]
        notices = {s.seat.seat: list(notes) for s in seats if s.seat.seat != seat}
        notices[seat] = move.notices
        watched = turns.turn_mails(
            ctx,
            session,
            game_row,
            game,
            seats,
            move.since,
            notices,
            inbound_id,
            now,
            replying=seat,
            confirm=bool({"mail", "hints"} & set(wants)),
            spoken=move.said,
        )
        if "history" in wants:
            send_history(ctx, session, game_row, game, seats, seat, inbound_id, now)
    elif answered_only(move):
        already = any(n.status in ("already", "confirm") for n in move.notices)
        # A note to tell (a first "say" to the computer, see `talk.to_the_computer`).
        noted = any(n.status == "info" for n in move.notices)
        if already or "hand" in wants or not set(wants) - {"hand"}:
            reply_view(ctx, session, game_row, seats, seat, inbound_id, move.notices, "status", now)
        elif noted or {"mail", "hints"} & set(wants):
            # A setting's answer: a short note of its own, not the board again.
            about = mail_context(
                game_row,
                seats,
                seat,
                move.notices,
                len(game.events),
                reply_to=seat_reply_to(ctx, seats[seat]),
            )
            mail = render_note(about, "About your reply")
            enqueue(ctx, session, game_row, seats[seat], mail, "status", f"i{inbound_id}", now)
        if "archive" in wants:
            send_archive(ctx, session, game_row, game, seats, seat, inbound_id, now)
        if "history" in wants:
            send_history(ctx, session, game_row, game, seats, seat, inbound_id, now)
    else:
        reply_view(ctx, session, game_row, seats, seat, inbound_id, move.notices, "error", now)
    if "hint" in wants:
        send_hint(ctx, session, game_row, game, seats, seat, inbound_id, now)
    if not move.actions:
        tell_others(
            ctx, session, game_row, game, seats, seat, move.tell_others, f"k{inbound_id}", now
        )
    if "help" in wants:
        send_help(ctx, session, game_row, seats, seat, inbound_id, now)
    if "standings" in wants:
        send_standings(ctx, session, seats[seat].player, inbound_id, now, known.message_id)
    if move.said:
        relay(ctx, session, game_row, seats, move.said, inbound_id, now, watched)
    for verb in ("away", "back"):
        if verb in wants:
            tell_away(ctx, session, seats[seat].player, verb, f"w{inbound_id}", now)


def tell_away(
    ctx: Context, session: Session, player: m.Player, verb: str, tag: str, now: datetime
) -> None:
    """Tell the other players of each game of ``player``'s in progress that they are
    away until when (``verb`` "away"), or back ("back"): a short status mail."""
    assert player.id is not None
    who = public_name(player)  # told to the other players: never a part of the address
    if verb == "away":
        assert player.away_until is not None
        said = (
            f"{who} is away until {when(player.away_until)}: their clock stands still until then."
        )
    else:
        said = f"{who} is back: their clock runs again."
    for game_row in games_for_player(session, player.id):
        if game_row.status not in IN_PROGRESS or game_row.id is None:
            continue
        game = load_game(ctx, session, game_row)
        seats = seats_of(session, game_row.id)
        for seated in seats:
            if seated.player.id == player.id:
                continue
            seat = seated.seat.seat
            note = Notice("info", "", said)
            about = mail_context(
                game_row, seats, seat, [note], len(game.events), reply_to=seat_reply_to(ctx, seated)
            )
            mail = render_note(about, "Note")  # a note of its own: no board
            enqueue(
                ctx,
                session,
                game_row,
                seated,
                mail,
                "status",
                f"{tag}{verb[0]}",
                now,
                unsolicited=True,
            )
