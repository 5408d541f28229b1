"""settings: a player's own settings, set by mail — in a game mail or to the plain address.

``mail all`` / ``mail turns`` (how often), ``mail text`` / ``mail html`` / ``mail both``
(which parts each mail carries), ``mail replay on|off`` (whether the game-over mail
attaches the game's replay page), ``name`` (the name the other players see), ``stop`` /
``start`` (no mail from the service but the answers to the player's own mail) and
``digest`` / ``digest off`` (one mail a day instead of the news of moves). Each is
kept on the player's row, so it holds in every game of theirs; each is answered with a
notice saying what now holds. ``away`` / ``back`` live in `pbem.service.game.away`. Nothing
here writes mail.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session

from engine import InvalidSyntaxError
from pbem.commands import Command, mail_frequency, mail_parts, mail_replay
from pbem.names import NAME_LIMIT, clean_name
from pbem.render import Notice
from pbem.service.context import Context
from pbem.service.game.away import come_back, go_away
from pbem.store import models as m
from pbem.store._sql import update_row

_PARTS_WORDS = {
    "text": "Your mails will carry plain text only (no HTML part).",
    "html": "Your mails will carry HTML only (no plain-text part).",
    "both": "Your mails will carry both plain text and HTML.",
}


def apply_setting(
    ctx: Context, session: Session, player: m.Player, cmd: Command, now: datetime
) -> Notice:
    """Apply one setting command (a verb of `pbem.commands.SETTING_VERBS`) to ``player``'s
    row: an ``applied`` notice saying what now holds, or a ``refused`` one saying why."""
    if cmd.verb == "away":
        return go_away(ctx, session, player, cmd, now)
    if cmd.verb == "back":
        return come_back(ctx, session, player, cmd, now)
    if cmd.verb == "mail":
        return set_mail(session, player, cmd)
    if cmd.verb == "name":
        return set_name(session, player, cmd)
    if cmd.verb == "stop":
        update_row(session, player, stopped=True)
        return Notice(
            "applied",
            str(cmd),
            "You will get no more mail from the service but the answers to your own "
            "mail. Your games go on: your clock still runs, and the game's timeout "
            "applies when you do not move in time. Send 'start' to get your mails again.",
        )
    if cmd.verb == "digest":
        on = cmd.args[:1] != ("off",)
        if on and not player.digest:
            # From the next day's digest on: none at once beside this answer.
            update_row(session, player, digest=True, **start_digests(player, now))
        else:
            update_row(session, player, digest=on)
        if on:
            return Notice(
                "applied",
                str(cmd),
                "Digest mode: no mail after moves while it is not your turn, and from "
                f"tomorrow one mail a day (about {ctx.settings.digest_hour:02d}:00 UTC) "
                "listing the games waiting on you. You still get the mail when it becomes "
                "your turn, and the answers to your own mail. Send 'digest off' to go back.",
            )
        return Notice(
            "applied", str(cmd), "Digest off: you get the game mails as the moves are made."
        )
    if cmd.verb == "start":
        update_row(session, player, stopped=False)
        return Notice("applied", str(cmd), "You will get your game mails again.")
    raise ValueError(f"not a setting: {cmd.verb!r}")


def set_mail(session: Session, player: m.Player, cmd: Command) -> Notice:
    """``mail all|turns`` and ``mail text|html|both``: each word sets its own choice."""
    choices = "mail all, mail turns, mail text, mail html, mail both, mail replay on|off"
    try:
        every = mail_frequency(cmd)
        parts = mail_parts(cmd)
        replay = mail_replay(cmd)
    except InvalidSyntaxError as exc:
        return Notice("refused", str(cmd), str(exc), choices)
    if every is None and parts is None and replay is None:
        return Notice(
            "refused",
            str(cmd),
            "mail how? 'mail all' or 'mail turns' (how often), "
            "'mail text', 'mail html' or 'mail both' (which parts), "
            "'mail replay on' or 'mail replay off' (the replay page with the result)",
            choices,
        )
    said: list[str] = []
    changes: dict[str, object] = {}
    if every is not None:
        changes["mail_all"] = every
        said.append(
            "You will get a mail after every move."
            if every
            else "You will get a mail when it is your turn or there is news "
            "(not after each of your own moves)."
        )
    if parts is not None:
        changes["mail_parts"] = parts
        said.append(_PARTS_WORDS[parts])
    if replay is not None:
        changes["mail_replay"] = replay
        said.append(
            "The mail with a game's result will carry its replay page (an HTML file)."
            if replay
            else "The mail with a game's result will carry no replay page."
        )
    update_row(session, player, **changes)
    return Notice("applied", str(cmd), " ".join(said))


def set_name(session: Session, player: m.Player, cmd: Command) -> Notice:
    """``name Alice Smith``: the display name, cleaned as every name is
    (`pbem.names.clean_name`: control, format and invisible characters removed, spaces
    collapsed, no encoded-word markers), cut to `NAME_LIMIT` characters. Nothing left,
    or an address (an "@"), is refused."""
    name = clean_name(" ".join(cmd.args), NAME_LIMIT)
    if not name:
        return Notice("refused", str(cmd), "name what? e.g. 'name Alice Smith'", "name Alice Smith")
    if "@" in name:
        return Notice(
            "refused",
            f"name {name}",
            "a name, not an address: the other players never see your address",
            "name Alice Smith",
        )
    update_row(session, player, display_name=name)
    return Notice("applied", f"name {name}", f"Your name is now {name}.")


def start_digests(player: m.Player, now: datetime) -> dict[str, str]:
    """The player row's changes that turn digest mode on from the next day's digest:
    today's counts as sent, so none goes at once beside the answer to ``digest``."""
    return {"digest_day": max(player.digest_day or "", now.date().isoformat())}
