"""Cards: the 52-card pack, ranks, suits, pip values and a lenient but exact parser.

A card is a small immutable value.  ``Card.index`` (0..51) orders cards by rank
then suit, so sorting cards sorts them the way a player arranges a hand.

>>> parse_card("10h")
Card.parse('10♥')
>>> str(parse_card("jd")), parse_card("jd").ascii
('J♦', 'JD')
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import IntEnum

from engine.errors import InvalidSyntaxError


class Suit(IntEnum):
    """The four suits, in bridge order."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def symbol(self) -> str:
        return "♣♦♥♠"[self]

    @property
    def letter(self) -> str:
        return "CDHS"[self]

    @property
    def label(self) -> str:
        return ("clubs", "diamonds", "hearts", "spades")[self]


RANK_LABELS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
RANK_NAMES = (
    "ace",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
)
RANK_PLURALS = (
    "aces",
    "twos",
    "threes",
    "fours",
    "fives",
    "sixes",
    "sevens",
    "eights",
    "nines",
    "tens",
    "jacks",
    "queens",
    "kings",
)

JACK = 11


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """A playing card.  ``rank`` is 1 (ace) .. 13 (king)."""

    rank: int
    suit: Suit

    def __post_init__(self) -> None:
        if not 1 <= self.rank <= 13:
            raise InvalidSyntaxError(f"rank must be 1..13, not {self.rank!r}")
        if not isinstance(self.suit, Suit):
            object.__setattr__(self, "suit", Suit(self.suit))

    @property
    def value(self) -> int:
        """Pip value for counting: ace 1, two to ten face value, court cards 10."""
        return min(self.rank, 10)

    @property
    def index(self) -> int:
        """0..51, rank-major: the ace of clubs is 0, the king of spades 51."""
        return (self.rank - 1) * 4 + int(self.suit)

    @classmethod
    def from_index(cls, index: int) -> Card:
        return _BY_INDEX[index]

    def __reduce__(self) -> tuple[Callable[[int], Card], tuple[int]]:
        """Pickled as its index, unpickled as the one card of that index (a view sent to
        the rendering helper holds hundreds of cards)."""
        return card_at, (self.index,)

    @property
    def label(self) -> str:
        return RANK_LABELS[self.rank - 1]

    @property
    def ascii(self) -> str:
        """ASCII form, e.g. ``10H``, ``JD``, ``AS``."""
        return f"{self.label}{self.suit.letter}"

    @property
    def name(self) -> str:
        """Words, e.g. ``ten of hearts``."""
        return f"{RANK_NAMES[self.rank - 1]} of {self.suit.label}"

    def __str__(self) -> str:
        return f"{self.label}{self.suit.symbol}"

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Card:
        return parse_card(text)


_BY_INDEX: tuple[Card, ...] = tuple(
    Card(rank, Suit(suit)) for rank in range(1, 14) for suit in range(4)
)


def full_deck() -> list[Card]:
    """The 52 cards in index order."""
    return list(_BY_INDEX)


_RANK_WORDS = {
    "a": 1,
    "ace": 1,
    "1": 1,
    "2": 2,
    "3": 3,
    "4": 4,
    "5": 5,
    "6": 6,
    "7": 7,
    "8": 8,
    "9": 9,
    "10": 10,
    "t": 10,
    "j": 11,
    "q": 12,
    "k": 13,
}
_SUIT_CHARS = {
    "c": Suit.CLUBS,
    "♣": Suit.CLUBS,
    "♧": Suit.CLUBS,
    "d": Suit.DIAMONDS,
    "♦": Suit.DIAMONDS,
    "♢": Suit.DIAMONDS,
    "h": Suit.HEARTS,
    "♥": Suit.HEARTS,
    "♡": Suit.HEARTS,
    "❤": Suit.HEARTS,
    "s": Suit.SPADES,
    "♠": Suit.SPADES,
    "♤": Suit.SPADES,
}
_RANK_RE = r"(10|[2-9]|[atjqk1])"
_SUIT_RE = r"([cdhs♣♧♦♢♥♡❤♠♤])"
_CARD_RE = re.compile(rf"^(?:{_RANK_RE}{_SUIT_RE}|{_SUIT_RE}{_RANK_RE})$")
_RANK_ONLY_RE = re.compile(rf"^{_RANK_RE}$")


def _clean(text: str) -> str:
    # Drop emoji variation selectors and whitespace, fold case.
    text = unicodedata.normalize("NFC", text)
    return "".join(ch for ch in text if ch not in "\ufe0e\ufe0f" and not ch.isspace()).lower()


def parse_card(text: str) -> Card:
    """Parse one card: ``5H``, ``5h``, ``10h``, ``Th``, ``5♥``, ``♥5``, ``AS``, ``jd``.

    Raises ``InvalidSyntaxError`` naming the input for anything else.
    """
    cleaned = _clean(text)
    match = _CARD_RE.match(cleaned)
    if not match:
        raise InvalidSyntaxError(f"{text.strip()!r} is not a card (try 5h, 10♥, jd, as)")
    rank_text = match.group(1) or match.group(4)
    suit_text = match.group(2) or match.group(3)
    return Card(_RANK_WORDS[rank_text], _SUIT_CHARS[suit_text])


def parse_rank(text: str) -> int | None:
    """The rank named by a bare rank such as ``7``, ``T``, ``10``, ``j``; None if not a rank."""
    match = _RANK_ONLY_RE.match(_clean(text))
    return _RANK_WORDS[match.group(1)] if match else None


def parse_cards(text: str) -> list[Card]:
    """Parse several cards separated by spaces or commas."""
    parts = [p for p in re.split(r"[\s,;]+", text.strip()) if p]
    return [parse_card(p) for p in parts]


def format_cards(cards: Iterable[Card], ascii: bool = False) -> str:
    return " ".join(c.ascii if ascii else str(c) for c in cards)


def card_at(index: int) -> Card:
    """The card of ``index`` (0..51, see `Card.index`): the same object every time."""
    return _BY_INDEX[index]
