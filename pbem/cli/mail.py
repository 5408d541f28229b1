"""Mail and the people it goes to: ``pbem ingest``, ``pbem inbox``, ``pbem outbox`` and
``pbem players``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from pbem.cli.base import app_group, examples, fail, new_table, out, service
from pbem.store.states import InboundStatus, OutboxStatus

if TYPE_CHECKING:
    from datetime import datetime

    from pbem.store import models as m

commands = app_group()  # no name: its commands join the group it is added to (pbem.cli)
outbox_app = app_group(help="Outgoing mail.", no_args_is_help=True)
inbox_app = app_group(help="Received mail and what became of it.", no_args_is_help=True)


@commands.command(epilog=examples("pbem ingest reply.eml"))
def ingest(file: Path) -> None:
    """Feed one raw message (.eml) as if it had arrived in the inbox, and process it."""
    try:
        raw = file.read_bytes()
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror}")
    if not raw.strip():
        fail(f"{file} is empty")
    from pbem.run.wakeup import poke

    svc = service()
    inbound_id, created = svc.receive(raw, "cli")
    if not created:
        out.print(f"already received as inbound {inbound_id}; not processed again")
        return
    result = svc.process(inbound_id)
    poke(svc.db)
    out.print(f"inbound {inbound_id}: {result.status} — {result.reason}", highlight=False)


@outbox_app.command(
    "list", epilog=examples("pbem outbox list", "pbem outbox list --status failed --limit 20")
)
def outbox_list(
    status: Annotated[
        OutboxStatus | None, typer.Option("--status", help="Only mail in this state.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", help="At most this many rows.")] = 50,
) -> None:
    """List outgoing mail, newest first."""
    from sqlmodel import Session, select

    from pbem.store import models as m

    svc = service()
    table = new_table(
        "id",
        "status",
        "kind",
        "game",
        "to",
        "tries",
        "next try / sent",
        "last error",
        title="outbox",
    )
    with Session(svc.db) as session:
        query = select(m.Outbox).order_by(m.Outbox.id.desc()).limit(limit)  # type: ignore[union-attr]
        if status:
            query = query.where(m.Outbox.status == status.value)
        for row in session.exec(query):
            when = row.sent_at or row.next_attempt_at
            table.add_row(
                str(row.id),
                row.status,
                row.kind,
                str(row.game_id or ""),
                row.recipient,
                str(row.attempts),
                when.strftime("%Y-%m-%d %H:%M:%S"),
                (row.last_error or "")[:60],
            )
    out.print(table)


@outbox_app.command("retry", epilog=examples("pbem outbox retry", "pbem outbox retry 41 42"))
def outbox_retry(
    ids: Annotated[
        list[int] | None, typer.Argument(help="Outbox ids (default: every failed one).")
    ] = None,
) -> None:
    """Queue failed mail for another try now."""
    from pbem.run.wakeup import poke
    from pbem.store.db import session_scope
    from pbem.store.outbox import retry_outbox

    svc = service()

    with session_scope(svc.db) as session:
        count = retry_outbox(session, now=svc.clock(), ids=ids or None, all_failed=not ids)
    poke(svc.db)
    out.print(f"{count} messages queued again")


@inbox_app.command("list", epilog=examples("pbem inbox list", "pbem inbox list --status failed"))
def inbox_list(
    status: Annotated[
        InboundStatus | None,
        typer.Option("--status", help="Only mail that ended this way (or is pending)."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit")] = 50,
) -> None:
    """List received mail and what became of it."""
    from sqlmodel import Session

    from pbem.store.inbound import list_inbound

    svc = service()
    table = new_table("id", "status", "rule", "from", "game", "received", "reason", title="inbox")
    with Session(svc.db) as session:
        for row in list_inbound(session, status.value if status else None, limit):
            table.add_row(
                str(row.id),
                row.status,
                row.rule or "",
                row.sender or "",
                str(row.game_id or ""),
                row.received_at.strftime("%Y-%m-%d %H:%M:%S"),
                (row.reason or "").splitlines()[0][:70] if row.reason else "",
            )
    out.print(table)


STATUSES = ("active", "stopped", "bounced", "blocked", "away")


def player_statuses(player: m.Player, now: datetime) -> list[str]:
    """Where a player stands, each that applies: ``blocked`` (by the admin), ``bounced``
    (mail to them bounced), ``stopped`` (they said "stop"), ``away`` (their clocks stand
    still); ``active`` when none does."""
    found = [
        name
        for name, applies in (
            ("blocked", player.blocked),
            ("bounced", player.bounce_count > 0),
            ("stopped", player.stopped),
            ("away", player.away_until is not None and player.away_until > now),
        )
        if applies
    ]
    return found or ["active"]


@commands.command(
    epilog=examples(
        "pbem players",
        "pbem players --status stopped",
        "pbem players --status bounced --status blocked",
        "pbem players --mail-all alice@example.com",
    )
)
def players(
    status: Annotated[
        list[str] | None,
        typer.Option(
            "--status",
            help="Only players with this status: active, stopped, bounced, blocked or away "
            "(repeatable: any of them).",
        ),
    ] = None,
    mail_all: Annotated[
        list[str] | None,
        typer.Option("--mail-all", help="Mail this player after every move (repeatable)."),
    ] = None,
    mail_turns: Annotated[
        list[str] | None,
        typer.Option(
            "--mail-turns",
            help="Mail this player only on their turn or news, the default (repeatable).",
        ),
    ] = None,
) -> None:
    """List players: their status (active, stopped, bounced, blocked, away), how they are
    mailed (all, turns, digest), their bounces; --status filters; --mail-all /
    --mail-turns set how often (players set it themselves by replying "mail all" or
    "mail turns")."""
    from sqlmodel import Session, select

    from pbem.mail.address import normalize_address
    from pbem.service import display_name
    from pbem.store import models as m

    wanted = {s.strip().lower() for s in status or ()}
    unknown = wanted - set(STATUSES)
    if unknown:
        fail(f"no status {sorted(unknown)[0]!r}: use {', '.join(STATUSES)}")
    svc = service()
    choices = [(a, True) for a in mail_all or ()] + [(a, False) for a in mail_turns or ()]
    if choices:
        with Session(svc.db) as session:
            for address, every in choices:
                player = session.exec(
                    select(m.Player).where(m.Player.email == normalize_address(address))
                ).first()
                if player is None:
                    fail(f"no player {address!r}")
                player.mail_all = every
                session.add(player)
            session.commit()
    title = "players" + (f" ({', '.join(sorted(wanted))})" if wanted else "")
    columns = ("id", "name", "address", "status", "mail", "bounces", "last bounce")
    table = new_table(*columns, title=title)
    now = svc.clock()
    with Session(svc.db) as session:
        for p in session.exec(select(m.Player).order_by(m.Player.id)):  # type: ignore[arg-type]
            statuses = player_statuses(p, now)
            if wanted and not wanted & set(statuses):
                continue
            mail = "digest" if p.digest else "all" if p.mail_all else "turns"
            table.add_row(
                str(p.id),
                display_name(p),
                p.email,
                ", ".join(statuses),
                mail,
                str(p.bounce_count),
                (p.last_bounce_reason or "")[:60],
            )
    out.print(table)


player_app = app_group(
    help="One player or mailbox: show its state, block, unblock, unsuppress, forget.",
    no_args_is_help=True,
)


def _set_blocked(address: str, blocked: bool) -> None:
    from sqlmodel import Session

    from pbem.mail.address import is_valid_address, normalize_address
    from pbem.service import utcnow
    from pbem.store.players import get_or_create_player

    email = normalize_address(address)
    if not email or not is_valid_address(email):
        fail(f"{address!r} is not an email address")
    svc = service()
    with Session(svc.db) as session:
        player = get_or_create_player(session, email, now=utcnow())
        player.blocked = blocked
        session.add(player)
        session.commit()
    word = "blocked: it starts no game, is invited to none, and its mail is ignored"
    out.print(f"{email} {word if blocked else 'unblocked'}", highlight=False)


@player_app.command("block", epilog=examples("pbem player block mallory@evil.example"))
def player_block(address: str) -> None:
    """Block an address (known or not): it can neither start games by mail nor be
    invited to one, and whatever it writes is ignored, with the reason kept."""
    _set_blocked(address, True)


@player_app.command("unblock", epilog=examples("pbem player unblock mallory@evil.example"))
def player_unblock(address: str) -> None:
    """Let a blocked address write again."""
    _set_blocked(address, False)


def _valid(address: str) -> str:
    from pbem.mail.address import is_valid_address, normalize_address

    email = normalize_address(address)
    if not email or not is_valid_address(email):
        fail(f"{address!r} is not an email address")
    return email


@player_app.command("show", epilog=examples("pbem player show alice@example.com"))
def player_show(
    address: Annotated[str, typer.Argument(help="The address.", metavar="ADDR")],
) -> None:
    """What the service holds about a mailbox: confirmed or not, on the suppression list
    or not and why, what it may be sent, today's counts, and its player."""
    email = _valid(address)
    for what, state in service().mailbox(email):
        out.print(f"{what + ':':<19} {state}", highlight=False, markup=False)


@player_app.command("unsuppress", epilog=examples("pbem player unsuppress alice@example.com"))
def player_unsuppress(
    address: Annotated[str, typer.Argument(help="The address.", metavar="ADDR")],
) -> None:
    """Take a mailbox off the suppression list (a ``never``, a non-player's ``stop``, a
    decline's quiet period): it may be mailed again."""
    email = _valid(address)
    if service().unsuppress(email):
        out.print(f"{email}: off the suppression list; it may be mailed again", highlight=False)
    else:
        out.print(f"{email}: was not on the suppression list", highlight=False)
