"""Everything one mail shows, assembled from the view: the table, the hand, the
result, the subject line and the narrative."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine import DISCARD, GAME_OVER, PEGGING, SHOW, Event, PlayerView
from engine.match import MatchScore
from pbem.render.board import Board, build_board
from pbem.render.context import MailContext, MatchInfo, Notice, Said
from pbem.render.links import Link, discard_grid, link, move_links, typed
from pbem.render.narrate import Line, Narrator
from pbem.render.prompt import Prompt, build_prompt
from pbem.render.review import ReviewText, review_text
from pbem.render.words import (
    Part,
    People,
    Phrase,
    cap,
    clean_name,
    join_words,
    pegged,
    phrase,
    seats_of,
)

NOTICE_LABELS = {
    "applied": "done",
    "refused": "refused",
    "ignored": "ignored",
    "ambiguous": "unclear",
    "info": "note",
    "already": "already",
    "confirm": "confirm?",
}


@dataclass(frozen=True)
class NoticeView:
    label: str
    status: str
    command: str
    message: str
    legal: str | None
    offers: tuple[Link, ...] = ()


@dataclass(frozen=True)
class Page:
    """Everything one mail shows; every field but ``kind`` and ``title`` may be empty."""

    kind: str
    subject: str
    title: Phrase
    matchup: str
    score: str = ""
    match: str = ""
    intro: tuple[Phrase, ...] = ()
    notices: tuple[NoticeView, ...] = ()
    prompt: Prompt | None = None
    result: tuple[Phrase, ...] = ()
    news_title: str = ""
    news: tuple[Line, ...] = ()
    talk: tuple[Phrase, ...] = ()  # table talk, under its own heading
    table: tuple[tuple[str, Phrase], ...] = ()
    hand: tuple[tuple[str, Phrase], ...] = ()
    board: Board | None = None
    footer: tuple[str, ...] = ()
    rematch: Link | None = None
    # A game-over mail's review of the recipient's decisions (`pbem.render.review`).
    review: ReviewText | None = None
    # The other answers a finished game's lines offer ("rematch best of 3", "archive"),
    # one click each.
    offers: tuple[Link, ...] = ()
    # The answers a mail outside any game asks for (a confirmation request's), one click
    # each.
    answers: tuple[Link, ...] = ()
    # What the mail is about, when its Subject is the game's one Subject (`game_subject`):
    # the turn's state ("Hand 3 — your turn: play"), its first line and its preheader.
    state: str = ""


# -- the table and the hand -------------------------------------------------------------


def _table(view: PlayerView, p: People) -> tuple[tuple[str, Phrase], ...]:
    rows: list[tuple[str, Phrase]] = []
    if view.phase == GAME_OVER:
        return ()
    dealer = "You" if view.dealer == p.me else p.names[view.dealer]
    owner = "yours" if view.dealer == p.me else p.whose(view.dealer)
    crib = f" ({view.crib_size} card{'s' if view.crib_size != 1 else ''})" if view.crib_size else ""
    rows.append(("Dealer", phrase(f"{dealer} — the crib{crib} is {owner}")))
    if view.starter:
        rows.append(("Starter", phrase(view.starter)))
    if view.phase == PEGGING:
        parts: list[Part] = [f"{view.count}" if view.count_cards else "0 — a new count"]
        if view.count_cards:
            parts.append("  (")
            for i, (seat, card) in enumerate(view.count_cards):
                parts.extend([", " if i else "", card, " ", p.who(seat)])
            parts.append(")")
        rows.append(("Count", tuple(parts)))
    order = [(view.dealer + i) % view.players for i in range(1, view.players + 1)]
    if view.phase == DISCARD:
        # Two rows for the table, whatever the number of players: who has laid away, who not.
        done = [p.who(s) for s in order if s not in view.to_act]
        waiting = [p.who(s) for s in order if s in view.to_act]
        if done:
            rows.append(("Laid away", phrase(cap(join_words(done)))))
        if waiting:
            rows.append(("Choosing", phrase(cap(join_words(waiting)))))
        return tuple(rows)
    for seat in order:
        label = "You" if seat == p.me else p.names[seat]
        if view.phase == PEGGING:
            played = [c for s, c, _ in view.plays if s == seat]
            left = view.cards_left[seat] if seat < len(view.cards_left) else 0
            state = f"{left} card{'s' if left != 1 else ''} left"
            if seat in view.to_act:
                state += ", to play"
            rows.append((label, phrase(state, "; played " if played else None, played or None)))
    return tuple(rows)


def _hand(view: PlayerView, p: People) -> tuple[tuple[str, Phrase], ...]:
    rows: list[tuple[str, Phrase]] = []
    crib = "your crib" if view.dealer == p.me else f"{p.whose(view.dealer)} crib"
    laid = ("Laid away", phrase(view.laid_away, f"  (in {crib})")) if view.laid_away else None
    if view.phase == DISCARD:
        if view.must_discard:
            rows.append(("Holding", phrase(view.holding)))
        else:
            rows.append(("You keep", phrase(view.kept or view.holding)))
    elif view.phase == PEGGING:
        rows.append(("In hand", phrase(view.holding) if view.holding else phrase("none left")))
        if view.kept:
            rows.append(("You kept", phrase(view.kept)))
    elif view.phase == SHOW:
        if view.kept:
            rows.append(("Your hand", phrase(view.kept)))
    elif view.holding:
        rows.append(("In hand", phrase(view.holding)))
    if laid and view.phase != GAME_OVER:
        rows.append(laid)
    return tuple(rows)


# -- the end of the game ----------------------------------------------------------------


def _result(view: PlayerView, p: People, ctx: MailContext) -> tuple[Phrase, ...]:
    out = view.outcome
    if out is None:
        return ()
    losers: list[str] = []
    for side, value in sorted(out.game_values.items()):
        if value <= 1:
            continue
        word = "lurched" if view.skunk == "lurch" else "skunked"
        if value >= 4:
            word = "double skunked"
        seats = seats_of(view, side)
        was = "were" if len(seats) > 1 or p.me in seats else "was"
        score = out.scores[side] if side < len(out.scores) else 0
        losers.append(f"{p.side(side)} {was} {word} at {score}")
    head = f"{cap(p.side_wins(out.winner))} {out.label}"
    if losers:
        head += f" ({'; '.join(losers)})"
    lines: list[Phrase] = []
    if out.reason != "target":
        quitter = next((e.seat for e in view.events if e.kind == "resign"), None)
        if quitter is not None:
            how = "resigned" if out.reason == "resign" else "ran out of time"
            lines.append(phrase(f"{cap(p.who(quitter))} {how}."))
        else:
            how = "by resignation" if out.reason == "resign" else f"by {out.reason}"
            lines.append(phrase(f"The game ended {how}."))
    lines.insert(0, phrase(head + "."))
    order = sorted(range(len(out.scores)), key=lambda side: (side != out.winner, side))
    finals = "; ".join(
        f"{p.side_label(side)} {pegged(out.scores[side], view.target)}" for side in order
    )
    lines.append(phrase(f"Final score: {finals}."))
    lines.extend(phrase(line) for line in ctx.ending)
    return tuple(lines)


# -- subjects ---------------------------------------------------------------------------


def subject_tag(ctx: MailContext | None, label: str | None = None) -> str:
    if label:
        return f"[{clean_name(label, 30)}]"
    if ctx is None or ctx.game_id <= 0:
        return "[Cribbage]"
    return f"[Cribbage {ctx.game_id}]"


def game_subject(game_id: int, names: Sequence[str]) -> str:
    """The one Subject of every mail of a game, whoever it goes to and whatever it says:
    "[Cribbage 12] Nia v Computer" (partners joined: "Nia & Pat v Otto & Quinn"). A
    client that threads by subject keeps the whole game in one conversation; what the
    turn is goes to the mail's first line and its preheader (`Page.state`)."""
    shown = [clean_name(n, 30) or f"Seat {i + 1}" for i, n in enumerate(names)]
    sides = shown
    if len(shown) == 4:  # partners: seats 0 and 2 against 1 and 3
        sides = [f"{shown[0]} & {shown[2]}", f"{shown[1]} & {shown[3]}"]
    return f"[Cribbage {game_id}] {' v '.join(sides)}" if sides else f"[Cribbage {game_id}]"


