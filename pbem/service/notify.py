"""notify: the mails of a move — player views → rendered mails → the outbox.

Turn mails go to every player who needs one (`pbem.render.news`: a turn, news, or
``mail all``), threaded after the seat's last mail; replies to one player (an error,
where the game stands, history, help, the archive); answers outside any game
(throttled); and the status-change mails of the admin's operations. In a batch the
mail is queued with the batch's other mail just before the commit, and its turn mails
are made by the batch's `MailMaker` while it goes on.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlmodel import Session

from engine import Game, player_view, to_archive
from engine import Settings as GameSettings
from engine.match import MatchScore
from pbem.mail.compose import compose, reply_reference
from pbem.mail.tokens import message_id, reply_address
from pbem.render import (
    MailContext,
    MatchInfo,
    Notice,
    RenderedMail,
    Said,
    render_archive,
    render_error,
    render_help,
    render_history,
    render_turn,
)
from pbem.render.board import house_rules
from pbem.render.hint import render_hint
from pbem.render.mail import DEALS_CHECK
from pbem.render.news import mail_state, worth_mailing
from pbem.render.page import lobby_footer
from pbem.render.turnmail import PendingMail, TurnMailJob, make_turn_mail, view_attachment
from pbem.render.words import join_words
from pbem.service import hints, observe, policy, talk
from pbem.service.away import IN_PROGRESS, when
from pbem.service.context import (
    Context,
    Seated,
    display_name,
    is_computer,
    load_game,
    public_name,
    seat_level,
    seat_levels,
    seat_names,
    seats_of,
)
from pbem.service.play import Move, answered_only
from pbem.store import models as m
from pbem.store._sql import update_row
from pbem.store.games import games_for_player
from pbem.store.outbox import enqueue_outbox, outbox_row, queue_mails
from pbem.store.throttle import error_throttle_allows

# What a finished game's mail offers next (`game_ending`): the archive (the ``archive`` reply
# sends it, with the replay page) ...
ARCHIVE_HINT = (
    'Reply "archive" for the whole game as a file (JSON), with its replay page: the '
    "game's record to keep, to replay the game and check its deals at any time."
)
# ... and the replay page attached to the game-over mail (``mail replay on|off``).
REPLAY_HINT = (
    "The attached {name} replays the whole game in your web browser, step by step, "
    "every hand face up (open it: it needs no network)."
)


def mail_context(
    game_row: m.Game,
    seats: list[Seated],
    seat: int,
    notices: Sequence[Notice],
    since: int,
    talk: Sequence[Said] = (),
    over: bool | None = None,
    *,
    reply_to: str = "",
    ending: Sequence[str] = (),
    following: str = "",
) -> MailContext:
    """What a mail of the game to ``seat`` shows beyond the view: the names, the notices
    of the seat's own commands, the table talk (``talk``), the game's match and its
    verifiable-deal lines; ``over``: the game is over (the server seed of a fair game is
    then revealed; default: the row says finished); ``reply_to``: the seat's reply
    address (`seat_reply_to`), where the mail's one-click answers go (empty: none);
    ``ending``: what the mail of a finished game offers next (`game_ending`);
    ``following``: the answer it asks for the game that may follow (`next_answer`),
    which the deal lines name as the player's cut for that game."""
    from pbem.service.cutting import deal_lines

    assert game_row.id is not None
    if over is None:
        over = game_row.status == m.GameStatus.FINISHED.value
    return MailContext(
        game_id=game_row.id,
        names=seat_names(seats),
        levels=seat_levels(game_row, seats),
        recipient_seat=seat,
        reply_hint="Reply to this email with your move.",
        notices=tuple(notices),
        since_event=since,
        ending=tuple(ending),
        paused=game_row.status == m.GameStatus.PAUSED.value,
        deal_lines=deal_lines(game_row, over=over, following=following, names=seat_names(seats)),
        talk=tuple(talk),
        match=match_info(game_row),
        reply_to=reply_to,
        suggest=game_row.hints,  # the computer's move on the reply line only with hints
    )


def seat_reply_to(ctx: Context, seated: Seated) -> str:
    """The reply address of ``seated``'s mail, ``local+TOKEN@domain``: the Reply-To of
    every game mail to the seat, and the address its one-click answers go to."""
    return reply_address(ctx.settings.local_part, seated.seat.token, ctx.settings.domain)


