"""games: the admin's operations on games — new, rematch, resend, pause / resume /
abort, export and import — each in a transaction of its own."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlmodel import Session

from engine import EngineError, Game, action_to_json, player_view
from pbem.mail.tokens import new_token
from pbem.render import Notice, render_turn
from pbem.render.status import STATUS_WORDS, render_aborted, render_status_change
from pbem.service.context import (
    Context,
    ServiceError,
    load_game,
    seat_level,
    seats_of,
)
from pbem.service.game import deals
from pbem.service.game.deals import unplayed_archive
from pbem.service.ops import cutting, play
from pbem.service.ops.start import get_game, start_game
from pbem.service.send import archive, envelope, turns
from pbem.store import models as m
from pbem.store.commitlog import log_end
from pbem.store.counts import ABORTS, count_event
from pbem.store.db import session_scope
from pbem.store.games import append_actions, create_game
from pbem.store.outbox import cancel_game_mail
from pbem.store.players import get_or_create_player

DEFAULT_REASONS = {
    "paused": "the game is on hold for a while",
    "active": "the game can go on",
    "aborted": "the game will not be finished",
}
"""What the players are told when the admin pauses, resumes or aborts a game without
saying why."""


def new_game(
    ctx: Context,
    players: Sequence[tuple[str, str | None]],
    *,
    target: int = 121,
    muggins: bool = False,
    skunk: str = "skunk",
    seed: str | None = None,
    computer: Sequence[int] = (),
    first_dealer: int | None = None,
    level: str | None = None,
    levels: Mapping[int, str] | None = None,
    rematch_of: int | None = None,
) -> int:
    """Create a game for (email, display name) pairs and mail everyone their hand.

    ``level`` is the level of every computer seat (``levels``: seat by seat; default:
    `DEFAULT_LEVEL`)."""
    with session_scope(ctx.db) as session:
        return start_game(
            ctx,
            session,
            players,
            target=target,
            muggins=muggins,
            skunk=skunk,
            seed=seed,
            computer=computer,
            first_dealer=first_dealer,
            level=level,
            levels=levels,
            rematch_of=rematch_of,
        )


def rematch(ctx: Context, game_id: int) -> int:
    """The next game of a match: same players and settings; the loser deals first."""
    from engine.match import first_dealer_after

    with Session(ctx.db) as session:
        game_row = get_game(ctx, session, game_id)
        game = load_game(ctx, session, game_row)
        if not game.is_over:
            raise ServiceError(f"game {game_id} is not over yet")
        people = [(s.player.email, s.player.display_name) for s in seats_of(session, game_id)]
        settings = game.settings
        robots = list(game_row.settings.get("computer", ()))
        levels = {seat: seat_level(game_row, seat) for seat in robots}
    return new_game(
        ctx,
        people,
        target=settings.target,
        muggins=settings.muggins,
        skunk=settings.skunk,
        computer=robots,
        first_dealer=first_dealer_after(game),
        levels=levels,
        rematch_of=game_id,
    )


def resend(ctx: Context, game_id: int) -> int:
    """Mail every player their current view again. Returns the number of mails queued.

    A finished game's mail is its game-over mail (the result, no move offered); an
    aborted game's says it was aborted, why, and the score it stopped at.
    """
    now = ctx.clock()
    with session_scope(ctx.db) as session:
        game_row = get_game(ctx, session, game_id)
        tag = f"r{int(now.timestamp() * 1000)}"
        if game_row.seed is None:  # a fair game waiting for its cuts: the cut request
            seats = seats_of(session, game_id)
            closing = game_row.status != m.GameStatus.CUTTING.value
            for seat in deals.humans(game_row):
                cutting.send_cut_mail(
                    ctx, session, game_row, seats, seat, "status", tag, now, closing=closing
                )
            return len(deals.humans(game_row))
        game = load_game(ctx, session, game_row)
        seats = seats_of(session, game_id)
        aborted = game_row.status == m.GameStatus.ABORTED.value
        for seated in seats:
            view = player_view(game, seated.seat.seat, len(game.events))
            about = turns.mail_context(
                game_row,
                seats,
                seated.seat.seat,
                [],
                len(game.events),
                reply_to=envelope.seat_reply_to(ctx, seated),
            )
            if aborted:
                mail = render_aborted(view, about, game_row.status_reason)
            else:
                mail = render_turn(view, about)
            envelope.enqueue(
                ctx,
                session,
                game_row,
                seated,
                mail,
                "aborted" if aborted else "status",
                tag,
                now,
                view_json=None if aborted else view.to_json(),
            )
        return len(seats)


def set_status(ctx: Context, game_id: int, status: str, reason: str | None = None) -> m.Game:
    """Pause, resume or abort a game (the clocks stop while it is paused), and mail
    every player what happened and why (``reason``, or a default one): a resumed
    game's mail says whose turn it is; after an abort no mail offers a move again —
    the game's mail not yet sent is cancelled and its clocks are cleared."""
    now = ctx.clock()
    reason = " ".join((reason or "").split())[:300] or DEFAULT_REASONS[status]
    with session_scope(ctx.db) as session:
        game_row = session.get(m.Game, game_id, with_for_update=True)
        if game_row is None:
            raise ServiceError(f"no game {game_id}")
        current = game_row.status
        allowed = {
            "paused": {"active"},
            "active": {"paused"},
            "aborted": {"active", "paused", "cutting"},
        }[status]
        if current not in allowed:
            raise ServiceError(f"game {game_id} is {current}; cannot make it {status}")
        if status == "paused":
            game_row.paused_at = now
        elif status == "active" and game_row.paused_at is not None:
            gap = now - game_row.paused_at
            if game_row.next_reminder_at is not None:
                game_row.next_reminder_at += gap
            if game_row.deadline_at is not None:
                game_row.deadline_at += gap
            game_row.clock_from = (game_row.clock_from or game_row.last_move_at) + gap
            game_row.paused_at = None
        elif status == "aborted":
            game_row.next_reminder_at = game_row.deadline_at = None
            cancel_game_mail(session, game_id, f"game {game_id} was aborted")
            count_event(session, ABORTS)
            if game_row.match_id is not None:
                # The match ends with its aborted game, without a winner.
                match = session.get(m.Match, game_row.match_id, with_for_update=True)
                if match is not None and match.status == m.MatchStatus.ACTIVE.value:
                    match.status = m.MatchStatus.FINISHED.value
                    match.finished_at = now
                    session.add(match)
        game_row.status = status
        game_row.status_reason = reason
        game_row.updated_at = now
        session.add(game_row)
        session.flush()
        if status == "aborted":
            log_end(
                session,
                game_id,
                game_row.commitment,
                game_row.server_seed,
                dealt=game_row.seed is not None,
                aborted=True,
                now=now,
            )
        tell_status(ctx, session, game_row, status, reason, now)
        session.flush()
        session.expunge(game_row)
        return game_row


