"""Verifiable deals: the ``pbem-deal/2`` protocol (commit, cut, derive, reveal, verify).

The whole protocol, byte by byte, with test vectors: ``docs/pbem-deal-1.md``.
``pbem-deal/2`` differs from ``pbem-deal/1`` in how a cut's words are cleaned
(`clean_words`) and in how the key is derived (`derive_seed`): from the SHA-256 of each
entropy text rather than the text, so that an entry which keeps only the hash (a player
who asked to be forgotten, `engine.forgetting`) still derives the key.

The service draws a secret server seed ``S`` before any deal and publishes its
commitment ``C = sha256_hex(S)``.  Every human seat then "cuts for the deal": its
entropy text is the Message-ID of its cut mail and the words it wrote.  The engine
seed ``K`` is derived from ``S`` and those texts, so neither the service (which cannot
foresee the words) nor a player (who cannot see ``S``) chooses the deals.  At game over
``S`` is revealed and anyone can check every deal with `engine.dealcheck.verify_archive`.

Pure: no clock, no I/O, no random numbers (the service draws ``S`` itself).

The deals a seed gives and the check of a replayed game's deals against them are
:mod:`engine.dealreplay`'s; this module re-exports them (``Verdict``, ``check_deals``,
``deal_records``, ``expected_deal``, …).

The derivation, byte for byte (also in the README, "Verifiable deals")::

    pbem-deal/1:  K = sha256_hex( for p in [S, E_first_human_seat, E_next_human_seat, ...]:
                                      len(utf8(p)).to_bytes(4, "big") || utf8(p) )
    pbem-deal/2:  K = sha256_hex( len(utf8(S)).to_bytes(4, "big") || utf8(S)
                                  || sha256(utf8(E_first_human_seat))
                                  || sha256(utf8(E_next_human_seat)) || ... )
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.dealkey import PROTOCOL_3, key_v3
from engine.dealreplay import (
    NOT_REVEALED,
    NOT_VERIFIABLE,
    ExpectedDeal,
    Verdict,
    check_deals,
    deal_records,
    dealt,
    expected_deal,
    expected_draws,
    first_dealer_rule,
    records_of,
)
from engine.errors import ReplayError

PROTOCOL_1 = "pbem-deal/1"
PROTOCOL_2 = "pbem-deal/2"
PROTOCOL = PROTOCOL_3
"""The protocol of new games (`engine.dealkey`)."""
PROTOCOLS = (PROTOCOL_1, PROTOCOL_2, PROTOCOL_3)
"""The protocols whose archives verify."""
MAX_WORDS = 200
"""The most characters of a player's cut words that enter the entropy text."""


