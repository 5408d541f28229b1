"""Archives for the replay page's tests: whole games played by the computer, with a deal
proof built exactly as the ``pbem-deal/1`` protocol says (the server seed S, its
commitment C, the players' cuts and the engine seed K derived from them)."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from engine import Game, Settings, to_archive
from engine.computer import choose_action


def derive_seed(server_seed: str, entropy: list[str]) -> str:
    """K: SHA-256 over each part's 4-byte big-endian length and its UTF-8 bytes."""
    blob = b""
    for part in [server_seed, *entropy]:
        raw = part.encode("utf-8")
        blob += len(raw).to_bytes(4, "big") + raw
    return hashlib.sha256(blob).hexdigest()


def deal_proof(
    server_seed: str, cuts: dict[int, str], *, revealed: bool = True
) -> tuple[dict[str, Any], str]:
    """The archive's ``deal_proof`` and the engine seed K for ``cuts`` (seat → text)."""
    commitment = hashlib.sha256(server_seed.encode("utf-8")).hexdigest()
    seats = sorted(cuts)
    seed = derive_seed(server_seed, [cuts[s] for s in seats])
    proof = {
        "protocol": "pbem-deal/1",
        "commitment": commitment,
        "server_seed": server_seed if revealed else None,
        "entropy": [{"seat": s, "text": cuts[s]} for s in seats],
    }
    return proof, seed


def played_game(
    players: int,
    seed: str,
    *,
    target: int = 61,
    muggins: bool = False,
    skunk: str = "skunk",
    stop_after: int | None = None,
    level: str = "good",
) -> Game:
    """A game the computer plays for every seat, to its end (or ``stop_after`` actions)."""
    game = Game(Settings(players=players, target=target, muggins=muggins, skunk=skunk), seed)
    rng = random.Random(seed)
    while not game.is_over and (stop_after is None or len(game.actions) < stop_after):
        seat = game.to_act()[0]
        game.apply(choose_action(game, seat, rng, level))
    return game


NAMES = ["Alice", "Bob", "Carol", "Dave"]


def proof_archive(
    players: int,
    *,
    target: int = 61,
    server_seed: str | None = None,
    stop_after: int | None = None,
    muggins: bool = False,
    with_proof: bool = True,
) -> dict[str, Any]:
    """The archive of a computer-played game whose seed comes from a deal proof."""
    s = server_seed or hashlib.sha256(f"server {players} {target}".encode()).hexdigest()
    cuts = {
        seat: f"<cut.{seat}.{players}@example.test> {word}"
        for seat, word in zip(
            range(players), ["17 lucky", "elephant 🐘 ♥ ünïcode", "", "42"], strict=False
        )
    }
    proof, seed = deal_proof(s, cuts, revealed=stop_after is None)
    game = played_game(players, seed, target=target, stop_after=stop_after, muggins=muggins)
    extra: dict[str, Any] = {
        "game_id": 7,
        "players": [{"email": f"{n.lower()}@example.test", "name": n} for n in NAMES[:players]],
        "status": "finished" if game.is_over else "active",
        "created_at": "2026-11-20T10:00:00+00:00",
    }
    if with_proof:
        extra["deal_proof"] = proof
    return to_archive(game, **extra)
