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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
from pbem.store.outbox import outbox_row, queue_mails
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

    def letter() -> Letter:
        # A random part: the id cannot be guessed, so a forged bounce cannot name it.
        return Letter(
            mail,
            kind if kind in ("help", "welcome") else "error",
            f"<err.{inbound_id}.{kind}.{secrets.token_hex(8)}@{ctx.settings.domain}>",
            to_name=display_name(player),
            answering=answering,
            parts=player.mail_parts,
        )

    return outside_game(
        ctx, session, player.email, policy.Why.ANSWER, now, letter, inbound_id=inbound_id
    )


@dataclass(frozen=True)
class Letter:
    """A mail outside any game, ready to compose: what it says and how it is addressed."""

    mail: RenderedMail
    kind: str
    """The outbox's kind of mail (``error``, ``help``, ``confirm``, ``invite`` …)."""
    message_id: str
    to_name: str | None = None
    reply_to: str | None = None
    answering: str | None = None
    """The Message-ID of the mail it answers (threaded after it), if any."""
    extra_headers: dict[str, str] | None = None
    parts: str = "both"


def outside_game(
    ctx: Context,
    session: Session,
    address: str,
    why: policy.Why,
    now: datetime,
    letter: Callable[[], Letter],
    *,
    inbound_id: int | None = None,
) -> bool:
    """The one path of mail outside a game: the policy is asked once whether
    ``address`` may get a mail now for ``why`` (`pbem.service.policy.may_mail`, which
    counts it); only then is the letter made (so what it names — an invitation, a
    confirmation — exists only for mail that goes) and queued. Whether it went."""
    if not policy.may_mail(ctx, session, address, why, now, inbound_id=inbound_id):
        return False
    made = letter()
    ref = reply_reference(made.answering)
    raw = compose(
        sender=ctx.settings.address,
        sender_name=ctx.settings.from_name,
        to=address,
        to_name=made.to_name,
        subject=made.mail.subject,
        text=made.mail.text,
        html=made.mail.html,
        message_id=made.message_id,
        in_reply_to=ref,
        references=[ref] if ref else [],
        reply_to=made.reply_to,
        loop_value=ctx.settings.loop_value,
        date=now,
        extra_headers=made.extra_headers,
        parts=made.parts,
    )
    row = outbox_row(made.message_id, address, ctx.settings.address, made.kind, raw, now=now)
    queue_mails(session, [row])
    return True
