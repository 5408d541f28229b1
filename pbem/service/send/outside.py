"""outside: mail outside any game — answers to the writer, confirmations, welcomes, invitations.

`outside_game` is the one path of such mail: it asks the policy once
(`pbem.service.policy.may_mail`, with why the mail goes), then makes the letter (a
callback, so rows such as an invitation exist only when the mail may go) and queues it
with its own Message-ID, threaded after the mail it answers. `answer` and
`error_reply` are the answers to a known player whose mail named no game of theirs
(identical answers within the throttle window are not repeated).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime

from sqlmodel import Session

from pbem.mail.compose import compose, reply_reference
from pbem.render import (
    MailContext,
    Notice,
    RenderedMail,
    render_error,
)
from pbem.render.page import lobby_footer
from pbem.service import policy
from pbem.service.context import (
    Context,
    display_name,
)
from pbem.store import models as m
from pbem.store.outbox import enqueue_outbox
from pbem.store.throttle import error_throttle_allows


def error_reply(
    ctx: Context,
    session: Session,
    player: m.Player,
    inbound_id: int,
    kind: str,
    title: str,
    notices: Sequence[Notice],
    now: datetime,
    answering: str | None = None,
) -> None:
    """A reply to a known player whose mail named no game of theirs (throttled),
    threaded after that mail (its Message-ID: ``answering``). Its footer offers what
    works outside a game (`outside_footer`)."""
    about = MailContext(
        game_id=0,
        names=(display_name(player),),
        recipient_seat=0,
        reply_hint="",
        notices=tuple(notices),
    )
    mail = render_error(about, None, title, footer=outside_footer(ctx))
    answer(ctx, session, player, inbound_id, kind, mail, now, answering)


def outside_footer(ctx: Context) -> tuple[str, ...]:
    """The footer of a mail outside any game: "games" and "help", and "new" unless the
    lobby is closed (the admin alone starts games then)."""
    return lobby_footer(new_games=ctx.settings.lobby != "closed")


def answer(
    ctx: Context,
    session: Session,
    player: m.Player,
    inbound_id: int,
    kind: str,
    mail: RenderedMail,
    now: datetime,
    answering: str | None,
) -> bool:
    """Queue ``mail`` to ``player``, outside any game, threaded after the mail it
    answers; repeated identical answers within the throttle window are not sent, nor
    what the policy does not let go. Whether it was queued."""
    if not error_throttle_allows(
        session, player.email, kind, now, content=mail.subject + "\n" + mail.text
    ):
        return False
    if not policy.may_mail(
        ctx, session, player.email, policy.Why.ANSWER, now, inbound_id=inbound_id
    ):
        return False
    # A random part: the id cannot be guessed, so a forged bounce cannot name it.
    msg_id = f"<err.{inbound_id}.{kind}.{secrets.token_hex(8)}@{ctx.settings.domain}>"
    ref = reply_reference(answering)
    raw = compose(
        sender=ctx.settings.address,
        sender_name=ctx.settings.from_name,
        to=player.email,
        to_name=display_name(player),
        subject=mail.subject,
        text=mail.text,
        html=mail.html,
        message_id=msg_id,
        in_reply_to=ref,
        references=[ref] if ref else [],
        reply_to=None,
        loop_value=ctx.settings.loop_value,
        date=now,
        parts=player.mail_parts,
    )
    outbox_kind = kind if kind in ("help", "welcome") else "error"
    enqueue_outbox(
        session, msg_id, player.email, ctx.settings.address, outbox_kind, raw, None, now=now
    )
    return True
