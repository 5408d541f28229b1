"""play: a known player's commands → engine actions → applied, and the action log.

`play` turns the commands of one mail into engine actions and applies them to the game,
with the forced moves and the computer seats' moves after each (`auto_moves`); what
cannot be done becomes a notice (refused, ambiguous, "already done", the resign that
needs a token), the questions (hand, history, help, archive, hint) are noted for `notify`,
``hints on|off`` is applied by `pbem.service.game.hints`,
and the player's own settings (``mail``, ``name``, ``stop``, ``start``) are applied
by `pbem.service.game.settings`. `record` appends the new actions to the log and restarts
the game's clocks; `verdict` is the message's final state. Nothing here writes mail.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, select

from engine import (
    AmbiguousActionError,
    Game,
    IllegalActionError,
    InvalidSyntaxError,
    action_to_json,
    computer,
)
from pbem.commands import GAME_VERBS, SETTING_VERBS, to_action
from pbem.render import Notice
from pbem.repeats import already_done
from pbem.service import policy
from pbem.service.context import Context, Seated, is_computer, load_game, seat_level, stage
from pbem.service.game import hints, older, resign, talk
from pbem.service.game.away import clock_start
from pbem.service.game.deals import NOT_NEEDED, refuse_cut
from pbem.service.game.settings import apply_setting
from pbem.service.game.standings import rate_finished
from pbem.service.moves import Known, Move, answered_only
from pbem.service.send.watchers import set_observers
from pbem.store import models as m
from pbem.store._sql import update_row
from pbem.store.games import append_actions


def play(ctx: Context, session: Session, known: Known) -> Move:
    """Apply a known player's commands to their game (not logged yet: see `record`).

    ``known.tokenless``: the mail carried no reply token. Its From is then the only
    proof of who wrote it, so unless a trusted server vouches for the From (DMARC),
    ``resign`` — which cannot be undone — is refused and the player is asked to reply to
    a game mail instead.
    """
    game_row, seats, seat, commands = known.game_row, known.seats, known.seat, known.commands
    assert game_row.id is not None
    # On PostgreSQL `table_by_token` locked the game: its moves apply one at a time.
    move = Move(known)
    notices = move.notices
    if not commands:
        notices.append(
            Notice(
                "refused",
                "",
                "I found no command in your mail.",
                "reply 'help' for the command language",
            )
        )
        move.refusal = "no command found"
        return move
    if game_row.status != m.GameStatus.ACTIVE.value and any(c.verb in GAME_VERBS for c in commands):
        word = {"paused": "paused by the admin", "finished": "over", "aborted": "aborted"}.get(
            game_row.status, game_row.status
        )
        if game_row.status_reason and game_row.status != m.GameStatus.FINISHED.value:
            word += f" ({game_row.status_reason})"
        notices.append(
            Notice("refused", str(commands[0]), f"This game is {word}; no move was made.")
        )
        move.refusal = f"game is {game_row.status}"
        return move
    game = move.game = load_game(ctx, session, game_row)
    move.since = len(game.events)
    new_actions, wants = move.actions, move.wants
    for cmd in commands:
        if cmd.verb == "say":
            notice, stored = talk.say(
                ctx,
                session,
                game_row,
                seats,
                seat,
                cmd,
                len(game.events),
                known.inbound_id,
                ctx.clock(),
            )
            notices.append(notice)
            if stored is not None:
                move.said.append(stored)
                wants.append("say")
            continue
        if cmd.verb in ("hand", "history", "help", "standings"):
            wants.append(cmd.verb)
            continue
        if cmd.verb == "rematch":
            notices.append(
                Notice(
                    "refused",
                    str(cmd),
                    "This game is not over: a rematch follows a finished game.",
                )
            )
            continue
        if cmd.verb == "archive":
            if game_row.status != m.GameStatus.FINISHED.value:
                notices.append(
                    Notice(
                        "refused",
                        str(cmd),
                        "The archive is sent once the game is over: until then it would "
                        "show the cards still hidden and the seed of the shuffle.",
                        "reply 'archive' after the game",
                    )
                )
            else:
                wants.append("archive")
            continue
        if cmd.verb == "hint":
            refused = hints.refusal(game_row, seats, seat, cmd)
            if refused is not None:
                notices.append(refused)
            elif "hint" not in wants:
                wants.append("hint")
            continue
        if cmd.verb == "hints":
            change = hints.set_hints(session, game_row, seats, seat, cmd)
            notices.append(change.notice)
            if change.notice.status == "applied" and "hints" not in wants:
                wants.append("hints")
            if change.tell_others:
                move.tell_others.append(change.tell_others)
            continue
        if cmd.verb == "cut":
            notices.append(Notice("refused", str(cmd), NOT_NEEDED))
            refuse_cut(
                session, game_row, seat, cmd, known.message_id, ctx.clock(), "after the deal"
            )
            continue
        if cmd.verb == "next":
            notices.append(
                Notice(
                    "refused",
                    str(cmd),
                    "“next” answers the game-over mail of a game of a match: this game "
                    "is not over.",
                )
            )
            continue
        if cmd.verb == "observers":
            computer = [s for s in range(len(seats)) if is_computer(game_row, s)]
            on = cmd.args[:1] == ("on",)
            opened = set_observers(ctx, session, game_row, seats, seat, on, computer, ctx.clock())
            notices.append(opened.notice)
            if opened.tell_others:
                move.tell_others.append(opened.tell_others)
            if "mail" not in wants:
                wants.append("mail")
            continue
        if cmd.verb in SETTING_VERBS:
            notice = apply_setting(ctx, session, seats[seat].player, cmd, ctx.clock())
            notices.append(notice)
            if notice.status == "applied" and "mail" not in wants:
                wants.append("mail")
            if notice.status == "applied" and cmd.verb in ("away", "back"):
                wants.append(cmd.verb)  # the other players are told
            continue
        if game.is_over:
            notices.append(Notice("refused", str(cmd), "The game is over."))
            continue
        if cmd.verb == "resign" and not may_resign(ctx, session, known):
            notices.append(
                Notice(
                    "refused",
                    str(cmd),
                    "To resign, reply to your latest game email: a mail to the plain "
                    "address carries no proof that you wrote it.",
                )
            )
            continue
        if cmd.verb == "resign":
            asking = resign.ask_first(game, seat, seats, cmd)
            if asking is not None:
                notices.append(asking)
                continue
        try:
            action = to_action(game, seat, cmd)
            game.apply(action)
        except AmbiguousActionError as exc:
            notices.append(
                Notice("ambiguous", str(cmd), str(exc), "play " + " or ".join(exc.candidates))
            )
            continue
        except (IllegalActionError, InvalidSyntaxError) as exc:
            done = already_done(game, seat, cmd, logged_auto(session, game_row.id))
            if done is not None:
                notices.append(Notice("already", str(cmd), done))
                continue
            if was_older(known, game_row, game):
                notices.append(older.older_notice(game, seat, seats, cmd))
                continue
            legal = getattr(exc, "legal", None) or describe_legal(game, seat, seats)
            notices.append(Notice("refused", str(cmd), name_seats(str(exc), seats), legal))
            continue
        new_actions.append((seat, action_to_json(action), False))
        notices.append(Notice("applied", str(cmd), f"{action} — done."))
        new_actions.extend(auto_moves(game, game_row))
    for line in list(known.ignored)[:5]:
        notices.append(Notice("ignored", line, "not a command, ignored"))
    return move


def was_older(known: Known, game_row: m.Game, game: Game) -> bool:
    """Whether ``known`` answers a turn mail its own seat has moved past since: a move
    of the seat is logged after the count the mail names (a player who has not moved
    since answers the mail that still asks them)."""
    count = known.answered_turn
    if count is None or count >= game_row.action_count:
        return False
    return any(getattr(action, "seat", None) == known.seat for action in game.actions[count:])


def may_resign(ctx: Context, session: Session, known: Known) -> bool:
    """Whether the mail of ``known`` is proven enough to resign (`policy.RULES`)."""
    writer = ctx.senders.get(known.inbound_id) if known.inbound_id is not None else None
    if writer is None:  # a mail not taken in by intake (a test's own Known): its token
        return not known.tokenless
    return policy.decide(ctx, session, writer, "resign").allowed


def record(
    ctx: Context, session: Session, move: Move, inbound_id: int | None, now: datetime
) -> None:
    """Log the move's new actions, restart the game's clocks, and stage the game (cached
    once the transaction commits)."""
    game_row, game = move.known.game_row, move.game
    assert game is not None and game_row.id is not None
    log_moves(ctx, session, game_row, game, move.actions, inbound_id, now, move.known.seats)
    stage(ctx, game_row.id, game)


def verdict(move: Move) -> tuple[str, str, tuple[str, ...]]:
    """The message's final state: (status, reason, the commands applied)."""
    notices = move.notices
    if move.refusal is not None:
        return "rejected", move.refusal, ()
    if move.actions:
        applied = [n.command for n in notices if n.status == "applied"]
        refused = [n.command for n in notices if n.status in ("refused", "ambiguous")]
        reason = "applied: " + "; ".join(applied)
        if refused:
            reason += " — refused: " + "; ".join(refused)
        return "applied", reason, tuple(applied)
    if answered_only(move):
        asked = [n.command for n in notices if n.status == "confirm"]
        if asked and not move.wants:
            return "applied", "asked to confirm: " + "; ".join(asked), ()
        if not move.wants:
            already = [n for n in notices if n.status == "already"]
            return "rejected", "already done: " + "; ".join(n.command for n in already), ()
        return "applied", "sent: " + ", ".join(move.wants), ()
    reason = "; ".join(f"{n.command}: {n.message}" for n in notices if n.status != "applied")
    return "rejected", reason[:2000], ()


