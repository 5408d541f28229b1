"""start: a new game begins — its seats, its settings, its first deal or its cut phase.

`start_game` is the one way a game comes to be (the admin's ``game new``, a lobby's
``new``/``play computer``, an accepted challenge, a rematch, a match's next game): the
players' rows and seats, the house rules, the computer's levels (`computer_levels_for`),
the game it follows (`follows_record`: loser deals first) and, in a fair game, the
commitment and the cuts taken already (`begin_fair`). `get_game` finds a game or says
it does not exist; `STARTED` and `limit_words` are what a lobby answer says.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlmodel import Session

from engine import EngineError, Game, InvalidSyntaxError
from engine import Settings as GameSettings
from pbem.commands import computer_level
from pbem.mail.tokens import new_token
from pbem.service import policy
from pbem.service.context import (
    DEFAULT_LEVEL,
    Context,
    ServiceError,
    load_game,
    seats_of,
)
from pbem.service.game import deals
from pbem.service.ops import cutting, play
from pbem.service.send import turns
from pbem.store import models as m
from pbem.store.commitlog import log_commit
from pbem.store.games import append_actions, create_game, log_cut
from pbem.store.players import get_or_create_player


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
    verifiable-deal protocol (`pbem.service.ops.cutting`): a secret server seed
    (``server_seed``, the one a challenge committed to, or a new one), and the first
    mail asks every human seat to cut; no engine game exists until they all have. A
    ``seed`` given (the admin's ``--seed``, for tests and demos) makes a game whose
    deals are not verifiable. ``match_id``, ``match_info``: the game is one game of that
    match (`pbem.service.ops.matches`); ``rematch_of``: the finished game it follows.

    ``joined``: the addresses whose players joined the game themself (None: everyone — the
    admin seated them, and their mailboxes count as confirmed); the other seats get the
    game's first mail and no other until their player answers it with the seat's token
    (`pbem.service.policy`).

    ``cuts``: seat → entropy text of the human seats that have cut already, by answering a
    mail that showed ``server_seed``'s commitment (a rematch, or the next game of a
    match: `pbem.service.game.deals.cut_text`); when every human has, the game is
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
    turns.turn_mails(ctx, session, game_row, game, seats, 0, {}, None, now)
    return game_row.id


def follows_record(ctx: Context, session: Session, game_id: int) -> dict[str, Any]:
    """What a rematch or a match's next game records of game ``game_id``, the one it
    follows (the archive's ``deal_proof.follows``): its final state hash, scores, winner
    and last dealer, the rule, and (key ``first_dealer``, not stored) the seat that rule
    makes deal first. ServiceError when that game is not over."""
    from engine.match import first_dealer_after

    before = get_game(ctx, session, game_id)
    game = load_game(ctx, session, before)
    if not game.is_over or game.outcome is None:
        raise ServiceError(f"game {game_id} is not over yet")
    return {
        "game": game_id,
        # pbem-deal/3: whoever holds that game's archive checks this record against it.
        "commitment": before.commitment,
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

    assert game_row.id is not None
    cutting.commit_new(game_row, server_seed, cuts)
    # The public commitment log holds the commitment before anyone cuts (`engine.commitlog`).
    log_commit(session, game_row.id, str(game_row.commitment), now)
    for seat, text in sorted((cuts or {}).items()):
        # A cut by another word (accept, rematch, next): its mail's Message-ID leads it.
        log_cut(session, game_row.id, int(seat), text.split(" ", 1)[0], text, now)
    game_row.status = m.GameStatus.CUTTING.value
    session.add(game_row)
    session.flush()
    seats = seats_of(session, game_row.id)
    game = cutting.begin(ctx, session, game_row, seats, now, ask=ask_cut)
    if game is not None:
        told = deals.receipts(game_row)
        turns.turn_mails(ctx, session, game_row, game, seats, 0, told, None, now)
    return game_row.id


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


STARTED = "lobby: started game"
"""How the reason of a mail that started a game begins (the daily limit counts them)."""


def limit_words(ctx: Context, over: str) -> str:
    """What a player is told when `policy.take_new_game` says no (``over``)."""
    if over.startswith("over the daily limit"):
        return (
            f"You started {ctx.settings.max_new_games_per_day} games in the last day, "
            "as many as one may; try again tomorrow."
        )
    return (
        "Games you started by mail to this address still wait for your first answer: "
        "answer one of their mails first (a reply to it shows it was you who asked)."
    )