def titled(ctx: MailContext | None, what: str, label: str | None = None) -> tuple[str, str]:
    """A mail's Subject and its state line: in a game (``ctx.subject``), the game's one
    Subject, with ``what`` the mail is about ("Hand 3 — your turn: play", "Table talk")
    as its state line (`Page.state`); outside any game the tag and ``what`` ("[Cribbage]
    Standings") and no state line."""
    if ctx is not None and ctx.subject:
        return ctx.subject, what
    return f"{subject_tag(ctx, label)} {what}", ""


def state_subject(view: PlayerView, p: People, ctx: MailContext) -> str:
    """The state of the game after the tag, naming no one: "Hand 3 — your turn: play",
    "Hand 3 — waiting for another player", "Game over — you win". (Names are the
    players' own to choose; a subject, shown first and everywhere, carries none.)"""
    if view.outcome is not None:
        if p.me not in range(p.players):  # an observer
            return "Game over"
        won = p.me in p.side_seats(view.outcome.winner)
        return f"Game over — {'you win' if won else 'you lose'}"
    if ctx.paused:
        return f"Hand {view.hand_no} — paused"
    if view.my_turn and view.legal:
        if view.phase == DISCARD:
            what = "discard"
        elif view.phase == PEGGING:
            what = "go" if view.must_go else "play"
        elif view.awaiting_muggins:
            what = "muggins or accept"
        else:
            what = f"count your {view.show_entry[1] if view.show_entry else 'hand'}"
        return f"Hand {view.hand_no} — your turn: {what}"
    waiting = [s for s in view.to_act if s != p.me]
    if not waiting:
        return f"Hand {view.hand_no}"
    if len(waiting) == 1:
        return f"Hand {view.hand_no} — waiting for another player"
    return f"Hand {view.hand_no} — waiting for {len(waiting)} players"


