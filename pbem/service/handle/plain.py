"""plain: a known player's mail that names no game of theirs.

Written to the plain service address (or with a token of no game of theirs): taken as
their only game's when they have exactly one (intake's chain then checks it as that
seat's mail), else answered — their own settings applied and confirmed, help, a move
to a watched game refused, or "Which game?" with each game's own reply address.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session

from pbem.commands import GAME_VERBS, SETTING_VERBS
from pbem.mail.reading import IncomingMail
from pbem.mail.tokens import find_tokens
from pbem.render import render_help_games, render_which_game
from pbem.service import policy
from pbem.service.context import (
    Context,
    Outcome,
    Seated,
    Table,
    finish,
    seats_of,
)
from pbem.service.game.lines import game_line
from pbem.service.game.settings import apply_setting
from pbem.service.handle import confirmations, watch
from pbem.service.moves import read_commands
from pbem.service.send import answers, outside, watchers
from pbem.store import models as m
from pbem.store.games import games_for_player, table_by_token


def without_token(
    ctx: Context,
    session: Session,
    row: m.Inbound,
    mail: IncomingMail,
    player: m.Player,
    now: datetime,
) -> Table | Outcome:
    """A known player's mail that named no game of theirs.

    A mail carrying no token at all (written to the plain service address) from a
    player with exactly one game in progress is that game's: its table is returned, to
    be checked and applied as if it carried the seat's token — unless it only asks
    for ``help``. Otherwise the player is answered with their games and their own
    reply address for each — with the command language when they asked for ``help`` —
    or, when it only sets the player's own settings (``mail``, ``name``, ``stop``,
    ``start``, ``away``, ``back``), they are applied and confirmed (the other players
    told of ``away`` / ``back``); and the outcome is returned.
    """
    assert row.id is not None and player.id is not None
    named_a_token = bool(find_tokens(mail, ctx.settings.local_part, ctx.settings.domain))
    games = [
        g
        for g in games_for_player(session, player.id)
        if g.status
        in (m.GameStatus.ACTIVE.value, m.GameStatus.PAUSED.value, m.GameStatus.CUTTING.value)
    ]
    parsed = read_commands(mail)
    verbs = {c.verb for c in parsed.commands}
    help_only = "help" in verbs and not verbs & set(GAME_VERBS)
    watched = watchers.watched_reply(mail, ctx.settings.domain)
    if watched is not None and verbs & set(GAME_VERBS):
        # A move in answer to an observer mail: never applied, not even to a game of
        # the sender's own.
        return watch.refuse_move(ctx, session, row, mail, player, [watched], now)
    if len(games) == 1 and not named_a_token and not help_only:
        token = next(
            s.seat.token for s in seats_of(session, games[0].id or 0) if s.player.id == player.id
        )
        found = table_by_token(session, token, wait=ctx.deferred is None)
        if found is not None:
            game_row, seated, seat = found
            return game_row, [Seated(s, p) for s, p in seated], seat
    if verbs and verbs <= set(SETTING_VERBS):
        # Only the player's own settings: no game needed.
        decision = policy.decide(ctx, session, ctx.senders[row.id], "settings")
        if decision.verdict == policy.Verdict.CONFIRM:
            asked = "; ".join(str(c) for c in parsed.commands)
            return confirmations.request(ctx, session, row, mail, "settings", now, asked=asked)
        if not decision.allowed:
            return finish(ctx, session, row, "ignored", decision.reason, sender=player.email)
        notices = [apply_setting(ctx, session, player, c, now) for c in parsed.commands]
        applied = [n.command for n in notices if n.status == "applied"]
        for cmd, notice in zip(parsed.commands, notices, strict=True):
            if notice.status == "applied" and cmd.verb in ("away", "back"):
                answers.tell_away(ctx, session, player, cmd.verb, f"w{row.id}", now)
        outside.error_reply(
            ctx,
            session,
            player,
            row.id,
            "settings",
            "Your settings",
            notices,
            now,
            answering=mail.message_id,
        )
        if applied:
            return finish(
                ctx, session, row, "applied", "settings: " + "; ".join(applied), sender=player.email
            )
        reason = "; ".join(f"{n.command}: {n.message}" for n in notices)
        return finish(ctx, session, row, "rejected", reason[:2000], sender=player.email)
    if not games and verbs & set(GAME_VERBS):
        watching = [g.id for g in watch.watching(session, player.id) if g.id is not None]
        if watching:
            return watch.refuse_move(ctx, session, row, mail, player, watching, now)
    lines = [game_line(ctx, session, g, player) for g in games]
    if "help" in verbs:
        sent = outside.answer(
            ctx, session, player, row.id, "help", render_help_games(lines), now, mail.message_id
        )
        why = (
            "sent: help (no game named)"
            if sent
            else "help: no answer may go now (repeat, or policy)"
        )
        return finish(ctx, session, row, "applied", why, sender=player.email)
    written = "\n".join(c.line for c in parsed.commands)
    which = render_which_game(lines, command=written)
    outside.answer(ctx, session, player, row.id, "no-game", which, now, mail.message_id)
    return finish(ctx, session, row, "rejected", "no valid game token", sender=player.email)