def first_in_game(seated: Seated) -> bool:
    """Whether ``seated`` has had no mail of its game yet (its token names each one)."""
    last = seated.seat.last_mail_id or ""
    return f".{seated.seat.token}@" not in last


def opening_line(game_row: m.Game, seats: Sequence[Seated], seat: int) -> str:
    """What a new game is, as its first mail to ``seat`` says it: the others (a computer
    with its level), the house rules, its match and number in it, the game it rematches."""
    rules = GameSettings.from_json(game_row.settings)
    names = [
        f"{name} ({level})" if level else name
        for name, level in zip(seat_names(seats), seat_levels(game_row, seats), strict=True)
    ]
    others = join_words([n for i, n in enumerate(names) if i != seat])
    line = (
        f"Game {game_row.id}: a new game of cribbage with {others} — "
        f"{house_rules(rules.players, rules.target, rules.muggins, rules.skunk)}"
    )
    info = game_row.match_info
    if info:
        line += f"; a match, best of {info.get('best_of')}: game {info.get('game')}"
    if game_row.rematch_of is not None:
        line += f"; a rematch of game {game_row.rematch_of}"
    return line + "."


def following_game(game_row: m.Game, game: Game) -> int | None:
    """The number in its match of the game that follows the finished ``game``, while
    its match goes on; None for a game of no match, or one that ended its match."""
    outcome = game.outcome
    info = game_row.match_info or {}
    if outcome is None or not info:
        return None
    sides = len(outcome.scores)
    before = [int(n) for n in info.get("before", ())][:sides]
    tally = MatchScore(sides, before + [0] * (sides - len(before)))
    tally.add(outcome)
    if max(tally.games) < int(info.get("best_of", 1)) // 2 + 1:
        return int(info.get("game", 1)) + 1
    return None


def next_answer(ctx: Context, game_row: m.Game, game: Game) -> str:
    """The answer a finished game's mail asks for the game that may follow it (in a fair
    game, the player's cut for that game): ``next`` while its match goes on (none when
    the game is not fair: the next game then starts by itself), otherwise ``rematch``
    (none in a closed lobby). "" while the game is not over."""
    if game.outcome is None:
        return ""
    if following_game(game_row, game) is not None:
        return "next" if game_row.commitment else ""
    return "rematch" if ctx.settings.lobby != "closed" else ""


def game_ending(ctx: Context, game_row: m.Game, game: Game, replay: str | None) -> tuple[str, ...]:
    """What the mail of a finished game offers next, line by line: in a match that goes
    on, that its next game starts now; else a rematch (unless the lobby is closed: the
    admin starts games), and at the end of a match a new one; the attached replay page
    (``replay``: its file name) and, in a fair game, how it checks the deals; the
    archive. Nothing while the game is not over."""
    if game.outcome is None:
        return ()
    lines: list[str] = []
    over = ""
    following = following_game(game_row, game)
    if following is not None:
        lines.append(
            f'The match goes on: reply "next" to deal game {following} of the match, the '
            "loser dealing first — your reply is your cut for its deal (see the next "
            "game's commitment below), and its first mail holds your cards."
            if game_row.commitment
            else f"The match goes on: game {following} of the match starts now, the "
            "loser dealing first; its first mail follows."
        )
    elif game_row.match_info:
        over = "The match is over. "
    if not lines and ctx.settings.lobby != "closed":
        robots = game_row.settings.get("computer") or ()
        alone = game.settings.players - len(robots) == 1
        lines.append(
            over
            + 'Reply "rematch" for another game '
            + ("against the computer" if alone else "with the same players")
            + ", the same house rules, the loser dealing first"
            + (" (it starts at once)" if alone else " (the others are asked to accept)")
            + '; "rematch best of 3" makes it a match.'
        )
    elif over:
        lines.append(over.strip())
    if replay is not None:
        lines.append(REPLAY_HINT.format(name=replay))
        if game_row.commitment:
            lines.append(DEALS_CHECK)  # a fair game: how the page checks the deals
    lines.append(ARCHIVE_HINT)
    return tuple(lines)


def match_info(game_row: m.Game) -> MatchInfo | None:
    """Where the game's match stood when the game began (None: a single game)."""
    info = game_row.match_info
    if not info:
        return None
    return MatchInfo(
        best_of=int(info.get("best_of", 1)),
        game_no=int(info.get("game", 1)),
        before=tuple(int(n) for n in info.get("before", ())),
    )


