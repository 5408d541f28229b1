"""cutting: the verifiable-deal protocol's service side (``docs/pbem-deal-1.md``; see
`engine.fairness` and the README's "Verifiable deals").

A fair game is created with a secret server seed ``S`` and its commitment ``C`` and
waits, in status ``cutting``, for every human seat's ``cut``: no engine ``Game`` and no
engine seed exist meanwhile, so no deal can be computed by anyone. Each cut stores the
seat's entropy text (its mail's Message-ID and words); the last one derives the engine
seed ``K``, deals, and the game goes on as any other. ``S`` is written in the game's
mails and archive only once the game is over — finished, or aborted (by the admin, or
because not every player cut by its deadline): a game that ends without being played
out reveals its seed all the same, so no abort can hide a deal. Reminders and the
timeout apply as to any other wait.

Cuts are bound to their players: the receipt of a cut quotes the entropy text recorded
and its SHA-256, every later mail shows each seat's hash (`deal_lines`), and every cut
mail the game receives, accepted or refused, is logged (``cut_mail``) and archived as
``deal_proof.cuts``. There are no re-cuts: a cut phase is never restarted with a new
seed, so ``deal_proof.recuts`` is always empty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlmodel import Session

from engine import Game
from engine import Settings as GameSettings
from engine.fairness import (
    PROTOCOL,
    commitment,
)
from pbem.commands import SETTING_VERBS
from pbem.render import MailContext, Notice
from pbem.render.cut import render_cut
from pbem.service import moves
from pbem.service.context import Context, Seated, game_subject, stage
from pbem.service.game.deals import (
    deal_lines,
    derive_key,
    humans,
    new_server_seed,
    receipts,
    record_cut,
    refuse_cut,
    waiting,
)
from pbem.service.game.settings import apply_setting
from pbem.service.moves import Known, Move
from pbem.service.ops import play
from pbem.service.send import answers, envelope, turns
from pbem.service.send.standings import send_standings
from pbem.store import models as m
from pbem.store._sql import update_row
from pbem.store.games import append_actions, mark_aborted


def cut_context(
    game_row: m.Game,
    seats: Sequence[Seated],
    seat: int,
    notices: Sequence[Notice] = (),
    reply_to: str = "",
) -> MailContext:
    """The cut request's context (``reply_to``: the seat's reply address, for the
    mail's one-click ``cut``)."""
    assert game_row.id is not None
    return MailContext(
        game_id=game_row.id,
        names=tuple(s.name for s in seats),
        recipient_seat=seat,
        reply_hint='Reply "cut" and any number or words.',
        notices=tuple(notices),
        deal_lines=deal_lines(game_row, over=False, names=[s.name for s in seats]),
        reply_to=reply_to,
        opening=turns.opening_line(game_row, seats, seat),
        subject=game_subject(game_row, seats),
    )


def cut_attachment(game_row: m.Game) -> dict[str, Any]:
    """The machine-readable part of a cut request (``view.json`` of a game not dealt
    yet): what a program playing by mail needs to answer it."""
    return {"cut": True, "game": game_row.id, "commitment": game_row.commitment}


def send_cut_mail(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: Sequence[Seated],
    seat: int,
    kind: str,
    tag: str,
    now: datetime,
    *,
    notices: Sequence[Notice] = (),
    reminder: str | None = None,
    unsolicited: bool = False,
    closing: bool = False,
    starts_clock: bool = False,
) -> bool:
    """The cut request (or "your cut is in") to one human seat; ``closing``: the game
    will not be dealt (the notices say why), nothing is asked; ``starts_clock``: the
    game's cut clocks run from its delivery (the game's first cut requests). Whether it
    was queued (`envelope.enqueue`)."""
    pending = [] if closing else waiting(game_row)
    mail = render_cut(
        cut_context(game_row, seats, seat, notices, envelope.seat_reply_to(ctx, seats[seat])),
        [seats[s].name for s in pending if s != seat],
        have_cut=seat not in pending,
        reminder=reminder,
        closing=closing,
    )
    return envelope.enqueue(
        ctx,
        session,
        game_row,
        seats[seat],
        mail,
        kind,
        tag,
        now,
        view_json=cut_attachment(game_row) if seat in pending else None,
        unsolicited=unsolicited,
        starts_clock=starts_clock,
    )


