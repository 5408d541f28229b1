"""Typed errors: each names the input and the situation, and leaves the game unchanged."""

from __future__ import annotations

import pytest

from engine import (
    AmbiguousActionError,
    Claim,
    Discard,
    Game,
    Go,
    IllegalActionError,
    InvalidSyntaxError,
    Play,
    Resign,
    Settings,
    new_game,
)
from engine.actions import Action
from tests.engine.helpers import card, cards, discard_all, peg, rigged, stack_deal


def assert_rejected(game: Game, action: Action, error: type[Exception], match: str) -> None:
    """``action`` raises ``error`` matching ``match`` and changes nothing at all."""
    before = (game.state_hash(), len(game.events), len(game.actions))
    with pytest.raises(error, match=match):
        game.apply(action)
    assert (game.state_hash(), len(game.events), len(game.actions)) == before


@pytest.fixture
def pegging(monkeypatch: pytest.MonkeyPatch) -> Game:
    """Seat 0 deals; the pone has led K and the dealer 4, the pone Q: the count is 24."""
    pack = stack_deal(2, 0, {1: "KS QH 7S 7C AS AD", 0: "4C 9C 7D 8D QC QD"}, "2C")
    game = rigged(monkeypatch, Settings(2, first_dealer=0), {1: pack})
    discard_all(game, {1: "AS AD", 0: "QC QD"})
    peg(game, 1, "KS")
    peg(game, 0, "4C")
    peg(game, 1, "QH")
    assert game.count == 24
    return game


def test_cannot_play_past_31(pegging: Game) -> None:
    before = pegging.state_hash()
    with pytest.raises(IllegalActionError) as info:
        pegging.apply(Play(0, card("9C")))
    assert str(info.value) == "cannot play 9♣: the count would be 33"
    assert info.value.legal == "play 7♦"
    assert pegging.state_hash() == before


def test_cannot_say_go_holding_a_playable_card(pegging: Game) -> None:
    assert_rejected(pegging, Go(0), IllegalActionError, r"cannot say go: you can play 7♦")


def test_cannot_play_a_card_not_held(pegging: Game) -> None:
    assert_rejected(pegging, Play(0, card("KS")), IllegalActionError, "you do not hold it")
    assert_rejected(pegging, Play(0, card("QC")), IllegalActionError, "you do not hold it")


def test_not_your_turn(pegging: Game) -> None:
    assert_rejected(
        pegging,
        Play(1, card("7S")),
        IllegalActionError,
        r"cannot play 7♠: it is not your turn \(waiting for seat 0\)",
    )


def test_wrong_kind_of_action_for_the_phase(pegging: Game) -> None:
    assert_rejected(
        pegging, Discard(0, (card("7D"),)), IllegalActionError, "waiting for play or go"
    )
    assert_rejected(pegging, Claim(0, 3), IllegalActionError, "the play, count 24")


def test_resolve_card_ambiguous_rank(pegging: Game) -> None:
    # The pone holds 7♠ and 7♣: "play 7" could be either.
    with pytest.raises(AmbiguousActionError) as info:
        pegging.resolve_card(1, "7")
    assert info.value.candidates == ("7♣", "7♠")
    assert "'7' is ambiguous" in str(info.value)
    assert "7♣ and 7♠" in str(info.value)
    assert pegging.resolve_card(1, "7s") == card("7S")
    assert pegging.resolve_card(0, "7") == card("7D")  # the dealer holds one seven
    assert pegging.resolve_card(0, "9") == card("9C")  # held, even if not playable now


def test_resolve_card_not_held_and_bad_syntax(pegging: Game) -> None:
    with pytest.raises(IllegalActionError, match="you hold no 5"):
        pegging.resolve_card(1, "5")
    with pytest.raises(IllegalActionError, match="you do not hold 5♥"):
        pegging.resolve_card(1, "5h")
    with pytest.raises(InvalidSyntaxError, match="'zz'"):
        pegging.resolve_card(1, "zz")


def test_already_discarded() -> None:
    game = new_game(2, seed="twice", first_dealer=0)
    held = sorted(game.holding(1))
    game.apply(Discard(1, (held[0], held[1])))
    assert_rejected(
        game, Discard(1, (held[2], held[3])), IllegalActionError, "you have already laid away"
    )


def test_discard_errors() -> None:
    game = new_game(2, seed="discard", first_dealer=0)
    held = sorted(game.holding(1))
    other = sorted(game.holding(0))
    assert_rejected(game, Discard(1, (held[0],)), IllegalActionError, "lay away exactly 2 cards")
    assert_rejected(game, Discard(1, (held[0], held[0])), IllegalActionError, "same card twice")
    assert_rejected(
        game, Discard(1, (held[0], other[0])), IllegalActionError, f"you do not hold {other[0]}"
    )
    assert_rejected(game, Play(1, held[0]), IllegalActionError, "waiting for discard")
    assert_rejected(game, Go(1), IllegalActionError, "discards to the crib")
    game3 = new_game(3, seed="discard", first_dealer=0)
    held3 = sorted(game3.holding(0))
    assert_rejected(
        game3, Discard(0, (held3[0], held3[1])), IllegalActionError, "lay away exactly 1 card"
    )


def test_no_such_seat() -> None:
    game = new_game(2, seed="seats", first_dealer=0)
    assert_rejected(game, Go(2), IllegalActionError, "there is no seat 2")
    assert_rejected(game, Resign(-1), IllegalActionError, "there is no seat -1")


def test_game_over_rejects_everything() -> None:
    game = new_game(2, seed="over", first_dealer=0)
    game.apply(Resign(0))
    for action in (Resign(1), Go(1), Discard(1, tuple(sorted(game.holding(1))[:2]))):
        assert_rejected(game, action, IllegalActionError, "the game is over")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"players": 5}, "2, 3 or 4 players, not 5"),
        ({"players": 1}, "not 1"),
        ({"target": 100}, "61 or 121, not 100"),
        ({"skunk": "double"}, "skunk must be one of none, lurch, skunk"),
        ({"first_dealer": 2}, "no seat 2 to deal first"),
    ],
)
def test_bad_settings(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(IllegalActionError, match=match):
        Settings(**kwargs)  # type: ignore[arg-type]


def test_a_game_needs_a_seed() -> None:
    with pytest.raises(InvalidSyntaxError):
        Game(Settings(), "")


def test_errors_are_value_errors() -> None:
    for error in (IllegalActionError, AmbiguousActionError, InvalidSyntaxError):
        assert issubclass(error, ValueError)


def test_illegal_discard_in_a_stacked_game_names_the_card(monkeypatch: pytest.MonkeyPatch) -> None:
    pack = stack_deal(2, 0, {1: "KS QH 7S 7C AS AD", 0: "4C 9C 7D 8D QC QD"}, "2C")
    game = rigged(monkeypatch, Settings(2, first_dealer=0), {1: pack})
    assert_rejected(
        game,
        Discard(1, tuple(cards("AS 4C"))),
        IllegalActionError,
        "cannot discard A♠ 4♣: you do not hold 4♣",
    )