def with_talk(
    session: Session,
    game_row: m.Game,
    seats: list[Seated],
    seated: Seated,
    rows: Sequence[m.Talk] | None = None,
) -> tuple[Said, ...]:
    """The table talk ``seated`` has not seen yet, marked seen: their game mail shows it
    (``rows``: the game's talk read already, see `talk.unheard`)."""
    said, upto = talk.unheard(session, game_row, seats, seated, rows)
    talk.heard(session, seated, upto)
    return said


def turn_mails(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    game: Game,
    seats: list[Seated],
    since: int,
    notices: dict[int, list[Notice]],
    inbound_id: int | None,
    now: datetime,
    replying: int | None = None,
    confirm: bool = False,
    spoken: Sequence[m.Talk] = (),
) -> set[int]:
    """A turn mail to every player who needs one (`pbem.render.news`): its news run
    from the player's last turn mail (``since`` for a seat that has none on record).
    A player who sent ``stop`` gets none, unless theirs is the seat whose mail this
    answers (``replying``); a player in ``digest`` mode gets none while it is not their
    turn (the news waits for their turn's mail; `pbem.service.digest`), unless the mail
    must tell them a command of theirs was refused, or the game is over. ``confirm``:
    the mail answered set something (a setting, observers, hints), so its sender gets a
    mail whatever the game's news, saying so. Then the board to the game's watchers,
    with ``spoken`` (the table talk of the mail answered); returns the ids of the
    watchers mailed."""
    kind = "gameover" if game.is_over else "turn"
    tag = f"a{game_row.action_count}"
    if game.is_over:
        from pbem.service.cutting import prepare_next

        prepare_next(session, game_row)
    # The talk any seat has not heard, in one query for all of them.
    heard = [s.seat.heard_talk for s in seats if not is_computer(game_row, s.seat.seat)]
    unheard = talk.since(session, game_row, min(heard, default=0))
    replay = ReplayAttachment(game_row, game, seats) if game.is_over else None
    for seated in seats:
        seat = seated.seat.seat
        if is_computer(game_row, seat):
            continue  # the computer plays in-process; it has no mailbox
        if seated.player.stopped and seat != replying:
            continue  # "stop": only the answers to their own mail
        mine = notices.get(seat, [])
        told = seated.seat.mailed_events
        start = since if told is None or told > len(game.events) else told
        view = player_view(game, seat, start)
        answer = confirm and seat == replying  # what their mail set is confirmed
        if (
            seated.player.digest
            and seat not in game.to_act()
            and not game.is_over
            and not answer
            and all(n.status == "applied" for n in mine)
        ):
            continue  # "digest": news while it is not their turn waits for the digest
        if not (
            seated.player.mail_all
            or answer
            or any(n.status != "applied" for n in mine)
            or worth_mailing(view, seated.seat.mailed_state)
        ):
            continue  # nothing new for them: their last mail still says it all
        if not may_mail_seat(ctx, session, seated, now):
            continue  # a seat not joined: the game's first mail went already
        update_row(
            session,
            seated.seat,
            mailed_events=len(game.events),
            mailed_state=mail_state(view),
        )
        said = with_talk(session, game_row, seats, seated, unheard)
        first = first_in_game(seated)  # (before the envelope makes this mail its last)
        envelope = envelope_for(ctx, session, game_row, seated, kind, tag, now, None)
        attached: str | None = None
        if replay is not None and wants_replay(ctx, seated.player):
            attached, page = replay.page(seat)
            envelope["attachments"].append((attached, "text/html", page))
        about = mail_context(
            game_row,
            seats,
            seat,
            mine,
            start,
            said,
            over=game.is_over,
            reply_to=envelope["reply_to"],
            ending=game_ending(ctx, game_row, game, attached),
            following=next_answer(ctx, game_row, game),
        )
        if first:
            # Dealt at once (a rematch, a match's next game, an admin's game): this first
            # mail says what the game is, as the cut request would have.
            about = replace(about, opening=opening_line(game_row, seats, seat))
        job = TurnMailJob(view, about, envelope)
        # The mail of a player to move: their clock starts when it is delivered.
        starts = not game.is_over and seat in game.to_act()
        made = ctx.maker.submit(job) if ctx.maker is not None else make_turn_mail(job)
        # (In a batch the mail is made while the batch goes on: see pbem.renderer.)
        queue(ctx, session, envelope, kind, game_row.id, made, now, starts_clock=starts)
    names = {s.seat.seat: s.name for s in seats}
    lines = [Said(names.get(t.seat, f"Seat {t.seat + 1}"), t.text) for t in spoken]
    return observe.observer_mails(ctx, session, game_row, game, seats, now, lines)