def logged_auto(session: Session, game_id: int) -> Callable[[int], bool | None]:
    """Whether the logged action ``seq`` of the game was made for its player (None:
    not written yet, as in a batch that holds its writes back)."""

    def auto(seq: int) -> bool | None:
        return session.exec(
            select(m.ActionLog.auto).where(m.ActionLog.game_id == game_id, m.ActionLog.seq == seq)
        ).first()

    return auto


def auto_moves(game: Game, game_row: m.Game) -> list[tuple[int | None, dict[str, Any], bool]]:
    """Forced moves (a go, a single legal card) and the computer's moves, applied now."""
    out: list[tuple[int | None, dict[str, Any], bool]] = []
    robots = set(game_row.settings.get("computer", ()))
    levels = {seat: seat_level(game_row, seat) for seat in robots}
    while not game.is_over:
        action = game.forced_action()
        if action is None and robots:
            for seat in game.to_act():
                if seat in robots:
                    # The computer decides from its seat's view alone: the archive's
                    # audit (`engine.audit`) re-derives this move from the same view.
                    view = computer.computer_view(game, seat)
                    action = computer.computer_move(view, levels[seat])
                    break
        if action is None:
            break
        game.apply(action)
        out.append((action.seat, action_to_json(action), True))
    return out


def log_moves(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    game: Game,
    actions: Sequence[tuple[int | None, dict[str, Any], bool]],
    inbound_id: int | None,
    now: datetime,
    seats: Sequence[Seated] = (),
) -> None:
    """Log the new actions of ``game`` and restart its clocks (one UPDATE of the game;
    a player to move who is away has no clock running until back: see `clock_start`)."""
    assert game_row.id is not None
    append_actions(
        session,
        game_row.id,
        game_row.action_count,
        actions,
        inbound_id,
        now=now,
        state_hash=game.state_hash(),
        also=clock_values(ctx, game, now, clock_start(game, seats, now)),
    )
    if game.is_over:
        rate(ctx, session, game_row, game, seats)


