"""A turn mail made from a job: the pure function a batch hands to a `MailMaker`.

`make_turn_mail` renders the recipient's view (the two Jinja2 templates) and composes the
MIME message, with the view as a ``view.json`` attachment. It is the same function in
this process and in a helper process (`pbem.run.renderer`), so a mail is byte for byte
the same wherever it was made; `TurnMailJob` is what crosses the pipe to a helper, and
`PendingMail` what the service holds until the mail is made (`pbem.render.mailmaker`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engine import PlayerView
from pbem.mail.compose import compose
from pbem.render.context import MailContext
from pbem.render.mail import render_turn


@dataclass(frozen=True)
class TurnMailJob:
    """What a turn mail is made of: the recipient's view, the mail's context, and
    `compose`'s arguments but the subject, the bodies and the view attachment."""

    view: PlayerView
    ctx: MailContext
    envelope: dict[str, Any]


def view_attachment(view_json: dict[str, Any]) -> tuple[str, str, bytes]:
    """A player's view as the ``view.json`` attachment of their mail: compact JSON, its
    events without their empty fields, without the breakdown of their points (``items``:
    the mail's text tells it in words) and without the side of an event that names a seat
    (the seat's side: seat modulo the number of sides); ``PlayerView.from_json`` reads it
    back."""
    events = view_json.get("events")
    if events:
        view_json = {
            **view_json,
            "events": [
                {
                    k: v
                    for k, v in e.items()
                    if k != "items"
                    and v not in (None, "", [])
                    and (v or k != "points")
                    and (k != "side" or e.get("seat") is None)  # a seat's side: seat % sides
                }
                for e in events
            ],
        }
    data = json.dumps(view_json, ensure_ascii=False, separators=(",", ":"))
    return ("view.json", "application/json", data.encode())


def make_turn_mail(job: TurnMailJob) -> bytes:
    """The composed turn mail (with the view as a ``view.json`` attachment)."""
    mail = render_turn(job.view, job.ctx)
    attachments = [*job.envelope.get("attachments", ()), view_attachment(job.view.to_json())]
    envelope = {**job.envelope, "attachments": attachments}
    return compose(subject=mail.subject, text=mail.text, html=mail.html, **envelope)


@dataclass(eq=False)
class PendingMail:
    """A turn mail being made; ``raw`` is set once it is (at the latest by `finish`)."""

    job: TurnMailJob
    raw: bytes | None = None
