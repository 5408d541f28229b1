"""Game moves (`pbem.commands.moves`): commands turned into engine actions."""

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
from pbem.commands import Command, parse_line, to_action


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