def after_moves(
    ctx: Context, session: Session, game_row: m.Game, game: Game, now: datetime
) -> None:
    """Restart the game's clocks after a move; record the outcome when it is over."""
    update_row(session, game_row, **clock_values(ctx, game, now))
    if game.is_over:
        rate(ctx, session, game_row, game)


def rate(
    ctx: Context, session: Session, game_row: m.Game, game: Game, seats: Sequence[Seated] = ()
) -> None:
    """The game just ended (its status written as finished in this transaction): rate it
    in the stored standings, in the same transaction."""

    rate_finished(ctx, session, game_row, game, seats or None)


def clock_values(
    ctx: Context, game: Game | None, now: datetime, start: datetime | None = None
) -> dict[str, Any]:
    """The game row's clocks after a move (and its outcome when it is over); they run
    from ``start`` (default: now), and from the delivery of the turn mail of the player
    to move if that comes later (`pbem.store.delivery`). ``game`` None: a fair game not
    dealt yet."""
    reminder = timedelta(hours=ctx.settings.reminder_hours)
    timeout = timedelta(days=ctx.settings.timeout_days)
    begin = start or now
    values: dict[str, Any] = {
        "last_move_at": now,
        "clock_from": begin,
        "reminders_sent": 0,
        "next_reminder_at": begin + reminder if ctx.settings.reminder_hours else None,
        "deadline_at": begin + timeout if ctx.settings.timeout_days else None,
    }
    if game is not None and game.is_over and game.outcome is not None:
        values.update(
            status=m.GameStatus.FINISHED.value,
            outcome=game.outcome.to_json(),
            finished_at=now,
            next_reminder_at=None,
            deadline_at=None,
        )
    return values


def name_seats(message: str, seats: Sequence[Seated]) -> str:
    """The engine's "seat 1" in a message, as the player's name."""

    def name(match: re.Match[str]) -> str:
        number = int(match.group(1))
        return seats[number].name if 0 <= number < len(seats) else match.group(0)

    return re.sub(r"\bseat (\d+)\b", name, message)


def describe_legal(game: Game, seat: int, seats: Sequence[Seated]) -> str:
    """What ``seat`` may do now, in words, for a refusal."""
    if game.is_over:
        return "nothing: the game is over"
    to_act = game.to_act()
    if seat not in to_act:
        names = " and ".join(seats[s].name for s in to_act) or "nobody"
        return f"wait: it is {names}'s turn"
    legal = game.legal_actions(seat)
    if not legal:
        return "nothing right now"
    first = legal[0]
    kind = type(first).__name__
    if kind == "Discard":
        need = len(first.cards)  # type: ignore[union-attr]
        held = " ".join(str(c) for c in sorted(game.holding(seat)))
        return f"discard {need} of {held}"
    if kind in ("Play", "Go"):
        return " or ".join(str(a) for a in legal)
    if kind == "Claim":
        return "count N (the points in your hand), e.g. 'count 8'"
    return " or ".join(str(a) for a in legal)
