"""What ``pbem-deal/3`` adds to the checks of an archive (``docs/pbem-deal-3.md``).

`check_v3` (steps 1-2 of a ``/3`` archive): the server seed is exactly 64 lowercase hex
digits, the proof names its game by number (the key binds it), and the archive lists its
computer seats (``[]`` when none: a missing list would take a human's cut out of the
check and switch the computer audit off). `check_missing`: a game never dealt names the
human seats whose cut was missing, and a dealt game names none. `check_previous`: given
the archive of the game this one follows, the ``follows`` record is that game's number,
commitment, final state hash, result and last dealer.

Pure: no clock, no I/O.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from engine.dealkey import PROTOCOL_3, is_hex64


class Mismatch(Exception):
    """The first check that failed: its name, the hand (when it has one), what differs."""

    def __init__(self, check: str, detail: str, hand: int | None = None) -> None:
        super().__init__(detail)
        self.check, self.detail, self.hand = check, detail, hand


def is_int(value: Any) -> TypeGuard[int]:
    """An integer in the JSON sense of the spec: not a boolean, not a float."""
    return isinstance(value, int) and not isinstance(value, bool)


def human_seats(record: dict[str, Any], players: int) -> list[int] | None:
    """The seats not listed in the archive's ``computer`` (None when it has no list)."""
    computer = record.get("computer")
    if not isinstance(computer, list):
        return None
    robots = {c.get("seat") for c in computer if isinstance(c, dict)}
    return [seat for seat in range(players) if seat not in robots]


def check_v3(record: dict[str, Any], raw: dict[str, Any], players: int) -> None:
    """The ``/3`` form: S of 64 lowercase hex digits, the game number, the computer list
    (each entry a seat of the game, once)."""
    if raw.get("protocol") != PROTOCOL_3:
        return
    if not is_hex64(raw.get("server_seed")):
        raise Mismatch("commitment", "a pbem-deal/3 server seed is exactly 64 lowercase hex digits")
    game = raw.get("game")
    if not is_int(game) or game < 0:
        raise Mismatch("game", f"the deal proof names no game number: {game!r}")
    computer = record.get("computer")
    if not isinstance(computer, list):
        raise Mismatch("computer", "a pbem-deal/3 archive lists its computer seats ([] for none)")
    seats = [c.get("seat") if isinstance(c, dict) else None for c in computer]
    if not all(is_int(s) and 0 <= s < players for s in seats) or len(set(seats)) != len(seats):
        raise Mismatch("computer", "the computer list names a seat twice, or no seat of the game")
    if record.get("seed") is not None and not ("draws" in raw and "deals" in raw):
        raise Mismatch("records", "a dealt pbem-deal/3 game records its draws and deals")


def check_missing(
    record: dict[str, Any], raw: dict[str, Any], players: int, cut: list[int]
) -> None:
    """``missing`` (``/3``): the human seats that had not cut, in seat order: not empty
    for a game never dealt, empty (or absent) for a dealt one."""
    if raw.get("protocol") != PROTOCOL_3:
        return
    missing = raw.get("missing", [])
    humans = human_seats(record, players) or []
    want = [seat for seat in humans if seat not in cut]
    if record.get("seed") is None:
        if not want:
            raise Mismatch("missing", "every human seat cut, yet the game says it was never dealt")
        if missing != want:
            raise Mismatch(
                "missing",
                f"the seats whose cut was missing are {want}, the archive says {missing!r}",
            )
    elif missing not in ([], None):
        raise Mismatch("missing", "a dealt game names a missing cut")


def game_number(archive: dict[str, Any]) -> Any:
    """The number an archive's game goes by: its ``/3`` proof's ``game``, else its
    ``game_id``."""
    proof = archive.get("deal_proof")
    if isinstance(proof, dict) and proof.get("protocol") == PROTOCOL_3:
        return proof.get("game")
    return archive.get("game_id")


def check_previous(
    raw: dict[str, Any], previous: dict[str, Any], result: tuple[Any, Any] | None = None
) -> None:
    """This game's ``follows`` against ``previous``, the archive of the game it follows
    (itself already verified): its number, commitment, final state hash, last dealer
    (its last deal record) and result — ``result`` (scores, winner) as a replay gives
    it, or the ``result`` its ``/3`` proof records. Mismatch("previous") otherwise."""
    follows = raw.get("follows")
    if not isinstance(follows, dict):
        raise Mismatch("previous", "the game follows no other game, yet an archive was given")
    before = previous.get("deal_proof")
    before = before if isinstance(before, dict) else {}
    number = game_number(previous)
    if follows.get("game") != number:
        raise Mismatch(
            "previous",
            f"it follows game {follows.get('game')!r}, the archive is of game {number!r}",
        )
    if follows.get("state_hash") != previous.get("state_hash"):
        raise Mismatch("previous", "the state hash it records is not the previous game's")
    bound = "commitment" in follows or raw.get("protocol") == PROTOCOL_3
    if bound and follows.get("commitment") != before.get("commitment"):
        raise Mismatch("previous", "the commitment it records is not the previous game's")
    deals = before.get("deals")
    last = deals[-1] if isinstance(deals, list) and deals else None
    if isinstance(last, dict) and follows.get("dealer") != last.get("dealer"):
        raise Mismatch("previous", "the last dealer it records is not the previous game's")
    if result is None:
        recorded = before.get("result")
        if not isinstance(recorded, dict):
            raise Mismatch("previous", "the previous archive records no result")
        result = (recorded.get("scores"), recorded.get("winner"))
    if [follows.get("scores"), follows.get("winner")] != list(result):
        raise Mismatch("previous", "the scores and winner it records are not the previous game's")
