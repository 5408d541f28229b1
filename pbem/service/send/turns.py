"""turns: the turn mails to the seated players.

After a move, `turn_mails` mails every player who needs it (`pbem.render.news`: a turn,
news, or ``mail all``) their own view and the game's news since their last mail, with
the table talk they have not seen; a finished game's mail says what comes next
(`game_ending`) and may attach the replay page (`replay_page`); then the board to
the game's watchers. `mail_context` is what every game mail shows beside the view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from sqlmodel import Session

from engine import Game, player_view
from engine import Settings as GameSettings
from engine.match import MatchScore
from pbem.render import (
    MailContext,
    MatchInfo,
    Notice,
    Said,
)
from pbem.render.board import house_rules
from pbem.render.mail import DEALS_CHECK
from pbem.render.news import mail_state, worth_mailing
from pbem.render.turnmail import GameOver, ReplayPage, TurnMailJob, make_turn_mail
from pbem.render.words import join_words
from pbem.service import policy
from pbem.service.context import (
    Context,
    Seated,
    game_subject,
    is_computer,
    seat_levels,
    seat_names,
)
from pbem.service.game import talk
from pbem.service.game.deals import deal_lines, prepare_next
from pbem.service.send import watchers
from pbem.service.send.archive import game_archive
from pbem.service.send.envelope import (
    envelope_for,
    first_in_game,
    may_mail_seat,
    queue,
)
from pbem.store import models as m
from pbem.store._sql import update_row
from pbem.store.commitlog import log_end

# What a finished game's mail offers next (`game_ending`): the archive (the ``archive`` reply
# sends it, with the replay page) ...
ARCHIVE_HINT = (
    'Reply "archive" for the whole game as a file (JSON), with its replay page: the '
    "game's record to keep, to replay the game and check its deals at any time."
)


# ... and the replay page attached to the game-over mail (``mail replay on|off``).
REPLAY_HINT = (
    "The attached {name} replays the whole game in your web browser, step by step "
    "(open it: it needs no network). It opens on your own view; choose “everything” in "
    "its View menu to see every hand face up."
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
        subject=game_subject(game_row, seats),
    )


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
    turn (the news waits for their turn's mail; `pbem.service.send.digest`), unless the mail
    must tell them a command of theirs was refused, or the game is over. ``confirm``:
    the mail answered set something (a setting, observers, hints), so its sender gets a
    mail whatever the game's news, saying so. Then the board to the game's watchers,
    with ``spoken`` (the table talk of the mail answered); returns the ids of the
    watchers mailed."""
    kind = "gameover" if game.is_over else "turn"
    tag = f"a{game_row.action_count}"
    if game.is_over:
        assert game_row.id is not None
        log_end(
            session,
            game_row.id,
            game_row.commitment,
            game_row.server_seed,
            dealt=True,
            aborted=False,
            now=now,
        )
        prepare_next(session, game_row, now)
    # The talk any seat has not heard, in one query for all of them.
    heard = [s.seat.heard_talk for s in seats if not is_computer(game_row, s.seat.seat)]
    unheard = talk.since(session, game_row, min(heard, default=0))
    page: ReplayPage | None = None  # the game's replay page, made once if attached
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
        over: GameOver | None = None
        if game.is_over:
            # The game-over mail reviews the player's own decisions (from their own
            # views, `engine.review`) when the game gives one, and attaches the replay
            # page when they want it: both made with the mail (a helper process's work
            # when there is one: `pbem.render.turnmail`).
            if page is None and wants_replay(ctx, seated.player):
                page = replay_page(game_row, game, seats)
            mine_page = page if wants_replay(ctx, seated.player) else None
            over = GameOver(game, seat, policy.may_review(game_row), mine_page)
        attached = over.page.name if over is not None and over.page is not None else None
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
        job = TurnMailJob(view, about, envelope, over)
        # The mail of a player to move: their clock starts when it is delivered.
        starts = not game.is_over and seat in game.to_act()
        made = ctx.maker.submit(job) if ctx.maker is not None else make_turn_mail(job)
        # (In a batch the mail is made while the batch goes on: see pbem.render.mailmaker.)
        queue(ctx, session, envelope, kind, game_row.id, made, now, starts_clock=starts)
    names = {s.seat.seat: s.name for s in seats}
    lines = [Said(names.get(t.seat, f"Seat {t.seat + 1}"), t.text) for t in spoken]
    return watchers.observer_mails(ctx, session, game_row, game, seats, now, lines)


def wants_replay(ctx: Context, player: m.Player) -> bool:
    """Whether ``player``'s game-over mail attaches the replay page: their own ``mail
    replay on|off``, else the configuration's ``mail_replay``."""
    return ctx.settings.mail_replay if player.mail_replay is None else player.mail_replay


def replay_page(game_row: m.Game, game: Game, seats: Sequence[Seated]) -> ReplayPage:
    """A finished game's replay page for its players' game-over mails: its archive
    (`pbem.render.turnmail.ReplayPage` makes the page with each mail)."""
    return ReplayPage(f"cribbage-{game_row.id}.html", game_archive(game_row, game, seats))