def wants_replay(ctx: Context, player: m.Player) -> bool:
    """Whether ``player``'s game-over mail attaches the replay page: their own ``mail
    replay on|off``, else the configuration's ``mail_replay``."""
    return ctx.settings.mail_replay if player.mail_replay is None else player.mail_replay


class ReplayAttachment:
    """A finished game's replay page (`pbem.render.replay`) for each player's game-over
    mail: the game is replayed once, and each seat's page opens in that seat's view."""

    def __init__(self, game_row: m.Game, game: Game, seats: Sequence[Seated]) -> None:
        self.game_row, self.game, self.seats = game_row, game, seats
        self._data: dict[str, Any] | None = None

    def page(self, seat: int) -> tuple[str, bytes]:
        """The attachment's file name and bytes for ``seat``."""
        from pbem.render.replay import render_page, replay_data

        if self._data is None:
            self._data = replay_data(game_archive(self.game_row, self.game, self.seats))
        html = render_page({**self._data, "seat": seat})
        return f"cribbage-{self.game_row.id}.html", html.encode("utf-8")


def reply_view(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: list[Seated],
    seat: int,
    inbound_id: int,
    notices: Sequence[Notice],
    kind: str,
    now: datetime,
) -> None:
    game = load_game(ctx, session, game_row)
    view = player_view(game, seat, len(game.events))
    said = with_talk(session, game_row, seats, seats[seat])
    finished = game_ending(ctx, game_row, game, None)
    about = mail_context(
        game_row,
        seats,
        seat,
        notices,
        len(game.events),
        said,
        reply_to=seat_reply_to(ctx, seats[seat]),
        ending=finished,
        following=next_answer(ctx, game_row, game),
    )
    if kind == "error":
        mail = render_error(about, view, "Your mail could not be applied")
    else:
        mail = render_turn(view, about)
    enqueue(
        ctx,
        session,
        game_row,
        seats[seat],
        mail,
        kind,
        f"i{inbound_id}",
        now,
        view_json=view.to_json(),
    )


def send_history(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    game: Game,
    seats: list[Seated],
    seat: int,
    inbound_id: int,
    now: datetime,
) -> None:
    view = player_view(game, seat, len(game.events))
    said = talk.everything(session, game_row, seats)
    finished = game_ending(ctx, game_row, game, None)
    about = mail_context(
        game_row,
        seats,
        seat,
        [],
        0,
        said,
        reply_to=seat_reply_to(ctx, seats[seat]),
        ending=finished,
        following=next_answer(ctx, game_row, game),
    )
    events = player_view(game, seat, 0).events
    mail = render_history(view, about, events)
    enqueue(ctx, session, game_row, seats[seat], mail, "history", f"h{inbound_id}", now)


def send_archive(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    game: Game,
    seats: list[Seated],
    seat: int,
    inbound_id: int,
    now: datetime,
) -> None:
    """A finished game's archive, as ``pbem game export`` writes it, to one player
    (a finished game hides nothing: every card was shown or may be, and the seed too),
    with its replay page, which replays the game and checks its deals in a browser."""
    assert game_row.id is not None
    name = f"cribbage-{game_row.id}.json"
    from pbem.store.games import cut_mails

    data = archive_bytes(game_archive(game_row, game, seats, cut_mails(session, game_row.id)))
    if not may_mail_seat(ctx, session, seats[seat], now):
        return
    page_name, page = ReplayAttachment(game_row, game, seats).page(seat)
    about = mail_context(game_row, seats, seat, [], len(game.events))
    mail = render_archive(about, name, page_name)
    envelope = envelope_for(
        ctx, session, game_row, seats[seat], "archive", f"x{inbound_id}", now, None
    )
    envelope["attachments"].append((name, "application/json", data))
    envelope["attachments"].append((page_name, "text/html", page))
    raw = compose(subject=mail.subject, text=mail.text, html=mail.html, **envelope)
    queue(ctx, session, envelope, "archive", game_row.id, raw, now)


