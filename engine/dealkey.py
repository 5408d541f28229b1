"""The key of ``pbem-deal/3``: bound to the protocol, the game, its player count and
each cut's seat (``docs/pbem-deal-3.md``, section 3).

Under ``pbem-deal/1`` and ``/2`` the key was made from the server seed and the cuts
alone, so a cut recorded for one game could be replayed into another, or moved to
another seat, and a ``/1`` archive could be relabelled. ``/3`` puts all of them in the
bytes that are hashed::

    B = u32be(len(P)) || P || u64be(G) || u32be(n) || u32be(len(S)) || S
        || u32be(seat_a) || sha256(E_a) || u32be(seat_b) || sha256(E_b) || ...
    K = hex(sha256(B))

with ``P = utf8("pbem-deal/3")``, ``G`` the game number, ``n`` the number of players,
``S`` the server seed (exactly 64 lowercase hex characters) and each human seat's
entropy text ``E`` (by its 32-byte SHA-256) in seat order.

Pure: no clock, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

PROTOCOL_3 = "pbem-deal/3"

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_U64 = 1 << 64


def is_hex64(value: object) -> bool:
    """Whether ``value`` is a string of exactly 64 lowercase hex digits."""
    return isinstance(value, str) and bool(_HEX64.match(value)) and len(value) == 64


def key_v3(server_seed: str, game: int, players: int, entries: Sequence[tuple[int, str]]) -> str:
    """``K`` of ``pbem-deal/3`` from the server seed, the game number, the number of
    players and each human seat's (seat, SHA-256 of its entropy text in hex), in seat
    order. ValueError when the server seed or a hash is not 64 lowercase hex digits, the
    game number is not in [0, 2^64), the player count is not 2 to 4, or the seats are
    not strictly increasing seats of the game."""
    if not is_hex64(server_seed):
        raise ValueError("a pbem-deal/3 server seed is exactly 64 lowercase hex digits")
    if isinstance(game, bool) or not isinstance(game, int) or not 0 <= game < _U64:
        raise ValueError(f"not a game number: {game!r}")
    if players not in (2, 3, 4) or isinstance(players, bool):
        raise ValueError(f"not a number of players: {players!r}")
    protocol = PROTOCOL_3.encode("utf-8")
    seed = server_seed.encode("utf-8")
    blob = bytearray(len(protocol).to_bytes(4, "big") + protocol)
    blob += game.to_bytes(8, "big") + players.to_bytes(4, "big")
    blob += len(seed).to_bytes(4, "big") + seed
    last = -1
    for seat, digest in entries:
        if isinstance(seat, bool) or not isinstance(seat, int) or not last < seat < players:
            raise ValueError(f"the seats must be increasing seats of the game: {seat!r}")
        if not is_hex64(digest):
            raise ValueError(f"not a SHA-256 in lowercase hex: {digest!r}")
        blob += seat.to_bytes(4, "big") + bytes.fromhex(digest)
        last = seat
    return hashlib.sha256(bytes(blob)).hexdigest()


def key_bytes_v3(
    server_seed: str, game: int, players: int, entries: Sequence[tuple[int, str]]
) -> str:
    """The bytes ``B`` that `key_v3` hashes, in hex (for the test vectors)."""
    protocol = PROTOCOL_3.encode("utf-8")
    seed = server_seed.encode("utf-8")
    blob = bytearray(len(protocol).to_bytes(4, "big") + protocol)
    blob += game.to_bytes(8, "big") + players.to_bytes(4, "big")
    blob += len(seed).to_bytes(4, "big") + seed
    for seat, digest in entries:
        blob += seat.to_bytes(4, "big") + bytes.fromhex(digest)
    return bytes(blob).hex()