_HEX64 = re.compile(r"^[0-9a-f]{64}$")
# What a cut's words may not hold: C0 and C1 controls, DEL, lone surrogates and the two
# non-characters U+FFFE and U+FFFF (the complement of printable ASCII, U+00A0–U+D7FF,
# U+E000–U+FFFD and U+10000 and above; written as the complement, its compiled set is
# small, where the negated ranges up to U+10FFFF took milliseconds to compile).
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def text_hash(text: str) -> str:
    """The lowercase hex SHA-256 of the UTF-8 ``text`` (an entropy text's ``sha256``)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def commitment(server_seed: str) -> str:
    """``C``: the lowercase hex SHA-256 of the UTF-8 server seed."""
    return hashlib.sha256(server_seed.encode("utf-8")).hexdigest()


def is_server_seed(text: str) -> bool:
    """Whether ``text`` looks like a server seed (64 lowercase hex characters)."""
    return bool(_HEX64.match(text))


def clean_words(words: str, protocol: str = PROTOCOL) -> str:
    """A player's cut words as they enter the entropy text.

    ``pbem-deal/2``: every format character (general category Cf: zero-width spaces,
    bidi controls, soft hyphens…) is deleted; every control (Cc), surrogate (Cs) and
    separator (Zs, Zl, Zp) becomes U+0020; the text is put in Unicode NFC; runs of U+0020
    become one, the ends are trimmed; then the first 200 code points are kept and the
    end trimmed again.

    ``pbem-deal/1``: every character outside printable ASCII (U+0020–U+007E) and U+00A0
    and up (less surrogates, U+FFFE and U+FFFF) becomes a space, runs of whitespace
    (Python's `str.split`) become one space, the ends are trimmed, then at most 200
    code points are kept and the end trimmed again."""
    if protocol == PROTOCOL_1:
        kept = _UNSAFE.sub(" ", words)
        return " ".join(kept.split())[:MAX_WORDS].strip()
    if protocol not in (PROTOCOL_2, PROTOCOL_3):
        raise ValueError(f"unknown deal protocol {protocol!r}")
    out: list[str] = []
    for ch in words:
        category = unicodedata.category(ch)
        if category == "Cf":
            continue
        out.append(" " if category in _SPACED else ch)
    text = unicodedata.normalize("NFC", "".join(out))
    text = _SPACES.sub(" ", text).strip(" ")
    return text[:MAX_WORDS].rstrip(" ")


_SPACED = frozenset({"Cc", "Cs", "Zs", "Zl", "Zp"})
_SPACES = re.compile(" {2,}")
_MESSAGE_ID_UNSAFE = re.compile(r"[^\x21-\x7e]")


def clean_message_id(message_id: str, protocol: str = PROTOCOL) -> str:
    """The Message-ID as it enters the entropy text, with its angle brackets.

    ``pbem-deal/2``: every character outside U+0021–U+007E is deleted, then any ``<``
    and ``>`` at either end, and the rest is put between ``<`` and ``>``; "" when
    nothing is left (the service then uses a placeholder). ``pbem-deal/1``: the ends
    trimmed, and brackets added when it does not start with ``<``."""
    if protocol == PROTOCOL_1:
        mid = message_id.strip()
        return mid if mid.startswith("<") else f"<{mid.strip('<>')}>"
    core = _MESSAGE_ID_UNSAFE.sub("", message_id).strip("<>")
    return f"<{core}>" if core else ""


def entropy_text(
    message_id: str,
    words: str,
    protocol: str = PROTOCOL,
    *,
    placeholder: str = "<no-message-id>",
) -> str:
    """``E_seat``: the cut mail's Message-ID (with its angle brackets, see
    `clean_message_id`) and the cleaned words after one space; just the Message-ID when
    there are no words. A mail without a Message-ID (or one that cleans to nothing)
    counts by ``placeholder`` (the service's is ``<no-message-id.GAME.SEAT>``)."""
    mid = clean_message_id(message_id, protocol) or placeholder
    said = clean_words(words, protocol)
    return f"{mid} {said}" if said else mid


def derive_seed(server_seed: str, entropy: Sequence[str], protocol: str = PROTOCOL_2) -> str:
    """``K`` from the server seed and the human seats' entropy texts, in seat order.

    ``pbem-deal/1``: SHA-256 over the length-prefixed server seed and texts.
    ``pbem-deal/2``: `seed_from_hashes` of the texts' SHA-256. ValueError for another
    protocol (``pbem-deal/3`` binds the game too: `engine.dealkey.key_v3`)."""
    if protocol == PROTOCOL_2:
        return seed_from_hashes(server_seed, [text_hash(text) for text in entropy])
    if protocol != PROTOCOL_1:
        raise ValueError(f"unknown deal protocol {protocol!r}")
    blob = bytearray()
    for part in (server_seed, *entropy):
        data = part.encode("utf-8")
        blob += len(data).to_bytes(4, "big")
        blob += data
    return hashlib.sha256(bytes(blob)).hexdigest()


def seed_from_hashes(server_seed: str, hashes: Sequence[str]) -> str:
    """``K`` of ``pbem-deal/2`` from the server seed and the SHA-256 (64 hex digits) of
    each human seat's entropy text, in seat order: SHA-256 over the 4-byte big-endian
    length of the UTF-8 server seed, the seed, then each text's 32-byte digest.
    ValueError when a hash is not 64 lowercase hex digits."""
    seed = server_seed.encode("utf-8")
    blob = bytearray(len(seed).to_bytes(4, "big") + seed)
    for digest in hashes:
        if not _HEX64.match(digest):
            raise ValueError(f"not a SHA-256 in lowercase hex: {digest!r}")
        blob += bytes.fromhex(digest)
    return hashlib.sha256(bytes(blob)).hexdigest()


@dataclass(frozen=True)
class DealProof:
    """The archive's ``deal_proof``: the commitment, the server seed once revealed (None
    before), and the entropy texts of the human seats (seat, text), in seat order; then
    what the service recorded around them (kept as the archive's JSON): every cut mail
    received (``cuts``), every abandoned cut phase (``recuts``), the game this one
    follows (``follows``) and how the game ended (``outcome``, ``abort_reason``).

    An archive written before these were recorded has none of their keys; `to_json`
    writes them only when they are known (``outcome`` set).

    ``forgotten``: the seats whose entropy text was forgotten at their player's request,
    each with the SHA-256 its text had (seat, hex); they are not in ``entropy``. Under
    ``pbem-deal/2`` the key still derives from them (`seed`)."""

    commitment: str
    server_seed: str | None = None
    entropy: tuple[tuple[int, str], ...] = ()
    protocol: str = PROTOCOL_2
    cuts: tuple[dict[str, Any], ...] = ()
    recuts: tuple[dict[str, Any], ...] = ()
    follows: dict[str, Any] | None = None
    outcome: str | None = None
    abort_reason: str | None = None
    forgotten: tuple[tuple[int, str], ...] = ()
    game: int | None = None
    players: int | None = None

    def entries(self) -> list[dict[str, Any]]:
        """The archive's ``entropy``, in seat order: ``{"seat", "text", "sha256"}`` for a
        recorded text, ``{"seat", "sha256"}`` for a forgotten one."""
        out = [
            {"seat": seat, "text": text, "sha256": text_hash(text)} for seat, text in self.entropy
        ]
        out += [{"seat": seat, "sha256": digest} for seat, digest in self.forgotten]
        return sorted(out, key=lambda entry: int(entry["seat"]))

    def hashes(self) -> list[str]:
        """The SHA-256 of each entropy text, forgotten or not, in seat order."""
        return [str(entry["sha256"]) for entry in self.entries()]

    def to_json(
        self, *, reveal: bool = False, records: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The archive's ``deal_proof`` object; ``server_seed`` only when ``reveal``,
        and the deal ``records`` (`deal_records`: ``draws`` and ``deals``) only then."""
        data: dict[str, Any] = {
            "protocol": self.protocol,
            "commitment": self.commitment,
            "server_seed": self.server_seed if reveal else None,
            "entropy": self.entries(),
        }
        if self.protocol == PROTOCOL_3:
            data["game"] = self.game
        if self.outcome is not None:
            data["cuts"] = [dict(cut) for cut in self.cuts]
            data["recuts"] = [dict(recut) for recut in self.recuts]
            data["follows"] = dict(self.follows) if self.follows is not None else None
            data["outcome"] = self.outcome
            data["abort_reason"] = self.abort_reason
        if reveal and records is not None:
            data["draws"] = records["draws"]
            data["deals"] = records["deals"]
        return data

    def seed(self) -> str:
        """``K``; ValueError when the server seed is not known, or when a forgotten
        text is needed to derive it (``pbem-deal/1``)."""
        if self.server_seed is None:
            raise ValueError("the server seed is not revealed")
        if self.protocol == PROTOCOL_3:
            if self.game is None or self.players is None:
                raise ValueError("a pbem-deal/3 key needs the game number and the players")
            pairs = [(int(e["seat"]), str(e["sha256"])) for e in self.entries()]
            return key_v3(self.server_seed, self.game, self.players, pairs)
        if self.protocol == PROTOCOL_2:
            return seed_from_hashes(self.server_seed, self.hashes())
        if self.forgotten:
            raise ValueError("a forgotten cut's text is needed to derive a pbem-deal/1 key")
        return derive_seed(self.server_seed, [text for _, text in self.entropy], self.protocol)

    @classmethod
    def from_json(cls, data: Any, players: int | None = None) -> DealProof:
        """Read an archive's ``deal_proof`` (of a game of ``players``, which a
        ``pbem-deal/3`` key binds); ReplayError when it is malformed."""
        if not isinstance(data, dict):
            raise ReplayError("the deal_proof is not an object")
        protocol = data.get("protocol")
        if protocol not in PROTOCOLS:
            raise ReplayError(f"unknown deal protocol {protocol!r}")
        commit = data.get("commitment")
        seed = data.get("server_seed")
        raw = data.get("entropy", [])
        if not isinstance(commit, str) or (seed is not None and not isinstance(seed, str)):
            raise ReplayError("the deal_proof's commitment and server_seed must be strings")
        if not isinstance(raw, list):
            raise ReplayError("the deal_proof's entropy is not a list")
        entropy: list[tuple[int, str]] = []
        forgotten: list[tuple[int, str]] = []
        seats: list[int] = []
        for item in raw:
            if isinstance(item, dict) and "text" not in item and isinstance(item.get("seat"), int):
                digest = item.get("sha256")
                if not (isinstance(digest, str) and _HEX64.match(digest)):
                    raise ReplayError("a forgotten entropy entry needs the SHA-256 of its text")
                forgotten.append((item["seat"], digest))
                seats.append(item["seat"])
                continue
            if not (
                isinstance(item, dict)
                and isinstance(item.get("seat"), int)
                and isinstance(item.get("text"), str)
            ):
                raise ReplayError("each entropy entry needs a seat number and a text")
            entropy.append((item["seat"], item["text"]))
            seats.append(item["seat"])
        if seats != sorted(set(seats)):
            raise ReplayError("the entropy entries must be in seat order, one per seat")
        cuts = data.get("cuts", [])
        recuts = data.get("recuts", [])
        follows = data.get("follows")
        if not (isinstance(cuts, list) and all(isinstance(c, dict) for c in cuts)):
            raise ReplayError("the deal_proof's cuts are not a list of objects")
        if not (isinstance(recuts, list) and all(isinstance(r, dict) for r in recuts)):
            raise ReplayError("the deal_proof's recuts are not a list of objects")
        if follows is not None and not isinstance(follows, dict):
            raise ReplayError("the deal_proof's follows is not an object")
        outcome = data.get("outcome")
        if outcome not in (None, "finished", "aborted"):
            raise ReplayError(f"unknown outcome {outcome!r}")
        reason = data.get("abort_reason")
        game = data.get("game")
        return cls(
            commit,
            seed,
            tuple(entropy),
            protocol,
            tuple(cuts),
            tuple(recuts),
            follows,
            outcome,
            reason if isinstance(reason, str) else None,
            tuple(forgotten),
            game if isinstance(game, int) and not isinstance(game, bool) else None,
            players,
        )


__all__ = [
    "MAX_WORDS",
    "NOT_REVEALED",
    "NOT_VERIFIABLE",
    "PROTOCOL",
    "PROTOCOLS",
    "PROTOCOL_1",
    "PROTOCOL_2",
    "DealProof",
    "ExpectedDeal",
    "Verdict",
    "check_deals",
    "clean_message_id",
    "clean_words",
    "commitment",
    "deal_records",
    "dealt",
    "derive_seed",
    "entropy_text",
    "expected_deal",
    "expected_draws",
    "first_dealer_rule",
    "is_server_seed",
    "records_of",
    "seed_from_hashes",
    "text_hash",
]
