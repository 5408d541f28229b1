"""The seeded shuffle is part of the archive format: pinned, and re-derived independently."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator

import pytest

from engine import full_deck
from engine.rng import SeedStream, shuffled


def test_golden_first_cards_of_hand_one() -> None:
    # A change of algorithm would change every archived game; this pins it.
    deck = shuffled(full_deck(), "seed", "hand/1")
    assert [c.ascii for c in deck[:10]] == [
        "7H", "2H", "KD", "5C", "9S", "QC", "AH", "JD", "9H", "AS",
    ]  # fmt: skip


def test_golden_draw() -> None:
    deck = shuffled(full_deck(), "seed", "draw/1")
    assert [c.ascii for c in deck[:4]] == ["6S", "2S", "7C", "8H"]


def _reference_words(seed: str, label: str) -> Iterator[int]:
    """The word stream as the rng module's docstring states it, written out separately."""
    for counter in itertools.count():
        message = (
            seed.encode("utf-8")
            + bytes([0])
            + label.encode("utf-8")
            + bytes([0])
            + counter.to_bytes(8, "big")
        )
        yield int.from_bytes(hashlib.sha256(message).digest()[:8], "big")


def _reference_below(words: Iterator[int], n: int) -> int:
    for w in words:
        if w < 2**64 - (2**64 % n):
            return w % n
    raise AssertionError("unreachable")


def _reference_shuffle(items: list[int], seed: str, label: str) -> list[int]:
    words = _reference_words(seed, label)
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = _reference_below(words, i + 1)
        out[i], out[j] = out[j], out[i]
    return out


@pytest.mark.parametrize(
    ("seed", "label"),
    [("seed", "hand/1"), ("seed", "hand/2"), ("abc", "draw/1"), ("ünïcødé ♥", "hand/17")],
)
def test_shuffle_matches_the_documented_algorithm(seed: str, label: str) -> None:
    indexes = _reference_shuffle(list(range(52)), seed, label)
    assert [c.index for c in shuffled(full_deck(), seed, label)] == indexes


def test_shuffle_is_a_permutation_and_depends_on_seed_and_label() -> None:
    a = shuffled(full_deck(), "x", "hand/1")
    assert sorted(a) == full_deck()
    assert a == shuffled(full_deck(), "x", "hand/1")
    assert a != shuffled(full_deck(), "x", "hand/2")
    assert a != shuffled(full_deck(), "y", "hand/1")


def test_below_stays_in_range_and_rejects_bad_bounds() -> None:
    stream = SeedStream("s", "l")
    assert all(0 <= stream.below(3) < 3 for _ in range(200))
    assert {stream.below(2) for _ in range(100)} == {0, 1}
    with pytest.raises(ValueError):
        stream.below(0)


def test_rejection_sampling_skips_words_at_or_above_the_limit() -> None:
    # n = 2**63 + 1 puts the rejection limit at 2**63 + 1, so about half of all words
    # are rejected; the stream must still agree with the reference draw for draw.
    n = 2**63 + 1
    stream = SeedStream("seed", "big")
    words = _reference_words("seed", "big")
    assert [stream.below(n) for _ in range(20)] == [_reference_below(words, n) for _ in range(20)]