def begin(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: Sequence[Seated],
    now: datetime,
    *,
    ask: bool = True,
) -> Game | None:
    """A new fair game: ask every human seat that has not cut yet to cut, and tell those
    who have that their cut is in (its first mail; ``ask`` False: the mail that showed
    the commitment asked for the cuts already), and start the clocks. A game whose
    humans have all cut (or that has none) is dealt at once.

    The cut clocks, as a turn's, run from the delivery of the mail they wait for: each
    cut request is queued with ``starts_clock`` (`pbem.store.delivery`), so a game made
    while the relay is down neither reminds nor aborts anyone who was never asked."""
    pending = waiting(game_row)
    if not pending:
        return deal(ctx, session, game_row, now)[0]
    update_row(session, game_row, **play.clock_values(ctx, None, now))
    if ask:
        made = receipts(game_row)
        for seat in humans(game_row):
            notices = made.get(seat, [])
            send_cut_mail(
                ctx,
                session,
                game_row,
                seats,
                seat,
                "cut",
                "c0",
                now,
                notices=notices,
                starts_clock=seat in pending,
            )
    return None


def deal(
    ctx: Context, session: Session, game_row: m.Game, now: datetime
) -> tuple[Game, list[moves.Logged]]:
    """Every human has cut: derive ``K``, deal (the game's first `Game`), make the
    forced and computer moves, log them, and make the game active."""
    assert game_row.id is not None and game_row.server_seed is not None
    seed = derive_key(game_row)
    update_row(session, game_row, seed=seed, status=m.GameStatus.ACTIVE.value, updated_at=now)
    game = Game(GameSettings.from_json(game_row.settings), seed)
    auto = play.auto_moves(game, game_row)
    values = play.clock_values(ctx, game, now)
    if auto:
        append_actions(
            session,
            game_row.id,
            game_row.action_count,
            auto,
            None,
            now=now,
            state_hash=game.state_hash(),
            also=values,
        )
    else:
        update_row(session, game_row, state_hash=game.state_hash(), **values)
    if game.is_over:  # the computer played the whole game out (no human seat)
        play.rate(ctx, session, game_row, game)
    stage(ctx, game_row.id, game)
    return game, auto


def play_cut(ctx: Context, session: Session, known: Known, message_id: str | None) -> Move:
    """A mail from a seat of a game that waits for its cuts: ``cut`` records the seat's
    entropy (the last cut deals); the settings apply; anything else is answered with
    the cut request again, saying the cards are not dealt yet."""
    game_row, seats, seat = known.game_row, known.seats, known.seat
    move = Move(known)
    closed = game_row.status != m.GameStatus.CUTTING.value
    now = ctx.clock()
    for cmd in known.commands:
        if closed and cmd.verb not in (*SETTING_VERBS, "help", "standings"):
            word = "aborted" if game_row.status == m.GameStatus.ABORTED.value else game_row.status
            if game_row.status == m.GameStatus.PAUSED.value:
                word = "paused by the admin"
            move.notices.append(
                Notice("refused", str(cmd), f"This game is {word}; no cards were dealt.")
            )
            move.refusal = f"game is {game_row.status}"
            if cmd.verb == "cut":
                refuse_cut(session, game_row, seat, cmd, message_id, now, f"game is {word}")
        elif cmd.verb == "cut":
            move.notices.append(record_cut(session, game_row, seat, cmd, message_id, now))
        elif cmd.verb in SETTING_VERBS:
            notice = apply_setting(ctx, session, seats[seat].player, cmd, ctx.clock())
            move.notices.append(notice)
        elif cmd.verb in ("help", "standings"):
            move.wants.append(cmd.verb)
        else:
            move.notices.append(
                Notice(
                    "refused",
                    str(cmd),
                    "The cards are not dealt yet: the game waits for everyone to cut for the deal.",
                    "cut, then any number or words",
                )
            )
    if not known.commands:
        move.notices.append(
            Notice("refused", "", "I found no command in your mail.", "cut 17 purple elephants")
        )
    cut = any(n.status == "applied" and n.command.startswith("cut") for n in move.notices)
    if cut and not waiting(game_row):
        move.game, move.actions = deal(ctx, session, game_row, ctx.clock())
        move.dealt = True
    return move


