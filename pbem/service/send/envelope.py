"""envelope: how any mail to a seat is addressed, threaded and queued.

Every game mail to a seat goes through `enqueue` (or `envelope_for` and `queue` for the
turn mails made by the batch's renderer): the policy is asked (`may_mail_seat`), the
Message-ID names the game state and the kind of mail, the mail is threaded after the
seat's last one, the Reply-To is the seat's reply address (`seat_reply_to`) and the
``List-Unsubscribe`` headers carry the seat's own token. In a batch the row waits with
the batch's other mail for the one commit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Session

from pbem.mail.compose import compose
from pbem.mail.tokens import message_id, reply_address
from pbem.render import (
    RenderedMail,
)
from pbem.render.turnmail import PendingMail, view_attachment
from pbem.service import policy
from pbem.service.context import (
    Context,
    Seated,
    display_name,
    is_computer,
)
from pbem.store import models as m
from pbem.store._sql import update_row
from pbem.store.outbox import outbox_row, queue_mails


def seat_reply_to(ctx: Context, seated: Seated) -> str:
    """The reply address of ``seated``'s mail, ``local+TOKEN@domain``: the Reply-To of
    every game mail to the seat, and the address its one-click answers go to."""
    return reply_address(ctx.settings.local_part, seated.seat.token, ctx.settings.domain)


def first_in_game(seated: Seated) -> bool:
    """Whether ``seated`` has had no mail of its game yet (its token names each one)."""
    last = seated.seat.last_mail_id or ""
    return f".{seated.seat.token}@" not in last


def enqueue(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seated: Seated,
    mail: RenderedMail,
    kind: str,
    tag: str,
    now: datetime,
    view_json: dict[str, Any] | None = None,
    unsolicited: bool = False,
    *,
    starts_clock: bool = False,
) -> bool:
    """Queue ``mail`` to ``seated``, threaded after the seat's last mail. An
    ``unsolicited`` mail (a reminder, a status change: not an answer to the player's
    own mail) is not sent to a player who sent ``stop``; ``starts_clock``: the game's
    clocks run from its delivery (`pbem.store.delivery`: a cut request). Whether it was
    queued."""
    if is_computer(game_row, seated.seat.seat):
        return False  # the computer plays in-process; it has no mailbox
    if unsolicited and seated.player.stopped:
        return False
    if not may_mail_seat(ctx, session, seated, now):
        return False
    envelope = envelope_for(ctx, session, game_row, seated, kind, tag, now, view_json)
    raw = compose(subject=mail.subject, text=mail.text, html=mail.html, **envelope)
    queue(ctx, session, envelope, kind, game_row.id, raw, now, starts_clock=starts_clock)
    return True


def may_mail_seat(ctx: Context, session: Session, seated: Seated, now: datetime) -> bool:
    """Whether a game mail may go to ``seated`` (`pbem.service.policy`: a joined seat
    always; one not joined, its first mail only)."""
    return policy.may_mail(
        ctx, session, seated.player.email, policy.Why.GAME, now, seat=seated.seat
    )


def envelope_for(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seated: Seated,
    kind: str,
    tag: str,
    now: datetime,
    view_json: dict[str, Any] | None,
) -> dict[str, Any]:
    """The arguments of `compose` but the subject and the bodies, for a mail to
    ``seated``: its Message-ID (naming the game state and the kind of mail), threading
    after the seat's last mail, the seat's reply address, and the view as an
    attachment; a ``List-Unsubscribe`` header whose mailto sends ``stop`` from the
    player to the seat's reply address. The seat's last mail becomes this one."""
    assert game_row.id is not None
    token = seated.seat.token
    msg_id = message_id(token, game_row.id, f"{tag}.{kind}", ctx.settings.domain)
    previous = seated.seat.last_mail_id
    references = [f"<{game_row.thread_id}>"] if game_row.thread_id else []
    if previous:
        references.append(f"<{previous}>")
    attachments = []
    if view_json is not None:
        attachments.append(view_attachment(view_json))
    update_row(session, seated.seat, last_mail_id=msg_id.strip("<>"))
    reply_to = seat_reply_to(ctx, seated)
    return {
        "sender": ctx.settings.address,
        "sender_name": ctx.settings.from_name,
        "to": seated.player.email,
        "to_name": display_name(seated.player),  # their own name, for their own To
        "message_id": msg_id,
        "in_reply_to": f"<{previous}>" if previous else (references[0] if references else None),
        "references": references,
        "reply_to": reply_to,
        "loop_value": ctx.settings.loop_value,
        "date": now,
        "attachments": attachments,
        "extra_headers": unsubscribe_headers(ctx.settings.unsubscribe_url, token, reply_to),
        "parts": seated.player.mail_parts,
    }


def unsubscribe_headers(unsubscribe_url: str, token: str, reply_to: str) -> dict[str, str]:
    """The ``List-Unsubscribe`` headers of a mail to the seat with ``token``.

    RFC 2369: "stop" by mail to the seat's own reply address, so the token and the From
    check apply. With ``unsubscribe_url`` set, RFC 8058's one-click comes first: the
    HTTPS URI ending in the seat's token (never the player's address), which
    `pbem.listen.unsubscribe` answers, and ``List-Unsubscribe-Post``; the mailto stays
    as the fallback.
    """
    mailto = f"<mailto:{reply_to}?subject=stop>"
    if not unsubscribe_url:
        return {"List-Unsubscribe": mailto}
    return {
        "List-Unsubscribe": f"<{unsubscribe_url}/{token}>, {mailto}",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    }


def queue(
    ctx: Context,
    session: Session,
    envelope: dict[str, Any],
    kind: str,
    game_id: int | None,
    raw: bytes | PendingMail,
    now: datetime,
    *,
    starts_clock: bool = False,
) -> None:
    """Put a composed mail in the outbox (in a batch: with the batch's other mail,
    just before the commit, when every `PendingMail` is made); ``starts_clock``: a turn
    mail whose delivery starts its player's clock (`pbem.store.delivery`)."""
    # Every id is new in this transaction (it names the game state and the kind of
    # mail), so a plain insert; the unique index still guards against a duplicate.
    row = outbox_row(
        envelope["message_id"],
        envelope["to"],
        ctx.settings.address,
        kind,
        raw if isinstance(raw, bytes) else b"",
        game_id,
        now=now,
        starts_clock=starts_clock,
    )
    if ctx.deferred is not None:
        if isinstance(raw, PendingMail):
            row["raw"] = raw  # its bytes once the batch's mail is made
        ctx.deferred.append(row)
    else:
        assert isinstance(raw, bytes)
        queue_mails(session, [row])
