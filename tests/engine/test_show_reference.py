"""The show scorer against an independent brute-force reference, exhaustively by rank."""

from __future__ import annotations

from itertools import combinations, combinations_with_replacement, pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Card, Suit, full_deck, score_show, show_points
from engine.scoring import rank_points


def reference_rank_points(ranks: tuple[int, ...]) -> int:
    """Fifteens, pairs and runs by enumerating every subset, as a player would."""
    indexes = range(len(ranks))
    points = 0
    runs: list[frozenset[int]] = []
    for size in range(2, len(ranks) + 1):
        for subset in combinations(indexes, size):
            chosen = sorted(ranks[i] for i in subset)
            if sum(min(r, 10) for r in chosen) == 15:
                points += 2
            if size == 2 and chosen[0] == chosen[1]:
                points += 2
            if size >= 3 and all(b == a + 1 for a, b in pairwise(chosen)):
                runs.append(frozenset(subset))
    # A run counts only if no longer run contains it.
    for run in runs:
        if not any(run < other for other in runs):
            points += len(run)
    return points


def reference_show(hand: list[Card], starter: Card, crib: bool) -> int:
    points = reference_rank_points(tuple(c.rank for c in [*hand, starter]))
    suits = {c.suit for c in hand}
    if len(suits) == 1:
        if starter.suit in suits:
            points += 5
        elif not crib:
            points += 4
    points += sum(1 for c in hand if c.rank == 11 and c.suit == starter.suit)
    return points


def test_rank_points_for_every_multiset_of_five_ranks() -> None:
    # All 6,175 possible rank patterns of a hand and starter (no rank more than four times).
    checked = 0
    for ranks in combinations_with_replacement(range(1, 14), 5):
        if max(ranks.count(r) for r in ranks) > 4:
            continue
        assert rank_points(ranks) == reference_rank_points(ranks), ranks
        checked += 1
    assert checked == 6175


def test_highest_hand_is_29_and_no_rank_pattern_scores_19() -> None:
    best = 0
    seen: set[int] = set()
    for ranks in combinations_with_replacement(range(1, 14), 5):
        if max(ranks.count(r) for r in ranks) > 4:
            continue
        points = rank_points(ranks)
        seen.add(points)
        best = max(best, points)
    # Without flush or nobs the best is 28 (four fives and a ten-card); nobs makes 29.
    assert best == 28
    assert 19 not in seen


five_cards = st.lists(st.sampled_from(full_deck()), min_size=5, max_size=5, unique=True)


@settings(max_examples=300, deadline=None)
@given(cards=five_cards, crib=st.booleans())
def test_score_show_matches_reference_and_fast_path(cards: list[Card], crib: bool) -> None:
    hand, starter = cards[:4], cards[4]
    items = score_show(hand, starter, crib=crib)
    expected = reference_show(hand, starter, crib)
    assert sum(i.points for i in items) == expected
    assert show_points(hand, starter, crib=crib) == expected


suited = st.sampled_from([c for c in full_deck() if c.suit == Suit.HEARTS])


@settings(max_examples=100, deadline=None)
@given(
    cards=st.lists(suited, min_size=5, max_size=5, unique=True),
    starter_same_suit=st.booleans(),
    crib=st.booleans(),
)
def test_flush_hands_match_reference(
    cards: list[Card], starter_same_suit: bool, crib: bool
) -> None:
    # Flushes are rare in uniform draws; this draws them on purpose.
    hand, starter = cards[:4], cards[4]
    if not starter_same_suit:
        starter = Card(starter.rank, Suit.CLUBS if starter.rank % 2 else Suit.SPADES)
    expected = reference_show(hand, starter, crib)
    assert sum(i.points for i in score_show(hand, starter, crib=crib)) == expected
    assert show_points(hand, starter, crib=crib) == expected
