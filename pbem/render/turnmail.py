"""A turn mail made from a job: the pure function a batch hands to a `MailMaker`.

`make_turn_mail` renders the recipient's view (the two Jinja2 templates) and composes the
MIME message, with the view as a ``view.json`` attachment. It is the same function in
this process and in a helper process (`pbem.run.renderer`), so a mail is byte for byte
the same wherever it was made; `TurnMailJob` is what crosses the pipe to a helper, and
`PendingMail` what the service holds until the mail is made (`pbem.render.mailmaker`).

A game-over mail's costly parts are made there too (`GameOver`): the review of the
recipient's decisions (`engine.review.review_game`, about 0.4 s of CPU a player at 121)
and the replay page (the game replayed, the computer's moves audited: `ReplayPage`), so
with helper processes the service's step hands them on instead of doing them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from engine import Game, PlayerView
from pbem.mail.compose import compose
from pbem.render.context import MailContext
from pbem.render.mail import render_turn

if TYPE_CHECKING:
    from engine.review import GameReview


class ReplayPage:
    """A finished game's replay page (`pbem.render.replay`) for the game-over mails of
    its players: the game's archive and the page's file name. The page's data (the game
    replayed, the computer's moves audited) is made once in a process, on first use,
    and each seat's page opens in that seat's view, with the seat's review when given."""

    def __init__(self, name: str, archive: dict[str, Any]) -> None:
        self.name, self.archive = name, archive
        self._data: dict[str, Any] | None = None

    def __getstate__(self) -> dict[str, Any]:
        # What crosses to a helper: the archive, not data made here meanwhile.
        return {"name": self.name, "archive": self.archive, "_data": None}

    def attachment(self, seat: int, review: GameReview | None) -> tuple[str, str, bytes]:
        """The page of ``seat`` as a mail attachment: (file name, type, bytes)."""
        from pbem.render.replay import render_page, replay_data

        if self._data is None:
            self._data = replay_data(self.archive)
        html = render_page({**self._data, "seat": seat}, review=review)
        return (self.name, "text/html", html.encode("utf-8"))


@dataclass(frozen=True)
class GameOver:
    """What a game-over mail to ``seat`` adds, made with the mail: the seat's review
    (``review``: the game gives one, `pbem.service.policy.may_review`) of ``game``, and
    the replay ``page`` when the player has it attached (None: not attached)."""

    game: Game
    seat: int
    review: bool
    page: ReplayPage | None = None

    def review_of(self) -> GameReview | None:
        """The seat's review, from its own views alone (`engine.review`), or None."""
        if not self.review:
            return None
        from engine.review import review_game

        return review_game(self.game, self.seat)


@dataclass(frozen=True)
class TurnMailJob:
    """What a turn mail is made of: the recipient's view, the mail's context, and
    `compose`'s arguments but the subject, the bodies and the view attachment; for a
    game-over mail, its review and replay page (``over``)."""

    view: PlayerView
    ctx: MailContext
    envelope: dict[str, Any]
    over: GameOver | None = None


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
    """The composed turn mail (with the view as a ``view.json`` attachment); a game-over
    mail with its review and its replay page, when the job asks for them."""
    ctx, attachments = job.ctx, list(job.envelope.get("attachments", ()))
    if job.over is not None:
        review = job.over.review_of()
        if review is not None:
            ctx = replace(ctx, review=review)
        if job.over.page is not None:
            attachments.append(job.over.page.attachment(job.over.seat, review))
    mail = render_turn(job.view, ctx)
    attachments.append(view_attachment(job.view.to_json()))
    envelope = {**job.envelope, "attachments": attachments}
    return compose(subject=mail.subject, text=mail.text, html=mail.html, **envelope)


@dataclass(eq=False)
class PendingMail:
    """A turn mail being made; ``raw`` is set once it is (at the latest by `finish`)."""

    job: TurnMailJob
    raw: bytes | None = None