# -- assembling -------------------------------------------------------------------------


def notices_title(notices: Sequence[NoticeView]) -> str:
    """The heading of a mail's notices: "About your reply" when one answers the
    recipient's own mail; what the service tells of itself (a status change, what
    another player did, a request) is a "Note" ("Notes")."""
    if any(n.status != "info" or n.command for n in notices):
        return "About your reply"
    return "Note" if len(notices) == 1 else "Notes"


# A command a notice offers in its words: "Send 'back' when you return", "Reply 'hints
# on' to agree", 'reply "archive" for …'.
_NOTICE_OFFER = re.compile(r"""\b(?:[Ss]end|[Rr]eply)\s+['"“‘]([a-z][a-z0-9 ]{0,30}?)['"”’]""")


def notice_offers(notice: Notice) -> tuple[str, ...]:
    """The commands ``notice`` offers, each to be one click: its ``offer``, and every
    command its words ask the reader to send ("Send 'start' to get your mails again")."""
    found = [notice.offer] if notice.offer else []
    for command in _NOTICE_OFFER.findall(notice.message):
        if command not in found:
            found.append(command)
    return tuple(found)


def notice_views(ctx: MailContext | None) -> tuple[NoticeView, ...]:
    if ctx is None:
        return ()
    return tuple(
        NoticeView(
            NOTICE_LABELS.get(n.status, n.status),
            n.status,
            clean_name(n.command, 60),
            n.message,
            n.legal,
            tuple(
                link(ctx.reply_to, ctx.subject or subject_tag(ctx), command)
                for command in notice_offers(n)
            )
            if ctx.reply_to
            else (),
        )
        for n in ctx.notices
    )