def tell_status(
    ctx: Context, session: Session, game_row: m.Game, status: str, reason: str, now: datetime
) -> None:
    """Mail every player that the game is now ``status``, and why."""
    assert game_row.id is not None
    if game_row.seed is None:  # never dealt: the players were cutting for the deal
        note = Notice("info", "", f"The admin aborted this game: {reason}. No cards were dealt.")
        seats = seats_of(session, game_row.id)
        for seat in deals.humans(game_row):
            cutting.send_cut_mail(
                ctx,
                session,
                game_row,
                seats,
                seat,
                "aborted",
                f"s{int(now.timestamp() * 1000)}",
                now,
                notices=[note],
                unsolicited=True,
                closing=True,
            )
        return
    game = load_game(ctx, session, game_row)
    seats = seats_of(session, game_row.id)
    kind = STATUS_WORDS[status]
    tag = f"s{int(now.timestamp() * 1000)}"
    for seated in seats:
        view = player_view(game, seated.seat.seat, len(game.events))
        about = turns.mail_context(
            game_row,
            seats,
            seated.seat.seat,
            [],
            len(game.events),
            reply_to=envelope.seat_reply_to(ctx, seated),
        )
        mail = render_status_change(view, about, status, reason)
        attach = None if status == "aborted" else view.to_json()
        envelope.enqueue(
            ctx, session, game_row, seated, mail, kind, tag, now, view_json=attach, unsolicited=True
        )


def export(ctx: Context, game_id: int) -> dict[str, Any]:
    """A game's archive; a fair game not dealt has one too: nothing dealt, the cuts so
    far, and its server seed once it is aborted."""
    from pbem.store.games import cut_mails

    with Session(ctx.db) as session:
        game_row = get_game(ctx, session, game_id)
        cuts = cut_mails(session, game_id)
        if game_row.seed is None:
            return unplayed_archive(game_row, seats_of(session, game_id), cuts)
        game = load_game(ctx, session, game_row)
        return archive.game_archive(game_row, game, seats_of(session, game_id), cuts)


