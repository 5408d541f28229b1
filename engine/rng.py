"""Deterministic shuffling from a game's seed.

The deck order must be the same on every Python version forever, so it does not
use :mod:`random`.  The algorithm, which is part of the archive format:

1. A stream of 64-bit words: word *i* of stream ``label`` is the first 8 bytes
   (big-endian) of ``SHA-256(seed || 0x00 || label || 0x00 || i)``, where
   ``seed`` and ``label`` are UTF-8 and *i* is 8 bytes big-endian, for i = 0, 1, 2…
2. ``below(n)`` draws an unbiased integer in ``[0, n)`` by rejection: take the
   next word *w*; accept ``w % n`` unless ``w >= 2**64 - (2**64 % n)``.
3. Fisher–Yates: for i from len-1 down to 1, swap items i and ``below(i + 1)``.

Labels used by the game: ``"draw/R"`` for the R-th round of the draw for the
first deal, ``"hand/H"`` for the pack of hand H (1-based).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_WORD = 1 << 64


class SeedStream:
    """An endless stream of unbiased integers derived from ``seed`` and ``label``."""

    def __init__(self, seed: str, label: str) -> None:
        self._prefix = seed.encode() + b"\x00" + label.encode() + b"\x00"
        self._counter = 0

    def word(self) -> int:
        digest = hashlib.sha256(self._prefix + self._counter.to_bytes(8, "big")).digest()
        self._counter += 1
        return int.from_bytes(digest[:8], "big")

    def below(self, n: int) -> int:
        if n <= 0:
            raise ValueError("n must be positive")
        limit = _WORD - (_WORD % n)
        while True:
            w = self.word()
            if w < limit:
                return w % n


def shuffled(items: Sequence[T], seed: str, label: str) -> list[T]:
    """A copy of ``items`` shuffled by Fisher–Yates driven by ``SeedStream(seed, label)``."""
    out = list(items)
    stream = SeedStream(seed, label)
    for i in range(len(out) - 1, 0, -1):
        j = stream.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out
