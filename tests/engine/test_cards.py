"""Cards: the lenient but exact parser, canonical forms, pip values and rank order."""

from __future__ import annotations

import pytest

from engine import Card, InvalidSyntaxError, Suit, format_cards, full_deck, parse_card
from engine.cards import parse_cards, parse_rank

ACCEPTED = [
    ("5H", Card(5, Suit.HEARTS)),
    ("5h", Card(5, Suit.HEARTS)),
    ("10h", Card(10, Suit.HEARTS)),
    ("Th", Card(10, Suit.HEARTS)),
    ("5♥", Card(5, Suit.HEARTS)),
    ("♥5", Card(5, Suit.HEARTS)),
    ("AS", Card(1, Suit.SPADES)),
    ("as", Card(1, Suit.SPADES)),
    ("jd", Card(11, Suit.DIAMONDS)),
    ("♥\ufe0f5", Card(5, Suit.HEARTS)),  # the emoji variation selector is dropped
    ("5♥\ufe0f", Card(5, Suit.HEARTS)),
    ("qc", Card(12, Suit.CLUBS)),
    ("K♠", Card(13, Suit.SPADES)),
    (" 7d ", Card(7, Suit.DIAMONDS)),
]


@pytest.mark.parametrize(("text", "card"), ACCEPTED)
def test_parser_accepts(text: str, card: Card) -> None:
    assert parse_card(text) == card


@pytest.mark.parametrize("text", ["11h", "1", "zz", "5x", "", "10", "h5h"])
def test_parser_rejects_naming_the_input(text: str) -> None:
    with pytest.raises(InvalidSyntaxError) as info:
        parse_card(text)
    assert repr(text) in str(info.value)


def test_parser_errors_are_value_errors() -> None:
    with pytest.raises(ValueError):
        parse_card("zz")


@pytest.mark.parametrize(
    ("text", "canonical", "ascii"),
    [
        ("10h", "10♥", "10H"),
        ("Th", "10♥", "10H"),
        ("jd", "J♦", "JD"),
        ("as", "A♠", "AS"),
        ("2c", "2♣", "2C"),
        ("kS", "K♠", "KS"),
    ],
)
def test_canonical_and_ascii_forms(text: str, canonical: str, ascii: str) -> None:
    card = parse_card(text)
    assert str(card) == canonical
    assert card.ascii == ascii
    # Both forms read back as the same card.
    assert parse_card(canonical) == card
    assert parse_card(ascii) == card


@pytest.mark.parametrize("card", full_deck())
def test_repr_pastes_back(card: Card) -> None:
    assert eval(repr(card), {"Card": Card}) == card
    assert parse_card(str(card)) == card
    assert parse_card(card.ascii) == card


def test_full_deck_is_52_distinct_cards_in_index_order() -> None:
    deck = full_deck()
    assert len(set(deck)) == 52
    assert [c.index for c in deck] == list(range(52))
    assert all(Card.from_index(c.index) == c for c in deck)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("as", 1),
        ("2h", 2),
        ("5d", 5),
        ("9c", 9),
        ("10s", 10),
        ("jh", 10),
        ("qd", 10),
        ("kc", 10),
    ],
)
def test_pip_values(text: str, value: int) -> None:
    # "The cards A to 9 are worth their value of 1 to 9. The cards 10 to King are all worth 10."
    assert parse_card(text).value == value


def test_rank_order_king_high_ace_low() -> None:
    # "K (high), Q, J, 10, 9, 8, 7, 6, 5, 4, 3, 2, A."
    ranks = [parse_card(f"{r}c") for r in "A 2 3 4 5 6 7 8 9 10 J Q K".split()]
    assert sorted(reversed(ranks)) == ranks
    assert [c.rank for c in ranks] == list(range(1, 14))
    # Sorting a hand orders by rank first, then suit.
    hand = parse_cards("KS 5H 5C AD")
    assert format_cards(sorted(hand), ascii=True) == "AD 5C 5H KS"


def test_parse_rank() -> None:
    assert parse_rank("7") == 7
    assert parse_rank("T") == 10
    assert parse_rank("10") == 10
    assert parse_rank("j") == 11
    assert parse_rank("a") == 1
    assert parse_rank("7h") is None
    assert parse_rank("zz") is None


def test_parse_cards_separators() -> None:
    assert parse_cards("5h, 10♥; jd  as") == [
        Card(5, Suit.HEARTS),
        Card(10, Suit.HEARTS),
        Card(11, Suit.DIAMONDS),
        Card(1, Suit.SPADES),
    ]
    with pytest.raises(InvalidSyntaxError):
        parse_cards("5h zz")


def test_card_rejects_a_rank_out_of_range() -> None:
    with pytest.raises(InvalidSyntaxError):
        Card(14, Suit.CLUBS)
    with pytest.raises(InvalidSyntaxError):
        Card(0, Suit.CLUBS)