def import_archive(ctx: Context, data: dict[str, Any]) -> int:
    """Store an exported game (verified by replay) as a new game; no mail is sent."""
    from engine.archive import load

    try:
        game = load(data)
    except EngineError as exc:
        raise ServiceError(f"the archive does not replay: {exc}") from exc
    people = archive_players(data.get("players"), game.players)
    proof = imported_proof(data, game)
    stored = game.settings.to_json()
    stored.update(imported_computer(data))
    if proof is not None and isinstance(data["deal_proof"].get("game"), int):
        # pbem-deal/3: the key binds the number the game was dealt under, not the new id.
        stored["deal_game"] = int(data["deal_proof"]["game"])
    now = ctx.clock()
    with session_scope(ctx.db) as session:
        rows = [get_or_create_player(session, email, name, now=now) for email, name in people]
        game_row = create_game(
            session,
            stored,
            game.seed,
            rows,
            [new_token() for _ in rows],
            now=now,
            thread_id=f"game-{secrets.token_hex(6)}@{ctx.settings.domain}",
        )
        assert game_row.id is not None
        actions = [(a.seat, action_to_json(a), False) for a in game.actions]
        if actions:
            append_actions(
                session, game_row.id, 0, actions, None, now=now, state_hash=game.state_hash()
            )
        if proof is not None:
            game_row.commitment, game_row.server_seed, game_row.entropy = proof
            game_row.deal_protocol = str(data["deal_proof"]["protocol"])
        if game.is_over and game.outcome is not None:
            game_row.status = m.GameStatus.FINISHED.value
            game_row.outcome = game.outcome.to_json()
            game_row.finished_at = now
        elif data.get("status") in ("paused", "aborted"):
            game_row.status = str(data["status"])
        session.add(game_row)
        if game_row.status == m.GameStatus.FINISHED.value:
            session.flush()
            play.rate(ctx, session, game_row, game)
        return game_row.id


def imported_proof(
    data: dict[str, Any], game: Game
) -> tuple[str, str, list[dict[str, Any]]] | None:
    """The deal proof of an archive to import: kept only for a finished game whose deals
    verify (a running game's archive reveals no server seed); ServiceError when the
    archive has one that does not verify."""
    from engine.dealcheck import verify_archive
    from engine.fairness import DealProof

    if data.get("deal_proof") is None or not game.is_over:
        return None
    try:
        verdict = verify_archive(data)
    except EngineError as exc:
        raise ServiceError(f"the archive's deal proof is unreadable: {exc}") from exc
    if not verdict.ok:
        raise ServiceError(f"the archive's deals do not verify: {verdict.message}")
    proof = DealProof.from_json(data["deal_proof"])
    assert proof.server_seed is not None
    # A forgotten player's cut stays its SHA-256 alone (`engine.forgetting`).
    entropy = [
        {"seat": e["seat"], "text": e["text"]} if "text" in e else e for e in proof.entries()
    ]
    return proof.commitment, proof.server_seed, entropy


def imported_computer(data: dict[str, Any]) -> dict[str, Any]:
    """The game settings that keep an archive's computer seats (``computer`` and
    ``levels``, as `new_game` stores them) and the moves the computer made for players
    whose time ran out (``timeouts``); none when it lists none: kept only when every
    computer move re-derives from its seat's view (`engine.audit`); ServiceError
    otherwise."""
    from engine.audit import audit_archive, timeout_moves

    if not data.get("computer") and not data.get("timeouts"):
        return {}
    try:
        audit = audit_archive(data)
        timed = timeout_moves(data, int(data["settings"].get("players", 2)))
    except EngineError as exc:
        raise ServiceError(f"the archive's computer seats are unreadable: {exc}") from exc
    if not audit.ok:
        raise ServiceError(f"the archive's computer moves do not re-derive: {audit.message}")
    out: dict[str, Any] = {}
    if audit.seats:
        out["computer"] = [s.seat for s in audit.seats]
        out["levels"] = {str(s.seat): s.level for s in audit.seats}
    if timed:
        out["timeouts"] = [[t.action, t.seat, t.level] for t in timed.values()]
    return out


def archive_players(people: Any, seats: int) -> list[tuple[str, str | None]]:
    """The (address, name) of each seat listed in an archive; ServiceError when the list
    is not one valid, distinct address per seat."""
    from pbem.mail.address import is_valid_address, normalize_address

    if not isinstance(people, list) or len(people) != seats:
        raise ServiceError("the archive must list one player per seat")
    out: list[tuple[str, str | None]] = []
    for seat, person in enumerate(people):
        raw = person.get("email") if isinstance(person, dict) else None
        email = normalize_address(raw) if isinstance(raw, str) else ""
        if not email or not is_valid_address(email):
            raise ServiceError(f"the archive's player {seat} has no valid email address")
        name = person.get("name")
        out.append((email, name if isinstance(name, str) and name.strip() else None))
    if len({email for email, _ in out}) != len(out):
        raise ServiceError("the archive lists one address at two seats")
    return out