SENT = "Sent automatically; your replies are read by a program."


def footer_lines(game_over: bool = False) -> tuple[str, ...]:
    """The last lines of a mail of a game: what to reply in it (none once it is over)."""
    lines = (
        []
        if game_over
        else [
            'Reply "help" for the commands, "history" for the moves so far, '
            '"hand" for this mail again.'
        ]
    )
    lines.append(SENT)
    return tuple(lines)


def lobby_footer(new_games: bool = True) -> tuple[str, ...]:
    """The last lines of a mail outside any game: only what works there ("history" or
    "hand" name no game). ``new_games``: the lobby lets the recipient start a game by
    mail, so "new" is offered too."""
    new = ', "new" for a game against the computer' if new_games else ""
    return (
        f'Write to this address: "games" for your games and invitations{new}, '
        '"help" for the commands.',
        SENT,
    )


def _title(view: PlayerView, p: People, ctx: MailContext) -> Phrase:
    title = f"Cribbage · game {ctx.game_id}" if ctx.game_id > 0 else "Cribbage"
    if view.outcome is None:
        title += f" · hand {view.hand_no}"
    return phrase(title + f" · to {view.target}")


TALK_LIMIT = 500
"""The longest ``say`` a mail shows (the service caps what it stores the same way)."""


def match_score(info: MatchInfo, view: PlayerView) -> tuple[list[int], int | None]:
    """The game points per side of ``info``'s match with ``view``'s game counted when it
    is over (a lurch or skunk two, a double skunk four: the outcome's value), and the
    side that has won the match (a majority of ``best_of``), or None."""
    sides = len(view.scores)
    before = list(info.before)[:sides]
    tally = MatchScore(sides, before + [0] * (sides - len(before)))
    if view.outcome is not None and view.outcome.winner < sides:
        tally.add(view.outcome)
    score = tally.games
    need = info.best_of // 2 + 1
    won = [side for side, points in enumerate(score) if points >= need]
    return score, (won[0] if won else None)


def match_line(view: PlayerView, p: People, ctx: MailContext) -> str:
    """``Match, best of 5 · game 2 · you 1, Bob 0`` — and at the end of a game, whether
    the match is over."""
    info = ctx.match
    if info is None:
        return ""
    score, winner = match_score(info, view)
    order = sorted(range(len(score)), key=lambda side: p.me not in p.side_seats(side))
    points = ", ".join(f"{p.side_label(side)} {score[side]}" for side in order)
    line = f"Match, best of {info.best_of} · game {info.game_no} · {points}"
    if winner is not None:
        line += f" — {p.side_wins(winner)} the match; the match is over."
    elif view.outcome is not None:
        line += " — the match goes on."
    return line


def with_links(prompt: Prompt, view: PlayerView, ctx: MailContext, subject: str) -> Prompt:
    """``prompt`` with its answers as one-click links (`pbem.render.links`), to the
    recipient's reply address, answering the mail ``subject``: every legal move, in
    every game. Two cards to lay away from six are fifteen pairs, drawn as a grid in
    card order (`discard_grid`: never ranked, which would be a free hint). In a game
    that gives hints the reply line's move is a link too, and marked (★) among the
    others."""
    reply_link = None
    if prompt.suggested and ctx.reply_to and view.phase == PEGGING:
        reply_link = link(ctx.reply_to, subject, f"play {typed(prompt.suggested)}")
    if view.phase == DISCARD and view.must_discard == 2:
        grid = discard_grid(view, ctx.reply_to, subject, prompt.suggested)
        return replace(prompt, grid=grid)
    links = move_links(view, ctx.reply_to, subject, prompt.suggested)
    note = " (★: the reply line's choice)" if prompt.suggested and len(links) > 1 else ""
    return replace(prompt, links=links, link_note=note, reply_link=reply_link)


_OFFERED = re.compile(r'"((?:rematch|archive)(?: best of \d)?)"')