def send_hint(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    game: Game,
    seats: list[Seated],
    seat: int,
    inbound_id: int,
    now: datetime,
) -> None:
    """A hint to the player of ``seat`` alone, built from their own views (see
    `pbem.service.hints.advice`), threaded after their last mail."""
    view = player_view(game, seat, len(game.events))
    about = mail_context(
        game_row, seats, seat, [], len(game.events), reply_to=seat_reply_to(ctx, seats[seat])
    )
    mail = render_hint(view, about, hints.advice(game, seat))
    enqueue(ctx, session, game_row, seats[seat], mail, "hint", f"k{inbound_id}", now)


def tell_others(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    game: Game,
    seats: list[Seated],
    seat: int,
    said: Sequence[str],
    tag: str,
    now: datetime,
) -> int:
    """Tell the game's other players what ``seat``'s mail changed that they must know
    (``said``: ``hints on|off``, ``observers on|off``, a turn mail that failed for good):
    one mail each, where the game stands with those notes; through `enqueue`, so the
    policy is asked. Nobody whose own turn mail failed for good is mailed (it would not
    get through). Returns how many mails were queued."""
    told = 0
    if not said:
        return told
    for seated in seats:
        other = seated.seat.seat
        if other == seat or seated.seat.mail_failed_at is not None:
            continue
        view = player_view(game, other, len(game.events))
        notes = [Notice("info", "", line) for line in said]
        about = mail_context(
            game_row, seats, other, notes, len(game.events), reply_to=seat_reply_to(ctx, seated)
        )
        told += enqueue(
            ctx,
            session,
            game_row,
            seated,
            render_turn(view, about),
            "status",
            tag,
            now,
            view_json=view.to_json(),
            unsolicited=True,
        )
    return told


def send_help(
    ctx: Context,
    session: Session,
    game_row: m.Game,
    seats: list[Seated],
    seat: int,
    inbound_id: int,
    now: datetime,
) -> None:
    about = mail_context(game_row, seats, seat, [], 0)
    rules = GameSettings.from_json(game_row.settings)
    mail = render_help(
        about,
        f"Cribbage {game_row.id}",
        rules=house_rules(rules.players, rules.target, rules.muggins, rules.skunk),
    )
    enqueue(ctx, session, game_row, seats[seat], mail, "help", f"p{inbound_id}", now)


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
) -> bool:
    """Queue ``mail`` to ``seated``, threaded after the seat's last mail. An
    ``unsolicited`` mail (a reminder, a status change: not an answer to the player's
    own mail) is not sent to a player who sent ``stop``. Whether it was queued."""
    if is_computer(game_row, seated.seat.seat):
        return False  # the computer plays in-process; it has no mailbox
    if unsolicited and seated.player.stopped:
        return False
    if not may_mail_seat(ctx, session, seated, now):
        return False
    envelope = envelope_for(ctx, session, game_row, seated, kind, tag, now, view_json)
    raw = compose(subject=mail.subject, text=mail.text, html=mail.html, **envelope)
    queue(ctx, session, envelope, kind, game_row.id, raw, now)
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
    `pbem.web` answers, and ``List-Unsubscribe-Post``; the mailto stays as the fallback.
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


def game_archive(
    game_row: m.Game,
    game: Game,
    seats: Sequence[Seated],
    cuts: Sequence[m.CutMail] = (),
) -> dict[str, Any]:
    """The JSON archive of a game (`pbem game export`, and the ``archive`` reply).

    A fair game's ``deal_proof`` reveals the server seed only once it is finished or
    aborted, and lists its cut mails (``cuts``: `pbem.store.games.cut_mails`); a game of
    a match names it (``match``: its length, the game's number, the score before)."""
    from pbem.service.cutting import deal_proof

    extra: dict[str, Any] = {}
    proof = deal_proof(game_row, cuts, game)
    if proof is not None:
        extra["deal_proof"] = proof
    if game_row.match_info:
        extra["match"] = dict(game_row.match_info)
    if game_row.rematch_of is not None:
        extra["rematch_of"] = game_row.rematch_of
    if game_row.finished_at is not None:
        extra["finished_at"] = game_row.finished_at.isoformat()
    return to_archive(
        game,
        game_id=game_row.id,
        players=[{"email": s.player.email, "name": s.name} for s in seats],
        status=game_row.status,
        created_at=game_row.created_at.isoformat(),
        computer=computer_list(game_row),
        **extra,
    )


