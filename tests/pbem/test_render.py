"""Rendering mails from player views: content, layout, escaping and — above all —
that no mail ever shows a card hidden from its recipient.

The leak tests drive real games with seeded random legal moves (as the service
does: a move, then any forced moves) and, after every step, render every seat's
mail and look for every card that seat may not know, in every written form.
"""

from __future__ import annotations

import dataclasses
import html as htmllib
import random
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import (
    DISCARD,
    PEGGING,
    SHOW,
    Accept,
    Action,
    Card,
    Claim,
    Discard,
    Event,
    Game,
    Go,
    Muggins,
    Outcome,
    Play,
    PlayerView,
    Resign,
    Suit,
    count_words,
    new_game,
    parse_card,
    player_view,
    score_play,
    score_show,
    show_points,
    visible_events,
)
from engine.computer import decide
from engine.players import discard_values
from pbem.render import (
    TEMPLATES,
    MailContext,
    Notice,
    RenderedMail,
    Said,
    render_archive,
    render_error,
    render_help,
    render_history,
    render_reminder,
    render_talk,
    render_turn,
)
from pbem.render.board import house_rules
from pbem.render.prompt import suggested_action

NAMES = ("Alice", "Bob", "Carol", "Dave")
WIDTH = 78


def cards(text: str) -> tuple[Card, ...]:
    return tuple(parse_card(c) for c in text.split())


def ctx_for(
    game: Game, seat: int, since: int = 0, names: tuple[str, ...] = NAMES, **kw: object
) -> MailContext:
    return MailContext(
        game_id=12,
        names=names[: game.players],
        recipient_seat=seat,
        reply_hint="Reply to this email with your move.",
        since_event=since,
        ending=('Reply "rematch" for another game.', 'Reply "archive" for the whole game.'),
        **kw,  # type: ignore[arg-type]
    )


# -- finding cards in a mail ------------------------------------------------------------

_RANKS = {"A": 1, "J": 11, "Q": 12, "K": 13, **{str(n): n for n in range(2, 11)}}
_SUITS = {"♣": 0, "♦": 1, "♥": 2, "♠": 3, "C": 0, "D": 1, "H": 2, "S": 3}
_CARD_TOKEN = re.compile(r"(?<![0-9A-Za-z])(10|[2-9AJQK])([♣♦♥♠CDHS])(?![0-9A-Za-z])")
_LOWER_TOKEN = re.compile(r"(?<![0-9A-Za-z])(10|[2-9ajqk])([cdhs])(?![0-9A-Za-z])")
_ENGLISH = {"as", "ad", "ah", "ac"}  # lower-case "cards" that are ordinary words
_WORD_TOKEN = re.compile(
    r"\b(ace|two|three|four|five|six|seven|eight|nine|ten|jack|queen|king) of "
    r"(clubs|diamonds|hearts|spades)\b",
    re.IGNORECASE,
)
_WORD_RANKS = "ace two three four five six seven eight nine ten jack queen king".split()
_WORD_SUITS = "clubs diamonds hearts spades".split()


def _card(rank: int, suit: int) -> Card:
    return Card.from_index((rank - 1) * 4 + suit)


def cards_named(text: str) -> set[Card]:
    """Every card written in ``text``: ``7♣``, ``7C``, ``7c`` or ``seven of clubs``."""
    found = {_card(_RANKS[r], _SUITS[s]) for r, s in _CARD_TOKEN.findall(text)}
    for r, s in _LOWER_TOKEN.findall(text):
        if (r + s) not in _ENGLISH:
            found.add(_card(_RANKS[r.upper()], _SUITS[s.upper()]))
    for r, s in _WORD_TOKEN.findall(text):
        found.add(_card(_WORD_RANKS.index(r.lower()) + 1, _WORD_SUITS.index(s.lower())))
    return found