def ending_links(view: PlayerView, p: People, ctx: MailContext, subject: str) -> tuple[Link, ...]:
    """The answers the lines under a finished game's result offer in quotes (`Reply
    "archive" for …`, `"rematch best of 3" makes it a match`), each one click — but the
    one `rematch_link` makes already."""
    if view.outcome is None or not ctx.reply_to or p.me not in range(p.players):
        return ()
    first = rematch_link(view, p, ctx, subject)
    seen = {first.command} if first is not None else set()
    out: list[Link] = []
    for line in ctx.ending:
        for command in _OFFERED.findall(line):
            if command.startswith("rematch") and (first is None or first.command != "rematch"):
                continue  # the match goes on: no rematch yet
            if command not in seen:
                seen.add(command)
                out.append(link(ctx.reply_to, subject, command))
    return tuple(out)


def rematch_link(view: PlayerView, p: People, ctx: MailContext, subject: str) -> Link | None:
    """The game-over mail's one-click answer (sent to the recipient's reply address),
    for a player of a finished game: ``rematch`` — or, while its match goes on, ``next``
    when the next game waits for the players' answers as their cuts (a fair game: its
    deal lines; otherwise the next game starts by itself); none without a reply
    address."""
    if view.outcome is None or not ctx.reply_to or p.me not in range(p.players):
        return None
    if ctx.match is not None and match_score(ctx.match, view)[1] is None:
        return link(ctx.reply_to, subject, "next") if ctx.deal_lines else None
    return link(ctx.reply_to, subject, "rematch")


def talk_lines(talk: Sequence[Said]) -> tuple[Phrase, ...]:
    """Table talk, one line each, for its own heading: ``Bob says: "well played"``."""
    return tuple(
        phrase(f"{clean_name(said.name)} says: \u201c{clean_name(said.text, TALK_LIMIT)}\u201d")
        for said in talk
    )


def news_title(ctx: MailContext) -> str:
    """The heading of the moves a mail tells: "Since your last mail" — or, in a first
    mail, "The game so far" ("The hand so far" when it starts at this hand's deal)."""
    if not ctx.since_event:
        return "The game so far"
    return "The hand so far" if ctx.first_mail else "Since your last mail"


def build_page(
    kind: str,
    view: PlayerView,
    ctx: MailContext,
    subject: str,
    *,
    news: bool = True,
    intro: tuple[Phrase, ...] = (),
    events: Sequence[Event] | None = None,
    state: str = "",
) -> Page:
    p = People(view, ctx)
    narrated: tuple[Line, ...] = ()
    title = ""
    if events is not None:
        narrated = Narrator(view, p).lines(events)
        title = "The game so far"
    elif news:
        narrated = Narrator(view, p).lines(view.events)
        title = news_title(ctx)
    talk = talk_lines(ctx.talk) if events is not None or news else ()
    if ctx.opening:
        intro = (phrase(ctx.opening), *intro)
    if ctx.paused and view.outcome is None:
        intro = (*intro, phrase("This game is paused: moves wait until it is resumed."))
    prompt = build_prompt(view, p, ctx)
    if prompt is not None and prompt.mine and not ctx.paused:
        prompt = with_links(prompt, view, ctx, subject)
    return Page(
        kind=kind,
        subject=subject,
        title=_title(view, p, ctx),
        matchup=p.matchup(),
        score=p.score(),
        match=match_line(view, p, ctx),
        intro=intro,
        notices=notice_views(ctx),
        prompt=prompt,
        result=_result(view, p, ctx),
        news_title=title,
        news=narrated,
        talk=talk,
        table=_table(view, p),
        hand=_hand(view, p),
        board=build_board(view, p),
        footer=(*ctx.deal_lines, *footer_lines(view.outcome is not None)),
        rematch=rematch_link(view, p, ctx, subject),
        review=review_text(ctx.review, p.names)
        if ctx.review is not None and view.outcome is not None
        else None,
        offers=ending_links(view, p, ctx, subject),
        state=state,
    )