def computer_list(game_row: m.Game) -> list[dict[str, Any]]:
    """The archive's ``computer``: each computer seat with its level and the engine that
    plays it (`engine.audit`; [] when every seat is a person)."""
    from engine.audit import computer_entries
    from pbem import engine_version

    robots = sorted(int(s) for s in game_row.settings.get("computer", ()))
    levels = {seat: seat_level(game_row, seat) for seat in robots}
    return computer_entries(levels, engine_version())


def archive_bytes(data: dict[str, Any]) -> bytes:
    """An archive as the file `pbem game export` writes."""
    return (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def answer_move(ctx: Context, session: Session, move: Move, inbound_id: int, now: datetime) -> None:
    """The mails of a played mail: the turn mails after its moves, or the answer to its
    questions, or the reply saying what could not be done; then history and help when
    asked for."""
    known = move.known
    game_row, seats, seat, wants = known.game_row, known.seats, known.seat, move.wants
    if move.refusal is not None:
        reply_view(ctx, session, game_row, seats, seat, inbound_id, move.notices, "error", now)
        return
    game = move.game
    assert game is not None
    watched: set[int] = set()
    if move.actions:
        # What the others must know goes in their mails of this move (a note forces one).
        notes = [Notice("info", "", said) for said in move.tell_others]
        notices = {s.seat.seat: list(notes) for s in seats if s.seat.seat != seat}
        notices[seat] = move.notices
        watched = turn_mails(
            ctx,
            session,
            game_row,
            game,
            seats,
            move.since,
            notices,
            inbound_id,
            now,
            replying=seat,
            confirm=bool({"mail", "hints"} & set(wants)),
            spoken=move.said,
        )
        if "history" in wants:
            send_history(ctx, session, game_row, game, seats, seat, inbound_id, now)
    elif answered_only(move):
        already = any(n.status == "already" for n in move.notices)
        # A note to tell (a first "say" to the computer, see `talk.to_the_computer`).
        noted = any(n.status == "info" for n in move.notices)
        if already or noted or {"hand", "mail", "hints"} & set(wants) or not set(wants) - {"hand"}:
            reply_view(ctx, session, game_row, seats, seat, inbound_id, move.notices, "status", now)
        if "archive" in wants:
            send_archive(ctx, session, game_row, game, seats, seat, inbound_id, now)
        if "history" in wants:
            send_history(ctx, session, game_row, game, seats, seat, inbound_id, now)
    else:
        reply_view(ctx, session, game_row, seats, seat, inbound_id, move.notices, "error", now)
    if "hint" in wants:
        send_hint(ctx, session, game_row, game, seats, seat, inbound_id, now)
    if not move.actions:
        tell_others(
            ctx, session, game_row, game, seats, seat, move.tell_others, f"k{inbound_id}", now
        )
    if "help" in wants:
        send_help(ctx, session, game_row, seats, seat, inbound_id, now)
    if "standings" in wants:
        from pbem.service.standings import send_standings

        send_standings(ctx, session, seats[seat].player, inbound_id, now, known.message_id)
    if move.said:
        talk.relay(ctx, session, game_row, seats, move.said, inbound_id, now, watched)
    for verb in ("away", "back"):
        if verb in wants:
            tell_away(ctx, session, seats[seat].player, verb, f"w{inbound_id}", now)


def tell_away(
    ctx: Context, session: Session, player: m.Player, verb: str, tag: str, now: datetime
) -> None:
    """Tell the other players of each game of ``player``'s in progress that they are
    away until when (``verb`` "away"), or back ("back"): a short status mail."""
    assert player.id is not None
    who = public_name(player)  # told to the other players: never a part of the address
    if verb == "away":
        assert player.away_until is not None
        said = (
            f"{who} is away until {when(player.away_until)}: their clock stands still until then."
        )
    else:
        said = f"{who} is back: their clock runs again."
    for game_row in games_for_player(session, player.id):
        if game_row.status not in IN_PROGRESS or game_row.id is None:
            continue
        game = load_game(ctx, session, game_row)
        seats = seats_of(session, game_row.id)
        for seated in seats:
            if seated.player.id == player.id:
                continue
            seat = seated.seat.seat
            view = player_view(game, seat, len(game.events))
            note = Notice("info", "", said)
            about = mail_context(
                game_row, seats, seat, [note], len(game.events), reply_to=seat_reply_to(ctx, seated)
            )
            mail = render_turn(view, about)
            enqueue(
                ctx,
                session,
                game_row,
                seated,
                mail,
                "status",
                f"{tag}{verb[0]}",
                now,
                view_json=view.to_json(),
                unsolicited=True,
            )
