"""The email command language: parsing, and turning commands into engine actions."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from engine import (
    AmbiguousActionError,
    Card,
    Claim,
    Discard,
    Game,
    Go,
    IllegalActionError,
    InvalidSyntaxError,
    Play,
    Resign,
    Suit,
    new_game,
    parse_card,
)
from pbem.commands import Command, mail_choice, parse_line, parse_reply, to_action


@pytest.mark.parametrize(
    ("line", "verb", "args"),
    [
        ("discard 5h jd", "discard", ("5h", "jd")),
        ("Discard 5H, JD", "discard", ("5h", "jd")),
        ("crib 5h jd", "discard", ("5h", "jd")),
        ("throw 5♥ J♦", "discard", ("5♥", "j♦")),
        ("lay away 5h and jd", "discard", ("5h", "jd")),
        ("play 7c", "play", ("7c",)),
        ("PLAY 7C.", "play", ("7c",)),
        ("p 10h", "play", ("10h",)),
        ("7c", "cards", ("7c",)),
        ("♥5", "cards", ("♥5",)),
        ("go", "go", ()),
        ("Go!", "go", ()),
        ("pass", "go", ()),
        ("count 12", "count", ("12",)),
        ("claim 12", "count", ("12",)),
        ("muggins", "muggins", ()),
        ("Muggins!", "muggins", ()),
        ("accept", "accept", ()),
        ("no muggins", "accept", ()),
        ("hand", "hand", ()),
        ("status", "hand", ()),
        ("history", "history", ()),
        ("resign", "resign", ()),
        ("help", "help", ()),
        ("help please", "help", ()),
        ("I resign.", "resign", ()),
        ("I'll play 7c", "play", ("7c",)),
        ("let's go", "go", ()),
        # "a" is the ace unless it is an article before "card".
        ("play a", "play", ("a",)),
        ("Play A!", "play", ("a",)),
        ("play a please", "play", ("a",)),
        ("play a card", "play", ()),
        ("I play a 5", "play", ("a", "5")),
        ("play an ace", "play", ("ace",)),
        ("play the king", "play", ("king",)),
        ("discard a k", "discard", ("a", "k")),
        ("throw a 5 and a jack", "discard", ("a", "5", "a", "jack")),
        # The other one-letter ranks are never fillers.
        ("play k", "play", ("k",)),
        ("play q", "play", ("q",)),
        ("play j", "play", ("j",)),
        ("play t", "play", ("t",)),
    ],
)
def test_parse_line(line: str, verb: str, args: tuple[str, ...]) -> None:
    cmd = parse_line(line)
    assert cmd is not None
    assert (cmd.verb, cmd.args) == (verb, args)


@pytest.mark.parametrize(
    "line", ["thanks!", "good game", "Hi Bob,", "I think so", "go 7c", "I will", "I"]
)
def test_not_commands(line: str) -> None:
    assert parse_line(line) is None


def test_several_commands_in_order_and_ignored_lines() -> None:
    parsed = parse_reply("Hi!\ndiscard 5h jd\nplay 7c; go\nthanks", "")
    assert [c.verb for c in parsed.commands] == ["discard", "play", "go"]
    assert parsed.ignored == ("Hi!", "thanks")


def test_the_body_is_read_and_the_subject_only_when_it_holds_no_command() -> None:
    parsed = parse_reply("go", "play 7c")
    assert [c.verb for c in parsed.commands] == ["go"]
    parsed = parse_reply("thanks, Bob!", "play 7c")
    assert [c.verb for c in parsed.commands] == ["play"] and parsed.ignored == ("thanks, Bob!",)
    assert [c.verb for c in parse_reply("", "stop").commands] == ["stop"]


def _game_holding(
    predicate: Callable[[tuple[Card, ...]], bool], players: int = 2
) -> tuple[Game, int]:
    for i in range(500):
        game = new_game(players, seed=f"cmd{i}")
        for seat in range(players):
            if predicate(game.holding(seat)):
                return game, seat
    raise AssertionError("no seed found")


def test_to_action_discard_and_bare_cards() -> None:
    game = new_game(2, seed="cmd")
    hand = sorted(game.holding(0))
    cmd = Command("discard", (hand[0].ascii.lower(), str(hand[1])), "")
    assert to_action(game, 0, cmd) == Discard(0, (hand[0], hand[1]))
    bare = Command("cards", (hand[0].ascii, hand[1].ascii), "")
    assert to_action(game, 0, bare) == Discard(0, (hand[0], hand[1]))


def test_to_action_refusals() -> None:
    game = new_game(2, seed="cmd")
    with pytest.raises(InvalidSyntaxError):
        to_action(game, 0, Command("discard", (), ""))
    with pytest.raises(InvalidSyntaxError):
        to_action(game, 0, Command("discard", ("zz",), ""))
    not_held = next(
        c for c in (parse_card(f"{r}h") for r in "A23456789TJQK") if c not in game.holding(0)
    )
    with pytest.raises(IllegalActionError, match="do not hold"):
        to_action(game, 0, Command("discard", (not_held.ascii, "x"), ""))
    with pytest.raises(InvalidSyntaxError):
        to_action(game, 0, Command("count", ("lots",), ""))


def test_play_rank_ambiguous_when_two_held() -> None:
    def has_pair(cards: tuple[Card, ...]) -> bool:
        ranks = [c.rank for c in cards]
        return any(ranks.count(r) == 2 for r in ranks)

    game, seat = _game_holding(has_pair)
    held = game.holding(seat)
    rank = next(c.rank for c in held if [x.rank for x in held].count(c.rank) == 2)
    label = Card(rank, Suit.CLUBS).label
    with pytest.raises(AmbiguousActionError) as info:
        to_action(game, seat, Command("play", (label,), ""))
    assert len(info.value.candidates) == 2


def test_simple_verbs() -> None:
    game = new_game(2, seed="cmd")
    assert to_action(game, 1, Command("go", (), "")) == Go(1)
    assert to_action(game, 1, Command("count", ("12",), "")) == Claim(1, 12)
    assert to_action(game, 1, Command("resign", (), "")) == Resign(1)


def test_play_when_one_card_named() -> None:
    game = new_game(2, seed="cmd")
    card = game.holding(1)[0]
    assert to_action(game, 1, Command("play", (card.ascii,), "")) == Play(1, card)
    with pytest.raises(InvalidSyntaxError):
        to_action(game, 1, Command("play", (card.ascii, card.ascii), ""))


def _holding_ranks(ranks: dict[int, int], players: int = 2) -> tuple[Game, int]:
    """A new game and a seat holding exactly ``count`` cards of each ``rank``."""

    def fits(cards: tuple[Card, ...]) -> bool:
        return all(sum(c.rank == r for c in cards) == n for r, n in ranks.items())

    return _game_holding(fits, players)


def test_play_a_plays_the_ace_held() -> None:
    game, seat = _holding_ranks({1: 1})
    ace = next(c for c in game.holding(seat) if c.rank == 1)
    assert to_action(game, seat, _parsed("play a")) == Play(seat, ace)
    assert to_action(game, seat, _parsed("play an ace")) == Play(seat, ace)
    other = next(c for c in game.holding(seat) if c.rank != 1)
    # With a card named as well, "a" is an article.
    assert to_action(game, seat, _parsed(f"I play a {other.ascii}")) == Play(seat, other)


def test_play_a_holding_two_aces_asks_which() -> None:
    game, seat = _holding_ranks({1: 2})
    aces = sorted(c for c in game.holding(seat) if c.rank == 1)
    with pytest.raises(AmbiguousActionError) as info:
        to_action(game, seat, _parsed("play a"))
    assert set(info.value.candidates) == {str(c) for c in aces}


def test_play_a_holding_no_ace_is_refused_by_name() -> None:
    game, seat = _holding_ranks({1: 0})
    with pytest.raises(IllegalActionError, match="you hold no ace"):
        to_action(game, seat, _parsed("play a"))
    with pytest.raises(InvalidSyntaxError, match="play which card"):
        to_action(game, seat, _parsed("play a card"))


@pytest.mark.parametrize(("letter", "rank"), [("k", 13), ("q", 12), ("j", 11), ("t", 10)])
def test_one_letter_ranks_play_that_rank(letter: str, rank: int) -> None:
    game, seat = _holding_ranks({rank: 1})
    card = next(c for c in game.holding(seat) if c.rank == rank)
    assert to_action(game, seat, _parsed(f"play {letter}")) == Play(seat, card)


def test_discard_with_a_reads_aces_or_articles_by_the_number_of_cards() -> None:
    game, seat = _holding_ranks({1: 1, 13: 1})
    ace = next(c for c in game.holding(seat) if c.rank == 1)
    king = next(c for c in game.holding(seat) if c.rank == 13)
    # Two players lay away two cards: "a k" is the ace and the king.
    assert to_action(game, seat, _parsed("discard a k")) == Discard(seat, (ace, king))
    assert to_action(game, seat, _parsed("throw an ace and a king")) == Discard(seat, (ace, king))
    three, seat3 = _holding_ranks({13: 1}, players=3)
    king3 = next(c for c in three.holding(seat3) if c.rank == 13)
    # Three players lay away one: in "a k" the "a" is an article.
    assert to_action(three, seat3, _parsed("discard a k")) == Discard(seat3, (king3,))


def _parsed(line: str) -> Command:
    cmd = parse_line(line)
    assert cmd is not None, line
    return cmd


@pytest.mark.parametrize(
    ("line", "every"),
    [
        ("mail all", True),
        ("Mail me after every move", True),
        ("mail turns", False),
        ("emails: fewer please", False),
    ],
)
def test_the_mail_setting_is_read(line: str, every: bool) -> None:
    cmd = parse_line(line)
    assert cmd is not None and cmd.verb == "mail"
    assert mail_choice(cmd) is every


def test_the_mail_setting_needs_a_choice() -> None:
    bare = parse_line("mail")
    assert bare is not None and bare.verb == "mail"
    with pytest.raises(InvalidSyntaxError, match="mail all"):
        mail_choice(bare)
    assert parse_line("mail me tomorrow") is None  # not the setting: an ordinary line


@pytest.mark.parametrize("line", ["archive", "Archive please", "export", "record"])
def test_archive_is_read(line: str) -> None:
    cmd = parse_line(line)
    assert cmd is not None and cmd.verb == "archive" and cmd.args == ()


@pytest.mark.parametrize(
    ("line", "verb", "args"),
    [
        ("name Alice Smith", "name", ("Alice Smith",)),
        ("Name:  Zoë  O'Neil", "name", ("Zoë  O'Neil",)),
        ("name", "name", ()),
        ("mail text", "mail", ("text",)),
        ("mail html please", "mail", ("html",)),
        ("mail both", "mail", ("both",)),
        ("stop", "stop", ()),
        ("Stop mailing me please", "stop", ()),
        ("unsubscribe", "stop", ()),
        ("start", "start", ()),
        ("away 5 days", "away", ("5", "days")),
        ("away for 2 weeks", "away", ("2", "weeks")),
        ("back", "back", ()),
        ("back again!", "back", ()),
    ],
)
def test_setting_lines(line: str, verb: str, args: tuple[str, ...]) -> None:
    cmd = parse_line(line)
    assert cmd is not None and (cmd.verb, cmd.args) == (verb, args)


@pytest.mark.parametrize(
    "line",
    ["stop playing the king", "back to you", "away from my desk", "start the game", "mail me"],
)
def test_lines_that_only_start_with_a_setting_word(line: str) -> None:
    assert parse_line(line) is None


def test_lay_away_is_still_a_discard() -> None:
    cmd = parse_line("lay away 5h jd")
    assert cmd is not None and (cmd.verb, cmd.args) == ("discard", ("5h", "jd"))