class _TextOf(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_text(markup: str) -> str:
    parser = _TextOf()
    parser.feed(markup)
    parser.close()
    return "".join(parser.parts)


def cards_in_mail(mail: RenderedMail) -> set[Card]:
    return (
        cards_named(mail.subject)
        | cards_named(mail.text)
        | cards_named(mail.html)
        | cards_named(htmllib.unescape(mail.html))
        | cards_named(html_text(mail.html))
    )


def test_the_card_finder_finds_every_form_and_no_false_cards() -> None:
    text = "7♣ and 10H, jd, ten of spades; as ah #2C3E50 110C 10C7 A♠"
    assert cards_named(text) == set(cards("7♣ 10♥ J♦ 10♠ A♠"))


# -- what a seat may not know -----------------------------------------------------------


def _event_cards(e: Event) -> set[Card]:
    return set(e.cards) | {c for item in e.items for c in item.cards}


def hidden_from(game: Game, seat: int, told: tuple[Event, ...] = ()) -> set[Card]:
    """Cards ``seat`` may not see now: other players' cards, the crib, the pack —
    less every card made public this hand (played, turned, shown) and any card in a
    public event the mail reports (``told``: a past hand's show, the cut for deal)."""
    state = game.state_json()
    hidden = {parse_card(c) for c in state["pack"]} | {parse_card(c) for c in state["crib"]}
    for other in range(game.players):
        if other != seat:
            hidden |= set(game.holding(other)) | set(game.kept(other))
            hidden |= set(game.laid_away(other))
    public: set[Card] = {c for _, c, _ in game.plays}
    if game.starter is not None:
        public.add(game.starter)
    for e in game.events:
        if e.private_to is None and e.hand == game.hand_no:
            public |= _event_cards(e)
    for e in told:
        if e.private_to is None:
            public |= _event_cards(e)
    own = set(game.holding(seat)) | set(game.kept(seat)) | set(game.laid_away(seat))
    # Muggins games: the hand or crib being counted lies face up (``view.showing``).
    return hidden - public - own - set(game.showing())


# -- well-formed HTML -------------------------------------------------------------------

_VOID = {"meta", "br", "hr", "img", "input", "link"}


class _Strict(HTMLParser):
    """Fails on a closing tag that does not match the open one, or anything left open."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _VOID:
            self.stack.append(tag)
        for name, value in attrs:
            if name.startswith("on") or (value or "").lower().startswith("javascript:"):
                self.errors.append(f"script attribute {name}")
            if name in ("src", "href") and value and not value.startswith(("mailto:", "#")):
                self.errors.append(f"external reference {value}")

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()


def assert_well_formed(markup: str) -> None:
    parser = _Strict()
    parser.feed(markup)
    parser.close()
    assert not parser.errors, parser.errors[:3]
    assert not parser.stack, f"left open: {parser.stack}"
    assert markup.lstrip().lower().startswith("<!doctype html>")
    # One style block, in the head (classes instead of inline styles); nothing external.
    assert markup.count("<style>") == 1 and markup.index("</style>") < markup.index("</head>")
    assert "<link" not in markup and "<script" not in markup.lower()
    assert "<img" not in markup


def tile(card: Card) -> str:
    """A card as the HTML part draws it among one's own cards (red ones in <em>)."""
    red = card.suit in (Suit.HEARTS, Suit.DIAMONDS)
    return f"<kbd><em>{card}</em></kbd>" if red else f"<kbd>{card}</kbd>"


def assert_narrow(text: str) -> None:
    for line in text.splitlines():
        assert len(line) <= WIDTH, f"{len(line)} columns: {line!r}"


# -- driving games ----------------------------------------------------------------------


def _crib(game: Game) -> tuple[Card, ...]:
    return tuple(parse_card(c) for c in game.state_json()["crib"])


def choose(game: Game, rng: random.Random) -> Action:
    """A random legal move; in muggins games, claims near the true count."""
    legal = game.legal_actions()
    first = legal[0]
    if isinstance(first, Claim):
        entry = game.show_entry()
        assert entry is not None
        seat, what = entry
        shown = _crib(game) if what == "crib" else game.kept(seat)
        actual = show_points(shown, game.starter, crib=what == "crib")
        claim = rng.choice([actual, actual, max(actual - rng.randint(1, 4), 0), actual + 2])
        return Claim(first.seat, min(claim, 29))
    if isinstance(first, Muggins | Accept):
        return rng.choice(legal)
    return rng.choice(legal)


@dataclass
class Step:
    game: Game
    since: int
    events: tuple[Event, ...] = field(default_factory=tuple)


def play(
    players: int,
    seed: str,
    *,
    muggins: bool = False,
    target: int = 121,
    resign_at: int | None = None,
    limit: int = 2000,
) -> Iterator[Step]:
    """Yield the game before the first move and after each move (with its forced moves)."""
    game = new_game(players, seed=seed, muggins=muggins, target=target)
    rng = random.Random(seed)
    yield Step(game, 0, tuple(game.events))
    for n in range(limit):
        if game.is_over:
            return
        since = len(game.events)
        if resign_at is not None and n == resign_at:
            game.apply(Resign(rng.randrange(players)))
        else:
            game.apply(choose(game, rng))
        while not game.is_over and (forced := game.forced_action()) is not None:
            game.apply(forced)
        yield Step(game, since, tuple(game.events[since:]))


def what_happened(step: Step, seat: int) -> set[str]:
    game = step.game
    seen: set[str] = set()
    view = player_view(game, seat, step.since)
    seen.add(game.phase)
    if game.awaiting_muggins:
        seen.add("muggins window")
    if view.must_go:
        seen.add("must go")
    for e in view.events:
        seen.add(e.kind)
        if e.kind == "deal" and e.hand > 1:
            seen.add("hand rollover")
    return seen


SCENARIOS = [
    pytest.param(players, muggins, seed, resign_at, id=f"{players}p-{seed}")
    for players, muggins, seed, resign_at in (
        (2, False, "leak-2a", None),
        (2, True, "leak-2m1", None),
        (2, False, "leak-2r", 37),
        (3, False, "leak-3a", None),
        (3, True, "leak-3m", None),
        (3, True, "leak-3r", 50),
        (4, False, "leak-4a", None),
        (4, True, "leak-4m", None),
        (4, False, "leak-4r", 23),
    )
]


@pytest.mark.parametrize(("players", "muggins", "seed", "resign_at"), SCENARIOS)
def test_no_mail_shows_a_card_hidden_from_its_recipient(
    players: int, muggins: bool, seed: str, resign_at: int | None
) -> None:
    seen: set[str] = set()
    target = 61 if resign_at is None and players == 4 else 121
    game = new_game(players, seed=seed)
    refused = (Notice("refused", "play zz", "no such card"),)
    for steps, step in enumerate(
        play(players, seed, muggins=muggins, target=target, resign_at=resign_at), 1
    ):
        game = step.game
        for seat in range(players):
            view = player_view(game, seat, step.since)
            ctx = ctx_for(game, seat, step.since)
            seen |= what_happened(step, seat)
            mail = render_turn(view, ctx)
            leaked = cards_in_mail(mail) & hidden_from(game, seat, step.events)
            assert not leaked, f"turn mail to seat {seat} shows {leaked}\n{mail.text}"
            assert_narrow(mail.text)
            if steps % 7 == 0 or game.is_over:
                assert_well_formed(mail.html)
                status = player_view(game, seat, len(game.events))
                for extra in (
                    render_reminder(status, ctx_for(game, seat), "3 days"),
                    render_error(
                        ctx_for(game, seat, notices=refused),
                        status,
                        "Your mail could not be applied",
                    ),
                ):
                    assert not cards_in_mail(extra) & hidden_from(game, seat)
                    assert_narrow(extra.text)
                    assert_well_formed(extra.html)
            if steps % 25 == 0 or game.is_over:
                everything = visible_events(game, seat, 0)
                status = player_view(game, seat, len(game.events))
                history = render_history(status, ctx_for(game, seat), everything)
                leaked = cards_in_mail(history) & hidden_from(game, seat, everything)
                assert not leaked, f"history to seat {seat} shows {leaked}"
                assert_narrow(history.text)
                assert_well_formed(history.html)
    assert game.is_over
    wanted = {DISCARD, PEGGING, "game_over", "play", "go", "count_end", "hand rollover"}
    if resign_at is not None:
        wanted = {DISCARD, PEGGING, "resign", "game_over"}
    elif muggins:
        wanted |= {SHOW, "claim", "muggins window", "reveal"}
    else:
        wanted |= {"show"}
    assert wanted <= seen, f"never rendered: {wanted - seen}"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_private_events_of_others_are_never_narrated(players: int) -> None:
    """Even if handed every event, a mail narrates only public ones and the recipient's own."""
    game = new_game(players, seed=f"private-{players}", muggins=True)
    rng = random.Random(players)
    for _ in range(12):
        game.apply(choose(game, rng))
    for seat in range(players):
        view = dataclasses.replace(player_view(game, seat), events=tuple(game.events))
        public = tuple(e for e in game.events if e.private_to is None)
        hidden = hidden_from(game, seat, public)
        assert hidden, "the test needs some hidden cards"
        for mail in (
            render_turn(view, ctx_for(game, seat)),
            render_history(view, ctx_for(game, seat), tuple(game.events)),
        ):
            assert not cards_in_mail(mail) & hidden


# -- subjects ---------------------------------------------------------------------------


def _until(game: Game, rng: random.Random, done: object) -> None:
    for _ in range(3000):
        if callable(done) and done(game):
            return
        game.apply(choose(game, rng))
        while (
            not game.is_over
            and (forced := game.forced_action()) is not None
            and not (callable(done) and done(game))
        ):
            game.apply(forced)
    raise AssertionError("state never reached")


def subject(game: Game, seat: int) -> str:
    return render_turn(player_view(game, seat), ctx_for(game, seat)).subject


def test_subjects_name_the_hand_and_what_the_recipient_must_do() -> None:
    game = new_game(2, seed="subjects", first_dealer=0)
    assert subject(game, 1) == "[Cribbage 12] Hand 1 — your turn: discard"
    game.apply(game.legal_actions(1)[0])
    # Subjects name no one: a name is the player's to choose.
    assert subject(game, 1) == "[Cribbage 12] Hand 1 — waiting for another player"
    assert subject(game, 0) == "[Cribbage 12] Hand 1 — your turn: discard"
    rng = random.Random(1)
    _until(game, rng, lambda g: g.phase == PEGGING and not g.forced_action())
    turn = game.to_act()[0]
    assert subject(game, turn) == "[Cribbage 12] Hand 1 — your turn: play"
    assert subject(game, 1 - turn) == "[Cribbage 12] Hand 1 — waiting for another player"


def test_a_subject_waiting_for_several_players_counts_them() -> None:
    game = new_game(3, seed="subjects-3")
    game.apply(game.legal_actions(0)[0])
    assert subject(game, 0) == "[Cribbage 12] Hand 1 — waiting for 2 players"


HOSTILE = ("PayPal Security <security@paypal.com>\u202e", "=?utf-8?b?RXZpbA0K?=", "C", "D")


def test_no_subject_names_a_player_or_quotes_their_talk() -> None:
    game = new_game(2, seed="subjects-hostile", first_dealer=0)
    rng = random.Random(3)
    seen = set()
    while True:
        for seat in range(2):
            view = player_view(game, seat)
            for mail in (
                render_turn(view, ctx_for(game, seat, names=HOSTILE)),
                render_reminder(view, ctx_for(game, seat, names=HOSTILE), "2 days"),
                render_talk(ctx_for(game, seat, names=HOSTILE, talk=(Said(HOSTILE[0], "hi"),))),
            ):
                seen.add(mail.subject)
                for word in ("PayPal", "paypal", "\u202e", "=?", "Evil", "hi"):
                    assert word not in mail.subject, mail.subject
        if game.is_over:
            break
        game.apply(choose(game, rng))
    assert any("Game over" in subject for subject in seen) and len(seen) > 5


def test_subject_for_a_go_and_for_muggins() -> None:
    game = new_game(2, seed="go-subject", muggins=True)
    rng = random.Random(2)
    for _ in range(400):
        if game.phase == PEGGING and any(isinstance(a, Go) for a in game.legal_actions()):
            seat = game.to_act()[0]
            assert subject(game, seat).endswith("your turn: go")
            break
        game.apply(choose(game, rng))
    else:
        raise AssertionError("no go")
    _until(game, rng, lambda g: g.phase == SHOW and not g.awaiting_muggins)
    entry = game.show_entry()
    assert entry is not None
    assert subject(game, entry[0]).endswith(f"your turn: count your {entry[1]}")
    _until(game, rng, lambda g: g.awaiting_muggins)
    responder = game.to_act()[0]
    assert subject(game, responder).endswith("your turn: muggins or accept")


def test_game_over_subject_and_result() -> None:
    *_, last = play(2, "to-the-end")
    game = last.game
    outcome = game.outcome
    assert outcome is not None
    winner, loser = outcome.winner, 1 - outcome.winner
    mail = render_turn(player_view(game, loser, last.since), ctx_for(game, loser, last.since))
    assert mail.subject == "[Cribbage 12] Game over — you lose"
    assert f"GAME OVER: {NAMES[winner]} wins {outcome.label}" in mail.text
    flat = " ".join(mail.text.split())
    assert 'Reply "rematch" for another game.' in flat  # the ending, under the result
    assert 'Reply "archive" for the whole game.' in flat and "archive" in mail.html
    assert "pbem " not in mail.text and "pbem " not in mail.html  # no admin commands
    top = "121, pegged out" if outcome.scores[winner] >= 121 else outcome.scores[winner]
    final = f"Final score: {NAMES[winner]} {top}; You {outcome.scores[loser]}."
    assert final in mail.text
    mine = render_turn(player_view(game, winner, last.since), ctx_for(game, winner, last.since))
    assert mine.subject == "[Cribbage 12] Game over — you win"
    for m in (mail, mine):
        assert len(m.subject) < 60 and "—" in m.subject


def _with_outcome(view: PlayerView, outcome: Outcome, skunk: str = "skunk") -> PlayerView:
    return dataclasses.replace(
        view, outcome=outcome, phase="game_over", skunk=skunk, legal=(), to_act=(), my_turn=False
    )


@pytest.mark.parametrize(
    ("skunk", "value", "words"),
    [
        ("skunk", 2, "Alice wins a double game (Bob was skunked at 84)."),
        ("lurch", 2, "Alice wins a double game (Bob was lurched at 84)."),
        ("skunk", 4, "Alice wins a quadruple game (Bob was double skunked at 84)."),
        ("none", 1, "Alice wins a single game."),
    ],
)
def test_skunks_and_lurches_in_words(skunk: str, value: int, words: str) -> None:
    game = new_game(3, seed="skunk")
    outcome = Outcome(0, (0,), (121, 84, 100), "target", {1: value, 2: 1})
    view = _with_outcome(player_view(game, 2), outcome, skunk)
    mail = render_turn(view, ctx_for(game, 2))
    assert f"GAME OVER: {words}" in mail.text
    assert mail.subject == "[Cribbage 12] Game over — you lose"


def test_resignation_is_told() -> None:
    game = new_game(4, seed="resign")
    since = len(game.events)
    game.apply(Resign(1))
    mail = render_turn(player_view(game, 0, since), ctx_for(game, 0, since))
    assert mail.subject == "[Cribbage 12] Game over — you win"
    assert "Bob resigned." in mail.text
    other = render_turn(player_view(game, 3, since), ctx_for(game, 3, since))
    assert other.subject == "[Cribbage 12] Game over — you lose"


# -- content ----------------------------------------------------------------------------


def test_show_lists_each_hand_counted_in_words() -> None:
    game = new_game(2, seed="words")
    hand, starter = cards("4♣ 5♥ 5♠ J♦"), parse_card("6♦")
    items = score_show(hand, starter)
    show = Event(
        "show",
        game.hand_no,
        seat=0,
        side=0,
        cards=hand,
        points=sum(i.points for i in items),
        items=items,
        detail="hand",
    )
    first = Event("starter", game.hand_no, seat=1, cards=(starter,))
    view = dataclasses.replace(player_view(game, 1), events=(first, show))
    mail = render_turn(view, ctx_for(game, 1, since=5))
    said = count_words(items)
    assert said.startswith("fifteen two, fifteen four") and said.endswith("in all")
    flat = " ".join(mail.text.split())
    assert f"Alice's hand 4♣ 5♥ 5♠ J♦ + starter 6♦: {said}." in flat
    assert f"Alice's hand 4♣ 5♥ 5♠ J♦ + starter 6♦: {said}." in " ".join(
        html_text(mail.html).split()
    )
    assert "Since your last mail" in mail.text


def test_pegging_moves_in_words() -> None:
    game = new_game(2, seed="pegging")
    h = game.hand_no
    ten, five, five2 = cards("10♠ 5♥ 5♣")
    events = (
        Event("play", h, seat=0, side=0, cards=(ten,), count=10),
        Event(
            "play",
            h,
            seat=1,
            side=1,
            cards=(five,),
            count=15,
            points=2,
            items=score_play([ten, five]),
        ),
        Event(
            "play",
            h,
            seat=0,
            side=0,
            cards=(five2,),
            count=20,
            points=2,
            items=score_play([ten, five, five2]),
        ),
        Event("go", h, seat=1, count=20),
        Event("count_end", h, seat=0, side=0, cards=(five2,), count=20, points=1, detail="go"),
    )
    view = dataclasses.replace(player_view(game, 0), events=events)
    text = render_turn(view, ctx_for(game, 0, since=3)).text
    # A count is written as a count; "for two" is kept for points.
    assert "You played 10♠, the count is 10." in text
    assert "Bob played 5♥, the count is 15 — fifteen two." in text
    assert "You played 5♣, the count is 20 — a pair for two." in text
    assert "Bob said go at 20." in text
    assert "You pegged 1 for the go (count 20)." in text
    assert not re.search(r"played \S+ for \d", text)


def test_turn_mail_says_exactly_what_to_reply() -> None:
    """With hints on (``suggest``), the reply line is the computer's move."""
    game = new_game(2, seed="reply", first_dealer=0)
    view = player_view(game, 1)
    mail = render_turn(view, ctx_for(game, 1, suggest=True))
    best = suggested_action(view)
    assert isinstance(best, Discard)
    assert f"        discard {' '.join(str(c) for c in best.cards)}\n" in mail.text
    assert "(choose 2 of your 6 cards for Alice's crib)" in mail.text
    assert "Reply to this email with your move." in mail.text
    rng = random.Random(4)
    _until(game, rng, lambda g: g.phase == PEGGING and len(g.legal_actions()) > 1)
    seat = game.to_act()[0]
    view = player_view(game, seat)
    text = render_turn(view, ctx_for(game, seat, suggest=True)).text
    best = suggested_action(view)
    assert isinstance(best, Play)
    assert f"        play {best.card}\n" in text
    assert "(you can play " in " ".join(text.split())
    for card in view.holding:
        assert str(card) in text


@pytest.mark.parametrize("players", [2, 3, 4])
def test_without_hints_the_reply_line_lists_the_choices(players: int) -> None:
    """A game without hints (between people, until all agree) suggests no move: the
    reply line lists what may be done, and nobody's choice among it."""
    rng = random.Random(players)
    for seed in range(4):
        game = new_game(players, seed=f"choices-{players}-{seed}")
        seat = game.to_act()[0]
        view = player_view(game, seat)
        mail = render_turn(view, ctx_for(game, seat))
        need = view.must_discard
        word = "two" if need == 2 else "one"
        holding = " ".join(str(c) for c in view.holding)
        assert f"        discard {word} of: {holding}\n" in mail.text
        letters = " ".join(c.ascii.lower() for c in view.holding)
        assert f"Plain letters work too: {letters}." in " ".join(mail.text.split())
        best = suggested_action(view)
        assert isinstance(best, Discard)
        assert f"discard {' '.join(str(c) for c in best.cards)}\n" not in mail.text
        assert f"discard {' '.join(str(c) for c in best.cards)}<" not in mail.html
        assert f"discard {word} of:" in htmllib.unescape(mail.html)
        _until(game, rng, lambda g: g.phase == PEGGING and len(g.legal_actions()) > 1)
        if game.is_over or game.phase != PEGGING:
            continue
        seat = game.to_act()[0]
        view = player_view(game, seat)
        text = render_turn(view, ctx_for(game, seat)).text
        playable = " ".join(str(c) for c in view.playable)
        assert f"        play one of: {playable}\n" in text
        best = suggested_action(view)
        assert isinstance(best, Play)
        assert f"        play {best.card}\n" not in text


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_reply_line_offers_the_computer_players_move_from_the_view_alone(
    players: int,
) -> None:
    """The suggested discard and play are the ``good`` computer player's choice, legal,
    and decided from the recipient's view only: the same view rebuilt from its JSON (which
    holds nothing the recipient may not see) suggests the same, and so does the view of
    nothing else (`suggested_action` takes the view and nothing more)."""
    rng = random.Random(players)
    for seed in range(6):
        game = new_game(players, seed=f"suggest-{players}-{seed}")
        seat = game.to_act()[0]
        view = player_view(game, seat)
        best = suggested_action(view)
        assert isinstance(best, Discard) and best in view.legal
        want = decide(view, random.Random(f"1/discard/{' '.join(c.ascii for c in view.holding)}/0"))
        assert best == want
        assert suggested_action(PlayerView.from_json(view.to_json())) == best
        good = next(value for value, d in discard_values(view) if d == best)
        assert good >= max(value for value, _ in discard_values(view)) - 1e-9
        text = render_turn(view, ctx_for(game, seat, suggest=True)).text
        assert f"discard {' '.join(str(c) for c in best.cards)}" in text
        _until(game, rng, lambda g: g.phase == PEGGING and len(g.legal_actions()) > 1)
        if game.is_over or game.phase != PEGGING:
            continue
        seat = game.to_act()[0]
        view = player_view(game, seat)
        best = suggested_action(view)
        assert isinstance(best, Play) and best in view.legal
        assert suggested_action(PlayerView.from_json(view.to_json())) == best
        assert f"play {best.card}" in render_turn(view, ctx_for(game, seat, suggest=True)).text
        # Nothing to suggest to a player who is not to move.
        idle = next(s for s in range(players) if s not in game.to_act())
        assert suggested_action(player_view(game, idle)) is None


def test_partnerships_are_shown() -> None:
    game = new_game(4, seed="partners")
    text = render_turn(player_view(game, 0), ctx_for(game, 0)).text
    assert "You and Carol vs Bob and Dave" in text
    assert "You & Carol" in text and "Bob & Dave" in text
    text = render_turn(player_view(game, 3), ctx_for(game, 3)).text
    assert "You and Bob vs Alice and Carol" in text


def test_notices_come_first_with_reasons_and_choices() -> None:
    game = new_game(2, seed="notices")
    notices = (
        Notice("applied", "discard 5h jd", "discard 5♥ J♦ — done."),
        Notice("refused", "play 9d", "cannot play 9♦: the count would be 33", "play 2♣ or go"),
        Notice("ambiguous", "play 7", "'7' is ambiguous: you hold 7♣ and 7♦", "play 7♣ or 7♦"),
        Notice("ignored", "Thanks <b>pal</b>", "not a command, ignored"),
    )
    mail = render_turn(player_view(game, 0), ctx_for(game, 0, notices=notices))
    text = mail.text
    assert text.index("About your reply") < text.index("Your turn")
    assert "[done]     discard 5h jd — discard 5♥ J♦ — done." in text
    assert "[refused]  play 9d — cannot play 9♦: the count would be 33" in text
    assert "You could: play 2♣ or go" in text
    assert "[unclear]" in text and '"Thanks <b>pal</b>"' in text
    assert "&lt;b&gt;pal&lt;/b&gt;" in mail.html and "<b>pal" not in mail.html


def test_board_marks_front_and_back_pegs() -> None:
    game = new_game(2, seed="board")
    view = player_view(game, 0)
    scores = (
        dataclasses.replace(view.scores[0], front=87, back=75),
        dataclasses.replace(view.scores[1], front=3, back=0),
    )
    text = render_turn(dataclasses.replace(view, scores=scores), ctx_for(game, 0)).text
    lines = text.splitlines()
    row = lines.index(next(line for line in lines if line.strip().startswith("61 ")))
    you, bob = lines[row + 1], lines[row + 2]
    assert you.startswith("  You  ") and bob.startswith("  Bob  ")
    holes = you[7:].replace(" ", "")
    assert len(holes) == 30
    assert holes[75 - 61] == "○" and holes[87 - 61] == "●"
    assert holes.count(".") == 28  # ASCII holes: the board costs no encoding
    top = lines.index(next(line for line in lines if line.strip().startswith("1 ")))
    assert lines[top + 2].startswith("  Bob  ")
    assert lines[top + 2][7:].replace(" ", "").index("●") == 3 - 1
    assert bob[7:].replace(" ", "") == "." * 30
    assert re.search(r"You +87 +\(\+12 from 75\) +34 to go", text)
    # The HTML part draws each side's progress as a bar (its width: front peg / target).
    html = render_turn(dataclasses.replace(view, scores=scores), ctx_for(game, 0)).html
    assert f'style="width:{round(100 * 87 / 121, 1)}%"' in html
    assert f'style="width:{round(100 * 3 / 121, 1)}%"' in html


def test_a_board_drawn_before_is_drawn_from_memory_and_a_new_score_draws_anew() -> None:
    from pbem.render.mail import _memo

    game = new_game(2, seed="board-memo")
    view = player_view(game, 0)
    first = render_turn(view, ctx_for(game, 0))
    hits = _memo.cache_info().hits
    again = render_turn(view, ctx_for(game, 0, since=1))
    assert _memo.cache_info().hits == hits + 2  # the text board and the HTML board
    board = first.text[first.text.index("Scores —") :]
    assert again.text[again.text.index("Scores —") :] == board
    scored = dataclasses.replace(
        view, scores=(dataclasses.replace(view.scores[0], front=5, back=0), view.scores[1])
    )
    moved = render_turn(scored, ctx_for(game, 0)).text
    assert re.search(r"You +5 +\(\+5 from 0\) +116 to go", moved)
    assert moved[moved.index("Scores —") :] != board


def test_html_escapes_names_and_colours_red_suits() -> None:
    names = ("<script>alert(1)</script>", "Bob & <i>Co</i>", "Carol")
    game = new_game(3, seed="escape")
    mail = render_turn(player_view(game, 2), ctx_for(game, 2, names=names))
    assert "<script" not in mail.html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in mail.html
    assert "&lt;i&gt;Co&lt;/i&gt;" in mail.html
    assert_well_formed(mail.html)
    assert "<script>alert(1)</script>" in mail.text  # plain text is shown as written
    red = [c for c in player_view(game, 2).holding if c.suit in (1, 2)]
    assert red
    for card in red:
        assert f"<em>{card}</em>" in mail.html  # red: the style block colours <em>
    assert "em{color:#c62828" in mail.html
    assert "max-width:600px" in mail.html and 'name="viewport"' in mail.html


def test_names_cannot_break_lines_or_the_subject() -> None:
    names = ("Ann\r\nBcc: evil@example.com", "B" * 90)
    game = new_game(2, seed="names", first_dealer=1)
    game.apply(game.legal_actions(0)[0])
    mail = render_turn(player_view(game, 0), ctx_for(game, 0, names=names))
    assert "\n" not in mail.subject and "\r" not in mail.subject
    assert len(mail.subject) < 80
    assert_narrow(mail.text)


def test_paused_games_say_so() -> None:
    game = new_game(2, seed="paused")
    mail = render_turn(player_view(game, 0), ctx_for(game, 0, paused=True))
    assert mail.subject == "[Cribbage 12] Hand 1 — paused"
    assert "This game is paused" in mail.text


def test_footer_says_how_to_get_help_and_that_mail_is_automatic() -> None:
    game = new_game(2, seed="footer")
    mail = render_turn(player_view(game, 0), ctx_for(game, 0))
    assert '\n-- \nReply "help"' in mail.text
    assert "Sent automatically" in mail.text and "Sent automatically" in mail.html


def test_help_lists_the_command_language() -> None:
    mail = render_help(None, "Cribbage 12")
    assert mail.subject == "[Cribbage 12] How to play by mail"
    for verb in (
        "discard 5h jd",
        "play 7c",
        "go",
        "count 12",
        "muggins",
        "accept",
        "resign",
        "hand",
        "history",
        "mail all",
        "help",
    ):
        assert verb in mail.text and verb in html_text(mail.html)
    assert_narrow(mail.text)
    assert_well_formed(mail.html)
    assert "House rules" not in mail.text  # no game, no rules


@pytest.mark.parametrize(
    ("players", "target", "muggins", "skunk", "rules"),
    [
        (
            2,
            121,
            False,
            "skunk",
            "to 121, muggins off, skunk under 91 (2 games), double under 61 (4), 2 players",
        ),
        (
            3,
            61,
            True,
            "lurch",
            "to 61, muggins on, lurch under 31 (2 games), 3 players",
        ),
        (
            4,
            121,
            False,
            "none",
            "to 121, muggins off, no skunks, 2 partnerships",
        ),
    ],
)
def test_the_house_rules_are_stated_in_the_first_mail_the_board_and_help(
    players: int, target: int, muggins: bool, skunk: str, rules: str
) -> None:
    game = new_game(players, seed="rules", target=target, muggins=muggins, skunk=skunk)
    assert house_rules(players, target, muggins, skunk) == rules
    first = render_turn(player_view(game, 0), ctx_for(game, 0))
    flat = " ".join(first.text.split())
    assert f"House rules: {rules}" in flat
    assert f"House rules: {rules}" in " ".join(html_text(first.html).split())
    assert_narrow(first.text)
    later = render_reminder(player_view(game, 1), ctx_for(game, 1), "2 days")
    assert f"House rules: {rules}" in " ".join(later.text.split())  # on every board
    helped = render_help(ctx_for(game, 0), "Cribbage 12", rules=rules)
    assert f"House rules of this game: {rules}." in " ".join(helped.text.split())
    assert f"House rules of this game: {rules}." in " ".join(html_text(helped.html).split())
    assert_narrow(helped.text)


def test_error_without_a_game() -> None:
    ctx = MailContext(0, ("Ann",), 0, "", notices=(Notice("refused", "", "Which game?"),))
    mail = render_error(ctx, None, "Which game?")
    assert mail.subject == "[Cribbage] Which game?"
    assert "[refused]  Which game?" in mail.text
    assert_well_formed(mail.html)


def test_reminder_says_how_long_the_game_has_waited() -> None:
    game = new_game(2, seed="remind", first_dealer=0)
    mail = render_reminder(player_view(game, 1), ctx_for(game, 1), "2 days")
    assert mail.subject == "[Cribbage 12] Reminder — your turn: discard"
    assert "waiting for your move for 2 days" in mail.text


def test_history_tells_every_hand() -> None:
    *_, last = play(2, "history", target=61)
    game = last.game
    view = player_view(game, 0, len(game.events))
    mail = render_history(view, ctx_for(game, 0), visible_events(game, 0))
    assert mail.subject == "[Cribbage 12] The moves so far"
    for hand in range(1, game.hand_no + 1):
        assert f"Hand {hand}: " in mail.text
    assert "Cut for the first deal" in mail.text


def test_templates_folder_can_be_overridden(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    shutil.copytree(TEMPLATES, folder)
    page = (folder / "mail.txt").read_text()
    (folder / "mail.txt").write_text("HOUSE STYLE\n" + page)
    game = new_game(2, seed="override")
    mail = render_turn(player_view(game, 0), ctx_for(game, 0), templates=folder)
    assert mail.text.startswith("HOUSE STYLE")
    assert not render_turn(player_view(game, 0), ctx_for(game, 0)).text.startswith("HOUSE")


def test_muggins_counts_in_words() -> None:
    game = new_game(2, seed="muggins-words", muggins=True)
    h = game.hand_no
    hand, starter = cards("2♣ 6♠ 7♠ K♣"), parse_card("2♠")
    truth = score_show(hand, starter)
    events = (
        Event("starter", h, seat=0, cards=(starter,)),
        Event("claim", h, seat=1, side=1, cards=hand, points=2, detail="hand: claimed 2"),
        Event("reveal", h, seat=1, side=1, cards=hand, items=truth, detail="hand"),
        Event("muggins", h, seat=0, side=0, points=4, detail="seat 1 missed 4"),
        Event("claim", h, seat=0, side=0, cards=hand, points=6, detail="crib: claimed 9"),
        Event("reveal", h, seat=0, side=0, cards=hand, items=truth, detail="crib"),
        Event("correction", h, seat=1, side=1, points=3, detail="seat 0 claimed 9 for 6"),
    )
    view = dataclasses.replace(player_view(game, 0), events=events)
    flat = " ".join(render_turn(view, ctx_for(game, 0, since=9)).text.split())
    assert "Bob counted 2 for the hand 2♣ 6♠ 7♠ K♣ + starter 2♠." in flat
    assert f"Bob's hand makes {count_words(truth)}." in flat
    assert f"Your crib makes {count_words(truth)}." in flat
    assert "Muggins! You pegged the 4 that Bob missed." in flat
    assert "You counted 9 for your crib 2♣ 6♠ 7♠ K♣ + starter 2♠." in flat
    assert "You counted 3 too many, so Bob pegged 3." in flat
    later = dataclasses.replace(view, events=events[2:4])  # the claim came in the last mail
    flat = " ".join(render_turn(later, ctx_for(game, 0, since=9)).text.split())
    assert "Muggins! You pegged the 4 that Bob missed." in flat


def test_a_mail_spanning_two_hands_heads_each() -> None:
    steps = play(2, "rollover")
    for step in steps:
        if any(e.kind == "deal" and e.hand == 2 for e in step.events):
            break
    else:
        raise AssertionError("no second hand")
    game = step.game
    text = render_turn(player_view(game, 0, step.since), ctx_for(game, 0, step.since)).text
    assert text.index("Hand 1:") < text.index("Hand 2: ") < text.index("The table")
    assert "You were dealt" in text


# -- muggins: the hand or crib being counted --------------------------------------------


def flats(mail: RenderedMail) -> tuple[str, str]:
    """The text part and the HTML part's words, each on one line."""
    return " ".join(mail.text.split()), " ".join(html_text(mail.html).split())


def _check(mail: RenderedMail) -> None:
    assert_narrow(mail.text)
    assert_well_formed(mail.html)


def _true_count(game: Game) -> int:
    entry = game.show_entry()
    assert entry is not None
    return show_points(game.showing(), game.starter, crib=entry[1] == "crib")


def _counting(what: str, least: int = 0) -> Game:
    """A 2-player muggins game waiting for the count of a ``what`` worth ``least`` or more."""
    game = new_game(2, seed=f"counting-{what}", muggins=True, first_dealer=0)

    def ready(g: Game) -> bool:
        entry = g.show_entry()
        return (
            entry is not None
            and entry[1] == what
            and not g.awaiting_muggins
            and _true_count(g) >= least
        )

    _until(game, random.Random(7), ready)
    return game


def _shown(game: Game) -> str:
    return f"{' '.join(str(c) for c in game.showing())} + starter {game.starter}"


def test_the_counter_sees_the_hand_it_counts_with_the_starter() -> None:
    game = _counting("hand")
    entry = game.show_entry()
    assert entry is not None
    counter, other = entry[0], 1 - entry[0]
    shown = _shown(game)
    mail = render_turn(player_view(game, counter), ctx_for(game, counter))
    for flat in flats(mail):
        assert "Your turn: count your hand" in flat
        assert f'Counting now: your hand {shown} — reply "count N"' in flat
    assert mail.text.index("Counting now") < mail.text.index("        count N")
    for card in game.showing():  # drawn as cards in the prompt box
        assert tile(card) in mail.html
    _check(mail)
    mail = render_turn(player_view(game, other), ctx_for(game, other))
    for flat in flats(mail):
        assert f"Waiting for {NAMES[counter]} to count {NAMES[counter]}'s hand." in flat
        assert f"Counting now: {NAMES[counter]}'s hand {shown}" in flat
    _check(mail)


def test_the_dealer_sees_the_whole_crib_face_up() -> None:
    game = _counting("crib")
    dealer, pone = game.dealer, 1 - game.dealer
    crib = game.showing()
    assert len(crib) == 4 and set(game.laid_away(pone)) <= set(crib)
    mail = render_turn(player_view(game, dealer), ctx_for(game, dealer))
    for flat in flats(mail):
        assert f'Counting now: your crib {_shown(game)} — reply "count N"' in flat
    assert set(game.laid_away(pone)) <= cards_in_mail(mail)  # the pone's cards, now public
    _check(mail)
    mail = render_turn(player_view(game, pone), ctx_for(game, pone))
    for flat in flats(mail):
        assert f"Counting now: {NAMES[dealer]}'s crib {_shown(game)}" in flat
    _check(mail)


def test_muggins_window_shows_the_claimed_hand_and_the_claim() -> None:
    game = _counting("hand", least=2)
    entry = game.show_entry()
    assert entry is not None
    claimant, responder = entry[0], 1 - entry[0]
    shown = _shown(game)
    claim = _true_count(game) - 1
    since = len(game.events)
    game.apply(Claim(claimant, claim))
    assert game.awaiting_muggins
    mail = render_turn(player_view(game, responder, since), ctx_for(game, responder, since))
    for flat in flats(mail):
        assert f"Your turn: accept {NAMES[claimant]}'s count, or call muggins" in flat
        assert (
            f"Counting now: {NAMES[claimant]}'s hand {shown} — {NAMES[claimant]} counted {claim}"
            in flat
        )
    _check(mail)
    mail = render_turn(player_view(game, claimant, since), ctx_for(game, claimant, since))
    for flat in flats(mail):
        assert f"Waiting for {NAMES[responder]} to accept your count or call muggins." in flat
        assert f"Counting now: your hand {shown} — you counted {claim}" in flat
    _check(mail)


def test_status_mails_in_the_muggins_window_still_show_the_hand() -> None:
    """Built with ``since == len(events)`` the claim is not among the view's events:
    the hand is shown all the same, with a count waiting for an answer."""
    game = _counting("hand", least=1)
    entry = game.show_entry()
    assert entry is not None
    claimant, responder = entry[0], 1 - entry[0]
    shown = _shown(game)
    game.apply(Claim(claimant, _true_count(game)))
    end = len(game.events)
    status = player_view(game, responder, end)
    assert status.events == ()
    for mail in (
        render_reminder(status, ctx_for(game, responder), "2 days"),
        render_turn(status, ctx_for(game, responder, end)),
        render_error(
            ctx_for(game, responder, notices=(Notice("refused", "count 3", "not your count"),)),
            status,
            "Your mail could not be applied",
        ),
    ):
        for flat in flats(mail):
            assert (
                f"Counting now: {NAMES[claimant]}'s hand {shown} — {NAMES[claimant]}'s count "
                "is waiting for muggins or accept"
            ) in flat
            assert " counted " not in flat
        _check(mail)
    mine = render_reminder(player_view(game, claimant, end), ctx_for(game, claimant), "2 days")
    for flat in flats(mine):
        assert f"Counting now: your hand {shown} — your count is waiting for muggins" in flat


def test_an_earlier_claim_this_hand_is_not_taken_for_the_crib_claim() -> None:
    game = _counting("crib", least=1)
    dealer, pone = game.dealer, 1 - game.dealer
    game.apply(Claim(dealer, _true_count(game)))
    assert game.awaiting_muggins
    view = player_view(game, pone)
    claims = [e for e in view.events if e.kind == "claim" and e.hand == game.hand_no]
    assert [(e.seat, e.detail.split(":")[0]) for e in claims][-2:] == [
        (dealer, "hand"),
        (dealer, "crib"),
    ]
    assert view.events[-1] == claims[-1]
    without = dataclasses.replace(view, events=view.events[:-1])  # the crib claim left out
    for flat in flats(render_turn(without, ctx_for(game, pone, since=1))):
        assert f"— {NAMES[dealer]}'s count is waiting for muggins or accept" in flat


@given(
    text=st.text(alphabet=st.sampled_from(list("ab —\t\n♥5 ")), max_size=120),
    first=st.sampled_from(["", "  - ", ">>> "]),
    rest=st.sampled_from([None, "    ", ""]),
)
def test_wrap_matches_textwrap_on_any_text(text: str, first: str, rest: str | None) -> None:
    """The short cut for a line that fits gives exactly what textwrap gives."""
    from pbem.render.mail import _textwrap, _wrap

    assert _wrap(text, first, rest) == _textwrap(text, first, rest)


def test_archive_mail_says_what_its_files_are_for() -> None:
    """What the record and its replay page are for, with no program to install: no
    ``pbem`` command is named to a player."""
    game = new_game(2, seed="archive")
    mail = render_archive(ctx_for(game, 0), "cribbage-12.json", "cribbage-12.html")
    assert mail.subject == "[Cribbage 12] The game's archive"
    flat = " ".join(mail.text.split())
    assert "Attached: cribbage-12.json, the record of the whole game" in flat
    assert "replayed and checked at any time" in flat
    assert "Also attached: cribbage-12.html, its replay page" in flat
    assert "web browser" in flat
    assert "deals verified" not in flat  # not a fair game: no deals to check
    assert "pbem" not in mail.text.lower() and "pbem" not in mail.html.lower()
    assert "cribbage-12.html" in htmllib.unescape(mail.html)
    assert_narrow(mail.text)
    assert_well_formed(mail.html)
    fair = ctx_for(game, 0, deal_lines=("Deal commitment (pbem-deal/1): 0f0f",))
    flat = " ".join(render_archive(fair, "cribbage-12.json", "cribbage-12.html").text.split())
    assert 'the box at the top of the page reads "All … deals verified"' in flat
