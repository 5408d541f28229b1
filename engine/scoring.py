"""Scoring: the show (hands and crib) and the play (pegging).

Every score comes as a tuple of ``ScoreItem`` — kind, cards, points — whose
points add up to the total, so a caller can say "fifteen two, fifteen four and
a pair is six".  ``show_points`` is the fast path that returns only the total.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import combinations, product

from engine.cards import JACK, RANK_NAMES, RANK_PLURALS, Card
from engine.errors import IllegalActionError

# Kinds of score, as they appear in ScoreItem.kind.
FIFTEEN = "fifteen"
PAIR = "pair"
PAIR_ROYAL = "pair royal"
DOUBLE_PAIR_ROYAL = "double pair royal"
RUN = "run"
FLUSH = "flush"
NOBS = "his nobs"
HEELS = "his heels"
THIRTY_ONE = "thirty-one"
GO = "go"
MUGGINS = "muggins"
CORRECTION = "over-claim"

_SAME_RANK_KINDS = {2: (PAIR, 2), 3: (PAIR_ROYAL, 6), 4: (DOUBLE_PAIR_ROYAL, 12)}


@dataclass(frozen=True, slots=True)
class ScoreItem:
    """One scoring combination: what it is, which cards made it, how many points."""

    kind: str
    cards: tuple[Card, ...]
    points: int

    def __reduce__(self) -> tuple[type[ScoreItem], tuple[str, tuple[Card, ...], int]]:
        """Pickled as its fields, made again by its constructor (see `Event`)."""
        return ScoreItem, (self.kind, self.cards, self.points)

    def describe(self) -> str:
        """Words for this item, e.g. ``fifteen (7♣ 8♦) for 2``."""
        cards = " ".join(str(c) for c in self.cards)
        label = self.kind
        if self.kind == RUN:
            label = f"run of {len(self.cards)}"
        elif self.kind == PAIR and self.cards:
            label = f"pair of {RANK_PLURALS[self.cards[0].rank - 1]}"
        elif self.kind == FLUSH:
            label = f"{len(self.cards)}-card flush"
        return f"{label} ({cards}) for {self.points}" if cards else f"{label} for {self.points}"

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "cards": [c.ascii for c in self.cards], "points": self.points}


def total(items: Iterable[ScoreItem]) -> int:
    return sum(item.points for item in items)


def _check_show_input(hand: Sequence[Card], starter: Card | None) -> None:
    cards = [*hand, starter] if starter is not None else list(hand)
    if len(set(cards)) != len(cards):
        raise IllegalActionError("a card appears twice in the hand and starter")


def score_show(
    hand: Sequence[Card], starter: Card | None, *, crib: bool = False
) -> tuple[ScoreItem, ...]:
    """Every scoring combination of a 4-card hand (or crib) with the starter.

    Fifteens, pairs (a pair royal and a double pair royal are single items),
    each run of the longest length, the flush (4 in a hand, 5 with the
    starter; a crib only with 5) and his nobs.
    """
    _check_show_input(hand, starter)
    cards = [*hand, starter] if starter is not None else list(hand)
    items: list[ScoreItem] = []
    for size in range(2, len(cards) + 1):
        for combo in combinations(sorted(cards), size):
            if sum(c.value for c in combo) == 15:
                items.append(ScoreItem(FIFTEEN, combo, 2))
    by_rank: dict[int, list[Card]] = {}
    for card in sorted(cards):
        by_rank.setdefault(card.rank, []).append(card)
    for rank in sorted(by_rank):
        group = by_rank[rank]
        if len(group) >= 2:
            kind, points = _SAME_RANK_KINDS[len(group)]
            items.append(ScoreItem(kind, tuple(group), points))
    items.extend(_show_runs(by_rank))
    items.extend(_flush(hand, starter, crib))
    if starter is not None:
        for card in hand:
            if card.rank == JACK and card.suit == starter.suit:
                items.append(ScoreItem(NOBS, (card,), 1))
    return tuple(items)


def _show_runs(by_rank: dict[int, list[Card]]) -> list[ScoreItem]:
    ranks = sorted(by_rank)
    best: list[int] = []
    current: list[int] = []
    for rank in ranks:
        current = [*current, rank] if current and rank == current[-1] + 1 else [rank]
        if len(current) > len(best):
            best = current
    if len(best) < 3:
        return []
    return [ScoreItem(RUN, combo, len(best)) for combo in product(*(by_rank[r] for r in best))]


def _flush(hand: Sequence[Card], starter: Card | None, crib: bool) -> list[ScoreItem]:
    if len(hand) < 4 or len({c.suit for c in hand}) != 1:
        return []
    if starter is not None and starter.suit == hand[0].suit:
        return [ScoreItem(FLUSH, (*sorted(hand), starter), 5)]
    if crib:
        return []
    return [ScoreItem(FLUSH, tuple(sorted(hand)), 4)]


@cache
def rank_points(ranks: tuple[int, ...]) -> int:
    """Points from fifteens, pairs and runs for a sorted tuple of ranks."""
    values = [min(r, 10) for r in ranks]
    points = 0
    n = len(values)
    for mask in range(1, 1 << n):
        if sum(values[i] for i in range(n) if mask >> i & 1) == 15:
            points += 2
    counts = Counter(ranks)
    for c in counts.values():
        points += c * (c - 1)  # 2 for a pair, 6 for three, 12 for four
    distinct = sorted(counts)
    best_len, best_mult, run_len, run_mult = 0, 0, 0, 0
    prev = None
    for r in distinct:
        if prev is not None and r == prev + 1:
            run_len += 1
            run_mult *= counts[r]
        else:
            run_len, run_mult = 1, counts[r]
        if run_len > best_len:
            best_len, best_mult = run_len, run_mult
        prev = r
    if best_len >= 3:
        points += best_len * best_mult
    return points


def show_points(hand: Sequence[Card], starter: Card | None, *, crib: bool = False) -> int:
    """The total of ``score_show`` without building the breakdown (fast path)."""
    cards = [*hand, starter] if starter is not None else list(hand)
    points = rank_points(tuple(sorted(c.rank for c in cards)))
    if len(hand) >= 4:
        suit = hand[0].suit
        if all(c.suit == suit for c in hand):
            if starter is not None and starter.suit == suit:
                points += 5
            elif not crib:
                points += 4
    if starter is not None:
        for card in hand:
            if card.rank == JACK and card.suit == starter.suit:
                points += 1
    return points


def show_total(hand: Sequence[Card], starters: Iterable[Card], *, crib: bool = False) -> int:
    """``sum(show_points(hand, s, crib=crib) for s in starters)``, computed by starter
    rank and suit rather than one starter at a time (the discard search's inner loop).

    ``hand`` has four cards; the starters must not include any of them.
    """
    by_rank = [0] * 14
    by_suit = [0, 0, 0, 0]
    n = 0
    for starter in starters:
        by_rank[starter.rank] += 1
        by_suit[starter.suit] += 1
        n += 1
    per_rank = _points_by_starter_rank(tuple(sorted(c.rank for c in hand)))
    total = sum(k * p for k, p in zip(by_rank, per_rank, strict=True))
    suit = hand[0].suit
    if len(hand) >= 4 and all(c.suit == suit for c in hand):
        total += 5 * by_suit[suit]
        if not crib:
            total += 4 * (n - by_suit[suit])
    for card in hand:
        if card.rank == JACK:
            total += by_suit[card.suit]
    return total


@cache
def _points_by_starter_rank(ranks: tuple[int, ...]) -> tuple[int, ...]:
    """``rank_points`` of ``ranks`` with a starter of each rank (index 1..13; 0 unused)."""
    return (0, *(rank_points(tuple(sorted((*ranks, r)))) for r in range(1, 14)))


def score_play(played: Sequence[Card]) -> tuple[ScoreItem, ...]:
    """What the last card of ``played`` (the cards of the current count, in order) scores.

    Fifteen, thirty-one, pairs of consecutive same ranks, and the longest run
    among the most recent cards.  The point for the last card of a count (the
    go) is not included: it depends on what the other players can do.
    """
    if not played:
        return ()
    count = sum(c.value for c in played)
    if count > 31:
        raise IllegalActionError(f"the count would be {count}, over 31")
    last = played[-1]
    items: list[ScoreItem] = []
    if count == 15:
        items.append(ScoreItem(FIFTEEN, tuple(played), 2))
    if count == 31:
        items.append(ScoreItem(THIRTY_ONE, tuple(played), 2))
    same = 1
    for card in reversed(played[:-1]):
        if card.rank != last.rank:
            break
        same += 1
    if same >= 2:
        kind, points = _SAME_RANK_KINDS[same]
        items.append(ScoreItem(kind, tuple(played[-same:]), points))
    for length in range(len(played), 2, -1):
        tail = played[-length:]
        ranks = sorted(c.rank for c in tail)
        if len(set(ranks)) == length and ranks[-1] - ranks[0] == length - 1:
            items.append(ScoreItem(RUN, tuple(tail), length))
            break
    return tuple(items)


def count_words(items: Sequence[ScoreItem]) -> str:
    """The count as a player says it: ``fifteen two, fifteen four and a pair is six``."""
    if not items:
        return "nothing — a nineteen hand"
    phrases: list[str] = []
    running = 0
    for item in items:
        running += item.points
        if item.kind == FIFTEEN:
            phrases.append(f"fifteen {_number(running)}")
        elif item.kind == PAIR:
            phrases.append(f"a pair of {RANK_PLURALS[item.cards[0].rank - 1]} {_number(running)}")
        elif item.kind in (PAIR_ROYAL, DOUBLE_PAIR_ROYAL):
            phrases.append(
                f"{item.kind} of {RANK_PLURALS[item.cards[0].rank - 1]} {_number(running)}"
            )
        elif item.kind == RUN:
            phrases.append(f"a run of {_number(len(item.cards))} {_number(running)}")
        elif item.kind == FLUSH:
            phrases.append(f"a flush of {_number(len(item.cards))} {_number(running)}")
        elif item.kind == NOBS:
            phrases.append(f"his nobs {_number(running)}")
        else:
            phrases.append(f"{item.kind} {_number(running)}")
    return ", ".join(phrases) + f" — {running} in all"


_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
).split()


def _number(n: int) -> str:
    if 0 <= n <= 20:
        return _NUMBER_WORDS[n]
    tens = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
    if n < 100:
        t, u = divmod(n, 10)
        return tens[t] + (f"-{_NUMBER_WORDS[u]}" if u else "")
    return str(n)


def rank_name(rank: int) -> str:
    return RANK_NAMES[rank - 1]