def answer_cut(ctx: Context, session: Session, move: Move, inbound_id: int, now: datetime) -> None:
    """The mails after a mail to a game that waited for its cuts: the first turn mail
    to everyone when it was dealt, else the cut request (or "your cut is in") to the
    sender; help when asked."""
    known = move.known
    game_row, seats, seat = known.game_row, known.seats, known.seat
    if move.dealt:
        assert move.game is not None
        turns.turn_mails(
            ctx,
            session,
            game_row,
            move.game,
            seats,
            0,
            {seat: move.notices},
            inbound_id,
            now,
            replying=seat,
        )
    else:
        closing = game_row.status != m.GameStatus.CUTTING.value
        send_cut_mail(
            ctx,
            session,
            game_row,
            seats,
            seat,
            "error" if closing else "cut",
            f"i{inbound_id}",
            now,
            notices=move.notices,
            closing=closing,
        )
    if "help" in move.wants:
        answers.send_help(ctx, session, game_row, seats, seat, inbound_id, now)
    if "standings" in move.wants:
        send_standings(ctx, session, seats[seat].player, inbound_id, now, known.message_id)


def verdict(move: Move) -> tuple[str, str, tuple[str, ...]]:
    """The message's final state, for a mail to a game waiting for its cuts."""
    applied = tuple(n.command for n in move.notices if n.status == "applied")
    if move.refusal is not None and not applied:
        return "rejected", move.refusal, ()
    if move.dealt:
        return "applied", "cut; every player has cut: dealt", applied
    if applied:
        return "applied", "applied: " + "; ".join(applied), applied
    if move.wants:
        return "applied", "sent: " + ", ".join(move.wants), ()
    reason = "; ".join(f"{n.command}: {n.message}" for n in move.notices)
    return "rejected", reason[:2000] or "nothing to do while the players cut", ()


def remind(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: list[Seated],
    waited: str,
    now: datetime,
) -> None:
    """Remind the humans who have not cut."""
    for seat in waiting(game_row):
        send_cut_mail(
            ctx,
            session,
            game_row,
            seats,
            seat,
            "reminder",
            f"m{game_row.reminders_sent}-cut",
            now,
            reminder=waited,
            unsolicited=True,
        )


def tell_others(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: Sequence[Seated],
    seat: int,
    said: str,
    tag: str,
    now: datetime,
) -> int:
    """Tell the other human seats of a game waiting for its cuts what ``said`` (the cut
    request of ``seat`` failed for good, or gets through again), each in the mail that
    asks them to cut (or says their cut is in); nobody whose own mail failed for good.
    Returns how many mails were queued."""
    told = 0
    for other in humans(game_row):
        if other == seat or seats[other].seat.mail_failed_at is not None:
            continue
        told += send_cut_mail(
            ctx,
            session,
            game_row,
            seats,
            other,
            "status",
            tag,
            now,
            notices=[Notice("info", "", said)],
            unsolicited=True,
        )
    return told


def time_out(
    ctx: Context, session: Session, game_row: m.Game, seats: list[Seated], now: datetime
) -> None:
    """The deadline passed before everyone cut: the game is aborted (it was never
    dealt), and the humans are told."""
    assert game_row.id is not None
    names = ", ".join(seats[s].name for s in waiting(game_row))
    reason = f"not everyone cut for the deal in time ({names})"
    mark_aborted(session, game_row, reason, now)
    for seat in humans(game_row):
        send_cut_mail(
            ctx,
            session,
            game_row,
            seats,
            seat,
            "aborted",
            "t-cut",
            now,
            notices=[Notice("info", "", f"This game was aborted: {reason}. No cards were dealt.")],
            unsolicited=True,
            closing=True,
        )


def commit_new(
    game_row: m.Game, server_seed: str | None = None, cuts: Mapping[int, str] | None = None
) -> None:
    """Give a new game its server seed and commitment (before any deal), and the cuts
    made already (seat → entropy text)."""
    seed = server_seed or new_server_seed()
    game_row.server_seed = seed
    game_row.commitment = commitment(seed)
    game_row.deal_protocol = PROTOCOL
    game_row.entropy = [{"seat": int(s), "text": t} for s, t in sorted((cuts or {}).items())]
