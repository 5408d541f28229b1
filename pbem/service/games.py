"""games: the admin's operations on games — new, rematch, resend, pause / resume /
abort, export and import — each in a transaction of its own."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlmodel import Session

from engine import EngineError, Game, InvalidSyntaxError, action_to_json, player_view
from engine import Settings as GameSettings
from pbem.commands import computer_level
from pbem.mail.tokens import new_token
from pbem.render import Notice, render_turn
from pbem.render.status import STATUS_WORDS, render_aborted, render_status_change
from pbem.service import notify, play, policy
from pbem.service.context import (
    DEFAULT_LEVEL,
    Context,
    ServiceError,
    load_game,
    seat_level,
    seats_of,
)
from pbem.store import models as m
from pbem.store.db import session_scope
from pbem.store.games import append_actions, create_game, log_cut
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


def start_game(
    ctx: Context,
    session: Session,
    players: Sequence[tuple[str, str | None]],
    *,
    target: int = 121,
    muggins: bool = False,
    skunk: str = "skunk",
    seed: str | None = None,
    computer: Sequence[int] = (),
    first_dealer: int | None = None,
    answering: tuple[str, str | None] | None = None,
    level: str | None = None,
    levels: Mapping[int, str] | None = None,
    server_seed: str | None = None,
    match_id: int | None = None,
    match_info: dict[str, Any] | None = None,
    rematch_of: int | None = None,
    joined: Sequence[str] | None = None,
    cuts: Mapping[int, str] | None = None,
    ask_cut: bool = True,
) -> int:
    """`new_game` in the caller's transaction (a game started by mail). Raises
    ``ServiceError`` for bad addresses, settings or levels, before writing anything.

    Each computer seat plays at ``levels[seat]``, else ``level``, else `DEFAULT_LEVEL`
    (kept in the game's settings: ``levels``, seat → level). The game gives hints
    (``hint``) when one player plays the computer.

    ``answering`` — (address, Message-ID): that player's first mail is threaded after
    the mail that asked for the game.

    Without a ``seed``, and with the ``fair_deals`` setting on, the game is dealt by the
    verifiable-deal protocol (`pbem.service.cutting`): a secret server seed
    (``server_seed``, the one a challenge committed to, or a new one), and the first
    mail asks every human seat to cut; no engine game exists until they all have. A
    ``seed`` given (the admin's ``--seed``, for tests and demos) makes a game whose
    deals are not verifiable. ``match_id``, ``match_info``: the game is one game of that
    match (`pbem.service.matches`); ``rematch_of``: the finished game it follows.

    ``joined``: the addresses whose players joined the game themself (None: everyone — the
    admin seated them, and their mailboxes count as confirmed); the other seats get the
    game's first mail and no other until their player answers it with the seat's token
    (`pbem.service.policy`).

    ``cuts``: seat → entropy text of the human seats that have cut already, by answering a
    mail that showed ``server_seed``'s commitment (a rematch, or the next game of a
    match: `pbem.service.cutting.answer_cut_by`); when every human has, the game is
    dealt at once and its first mail holds the cards. ``ask_cut`` False: the mail that
    showed the commitment asked for the cuts, so no cut request goes out now."""
    from pbem.mail.address import is_valid_address, normalize_address

    emails = [normalize_address(e) for e, _ in players]
    for (raw, _), email in zip(players, emails, strict=True):
        if email and not email.isascii():
            raise ServiceError(
                f"{raw!r}: only plain ASCII addresses can be mailed "
                "(an international domain in its xn-- form)"
            )
        if not email or not is_valid_address(email):
            raise ServiceError(f"{raw!r} is not an email address")
    if len(set(emails)) != len(emails):
        raise ServiceError("a player cannot sit twice at one game")
    follows: dict[str, Any] | None = None
    if rematch_of is not None:
        follows = follows_record(ctx, session, rematch_of)
        if first_dealer is not None and first_dealer != follows["first_dealer"]:
            raise ServiceError(
                f"the loser of game {rematch_of} deals first: seat {follows['first_dealer']}, "
                f"not {first_dealer}"
            )
        first_dealer = int(follows.pop("first_dealer"))
    elif first_dealer is not None:
        raise ServiceError("the first dealer is drawn, unless the game follows another")
    try:
        settings = GameSettings(
            players=len(players),
            target=target,
            skunk=skunk,
            muggins=muggins,
            first_dealer=first_dealer,
        )
    except EngineError as exc:
        raise ServiceError(str(exc)) from exc
    seat_levels = computer_levels_for(computer, level, levels)
    fair = seed is None and (ctx.settings.fair_deals or server_seed is not None)
    if not fair:
        seed = seed or secrets.token_hex(16)
    now = ctx.clock()
    rows = [
        get_or_create_player(session, email, name, now=now)
        for email, (_, name) in zip(emails, players, strict=True)
    ]
    thread = f"game-{secrets.token_hex(6)}@{ctx.settings.domain}"
    stored = settings.to_json()
    if computer:
        stored["computer"] = sorted(computer)
        stored["levels"] = {str(seat): name for seat, name in sorted(seat_levels.items())}
    game_row = create_game(
        session,
        stored,
        seed,
        rows,
        [new_token() for _ in rows],
        now=now,
        thread_id=thread,
        match_id=match_id,
        match_info=match_info,
        rematch_of=rematch_of,
    )
    assert game_row.id is not None
    if follows is not None:
        game_row.follows = follows
        session.add(game_row)
    if len(set(computer)) == len(players) - 1:
        game_row.hints = True  # one player against the computer
    if computer:
        # A game against the computer may be watched; a human game when all agree.
        game_row.observers = True
        session.add(game_row)
    if joined is None:
        humans = [e for seat, e in enumerate(emails) if seat not in set(computer)]
        policy.seated_by_admin(session, humans, now)
    else:
        came = {normalize_address(a) for a in joined}
        for seated in seats_of(session, game_row.id):
            if seated.player.email not in came:
                seated.seat.joined = False
                session.add(seated.seat)
        session.flush()
    if answering is not None and answering[1]:
        for seated in seats_of(session, game_row.id):
            if seated.player.email == normalize_address(answering[0]):
                seated.seat.last_mail_id = answering[1].strip().strip("<>")
                session.add(seated.seat)
    if fair:
        return begin_fair(ctx, session, game_row, server_seed, now, cuts or {}, ask_cut)
    assert seed is not None
    game = Game(settings, seed)
    auto = play.auto_moves(game, game_row)
    if auto:
        append_actions(session, game_row.id, 0, auto, None, now=now, state_hash=game.state_hash())
    play.after_moves(ctx, session, game_row, game, now)
    seats = seats_of(session, game_row.id)
    notify.turn_mails(ctx, session, game_row, game, seats, 0, {}, None, now)
    return game_row.id


def follows_record(ctx: Context, session: Session, game_id: int) -> dict[str, Any]:
    """What a rematch or a match's next game records of game ``game_id``, the one it
    follows (the archive's ``deal_proof.follows``): its final state hash, scores, winner
    and last dealer, the rule, and (key ``first_dealer``, not stored) the seat that rule
    makes deal first. ServiceError when that game is not over."""
    from engine.match import first_dealer_after

    game = load_game(ctx, session, get_game(ctx, session, game_id))
    if not game.is_over or game.outcome is None:
        raise ServiceError(f"game {game_id} is not over yet")
    return {
        "game": game_id,
        "state_hash": game.state_hash(),
        "scores": list(game.outcome.scores),
        "winner": game.outcome.winner,
        "dealer": game.dealer,
        "rule": "loser-deals-first",  # engine.match.first_dealer_after
        "first_dealer": first_dealer_after(game),
    }


def begin_fair(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    server_seed: str | None,
    now: datetime,
    cuts: Mapping[int, str] | None = None,
    ask_cut: bool = True,
) -> int:
    """A new game dealt by the verifiable-deal protocol: commit, take the ``cuts`` made
    already, then ask for the others (or deal at once when every human has cut, or none
    sits at it)."""
    from pbem.service import cutting

    assert game_row.id is not None
    cutting.commit_new(game_row, server_seed, cuts)
    for seat, text in sorted((cuts or {}).items()):
        # A cut by another word (accept, rematch, next): its mail's Message-ID leads it.
        log_cut(session, game_row.id, int(seat), text.split(" ", 1)[0], text, now)
    game_row.status = m.GameStatus.CUTTING.value
    session.add(game_row)
    session.flush()
    seats = seats_of(session, game_row.id)
    game = cutting.begin(ctx, session, game_row, seats, now, ask=ask_cut)
    if game is not None:
        told = cutting.receipts(game_row)
        notify.turn_mails(ctx, session, game_row, game, seats, 0, told, None, now)
    return game_row.id


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


def computer_levels_for(
    computer: Sequence[int], level: str | None, levels: Mapping[int, str] | None
) -> dict[int, str]:
    """The level of each computer seat; ``ServiceError`` for a level the computer does
    not play, or a level given without a computer seat."""
    if (level is not None or levels) and not computer:
        raise ServiceError("a level is for the computer: no seat of this game is the computer")
    out: dict[int, str] = {}
    for seat in computer:
        chosen = (levels or {}).get(seat) or level or DEFAULT_LEVEL
        try:
            out[seat] = computer_level(chosen)
        except InvalidSyntaxError as exc:
            raise ServiceError(str(exc)) from exc
    return out


def get_game(ctx: Context, session: Session, game_id: int) -> m.Game:
    game_row = session.get(m.Game, game_id)
    if game_row is None:
        raise ServiceError(f"no game {game_id}")
    return game_row


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
            from pbem.service import cutting

            seats = seats_of(session, game_id)
            closing = game_row.status != m.GameStatus.CUTTING.value
            for seat in cutting.humans(game_row):
                cutting.send_cut_mail(
                    ctx, session, game_row, seats, seat, "status", tag, now, closing=closing
                )
            return len(cutting.humans(game_row))
        game = load_game(ctx, session, game_row)
        seats = seats_of(session, game_id)
        aborted = game_row.status == m.GameStatus.ABORTED.value
        for seated in seats:
            view = player_view(game, seated.seat.seat, len(game.events))
            about = notify.mail_context(
                game_row,
                seats,
                seated.seat.seat,
                [],
                len(game.events),
                reply_to=notify.seat_reply_to(ctx, seated),
            )
            if aborted:
                mail = render_aborted(view, about, game_row.status_reason)
            else:
                mail = render_turn(view, about)
            notify.enqueue(
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
        from pbem.service import cutting

        note = Notice("info", "", f"The admin aborted this game: {reason}. No cards were dealt.")
        seats = seats_of(session, game_row.id)
        for seat in cutting.humans(game_row):
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
        about = notify.mail_context(
            game_row,
            seats,
            seated.seat.seat,
            [],
            len(game.events),
            reply_to=notify.seat_reply_to(ctx, seated),
        )
        mail = render_status_change(view, about, status, reason)
        attach = None if status == "aborted" else view.to_json()
        notify.enqueue(
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
            from pbem.service.cutting import unplayed_archive

            return unplayed_archive(game_row, seats_of(session, game_id), cuts)
        game = load_game(ctx, session, game_row)
        return notify.game_archive(game_row, game, seats_of(session, game_id), cuts)


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
    ``levels``, as `new_game` stores them; none when it lists none): kept only when
    every computer move re-derives from its seat's view (`engine.audit`); ServiceError
    otherwise."""
    from engine.audit import audit_archive

    if not data.get("computer"):
        return {}
    try:
        audit = audit_archive(data)
    except EngineError as exc:
        raise ServiceError(f"the archive's computer seats are unreadable: {exc}") from exc
    if not audit.ok:
        raise ServiceError(f"the archive's computer moves do not re-derive: {audit.message}")
    return {
        "computer": [s.seat for s in audit.seats],
        "levels": {str(s.seat): s.level for s in audit.seats},
    }


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
