"""Verifiable deals: the ``pbem-deal/1`` protocol (commit, cut, derive, reveal, verify).

The service draws a secret server seed ``S`` before any deal and publishes its
commitment ``C = sha256_hex(S)``.  Every human seat then "cuts for the deal": its
entropy text is the Message-ID of its cut mail and the words it wrote.  The engine
seed ``K`` is derived from ``S`` and those texts, so neither the service (which cannot
foresee the words) nor a player (who cannot see ``S``) chooses the deals.  At game over
``S`` is revealed and anyone can check every deal with `verify_archive`.

Pure: no clock, no I/O, no random numbers (the service draws ``S`` itself).

The derivation, byte for byte (also in the README, "Verifiable deals")::

    K = sha256_hex( for p in [S, E_first_human_seat, E_next_human_seat, ...]:
                        len(utf8(p)).to_bytes(4, "big") || utf8(p) )
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.cards import Card, full_deck
from engine.errors import EngineError, ReplayError
from engine.game import Game
from engine.rng import shuffled

PROTOCOL = "pbem-deal/1"
MAX_WORDS = 200
"""The most characters of a player's cut words that enter the entropy text."""

NOT_VERIFIABLE = "this game's deals are not verifiable (no commitment)"

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_UNSAFE = re.compile(r"[^\x20-\x7e\u00a0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def commitment(server_seed: str) -> str:
    """``C``: the lowercase hex SHA-256 of the UTF-8 server seed."""
    return hashlib.sha256(server_seed.encode("utf-8")).hexdigest()


def is_server_seed(text: str) -> bool:
    """Whether ``text`` looks like a server seed (64 lowercase hex characters)."""
    return bool(_HEX64.match(text))


def clean_words(words: str) -> str:
    """A player's cut words as they enter the entropy: every character outside printable
    ASCII (U+0020–U+007E) and U+00A0 and up (less surrogates, U+FFFE and U+FFFF) becomes
    a space, runs of whitespace become one space, the ends are trimmed, then at most 200
    characters (code points) are kept and the end trimmed again."""
    kept = _UNSAFE.sub(" ", words)
    return " ".join(kept.split())[:MAX_WORDS].strip()


def entropy_text(message_id: str, words: str) -> str:
    """``E_seat``: the cut mail's Message-ID (with its angle brackets) and the cleaned
    words after one space; just the Message-ID when there are no words."""
    mid = message_id.strip()
    if not mid.startswith("<"):
        mid = f"<{mid.strip('<>')}>"
    said = clean_words(words)
    return f"{mid} {said}" if said else mid


def derive_seed(server_seed: str, entropy: Sequence[str]) -> str:
    """``K`` from the server seed and the human seats' entropy texts, in seat order."""
    blob = bytearray()
    for part in (server_seed, *entropy):
        data = part.encode("utf-8")
        blob += len(data).to_bytes(4, "big")
        blob += data
    return hashlib.sha256(bytes(blob)).hexdigest()


@dataclass(frozen=True)
class DealProof:
    """The archive's ``deal_proof``: the commitment, the server seed once revealed (None
    before game over), and the entropy texts of the human seats (seat, text), in seat
    order."""

    commitment: str
    server_seed: str | None = None
    entropy: tuple[tuple[int, str], ...] = ()

    def to_json(self, *, reveal: bool = False) -> dict[str, Any]:
        """The archive's ``deal_proof`` object; ``server_seed`` only when ``reveal``."""
        return {
            "protocol": PROTOCOL,
            "commitment": self.commitment,
            "server_seed": self.server_seed if reveal else None,
            "entropy": [{"seat": seat, "text": text} for seat, text in self.entropy],
        }

    def seed(self) -> str:
        """``K``; ValueError when the server seed is not known."""
        if self.server_seed is None:
            raise ValueError("the server seed is not revealed")
        return derive_seed(self.server_seed, [text for _, text in self.entropy])

    @classmethod
    def from_json(cls, data: Any) -> DealProof:
        """Read an archive's ``deal_proof``; ReplayError when it is malformed."""
        if not isinstance(data, dict):
            raise ReplayError("the deal_proof is not an object")
        if data.get("protocol") != PROTOCOL:
            raise ReplayError(f"unknown deal protocol {data.get('protocol')!r}")
        commit = data.get("commitment")
        seed = data.get("server_seed")
        raw = data.get("entropy", [])
        if not isinstance(commit, str) or (seed is not None and not isinstance(seed, str)):
            raise ReplayError("the deal_proof's commitment and server_seed must be strings")
        if not isinstance(raw, list):
            raise ReplayError("the deal_proof's entropy is not a list")
        entropy: list[tuple[int, str]] = []
        for item in raw:
            if not (
                isinstance(item, dict)
                and isinstance(item.get("seat"), int)
                and isinstance(item.get("text"), str)
            ):
                raise ReplayError("each entropy entry needs a seat number and a text")
            entropy.append((item["seat"], item["text"]))
        seats = [seat for seat, _ in entropy]
        if seats != sorted(set(seats)):
            raise ReplayError("the entropy entries must be in seat order, one per seat")
        return cls(commit, seed, tuple(entropy))


@dataclass
class Verdict:
    """What `verify_archive` found: ``ok`` with the number of deals checked, or the
    first mismatch (``check`` is "commitment", "seed", "draw", "deal", "crib",
    "starter" or "replay"; ``hand`` the hand it was found in, when it has one)."""

    ok: bool
    verifiable: bool = True
    deals: int = 0
    check: str | None = None
    hand: int | None = None
    detail: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def message(self) -> str:
        if not self.verifiable:
            return NOT_VERIFIABLE
        if self.ok:
            return f"all {self.deals} deals verified"
        where = f" (hand {self.hand})" if self.hand is not None else ""
        return f"mismatch in check {self.check}{where}: {self.detail}"


def expected_draws(seed: str, players: int, rounds: int) -> list[dict[int, Card]]:
    """The draw for the first deal recomputed from ``seed``: in round R the contenders
    (all seats, then those tied lowest) take the top cards of ``shuffled(deck, K,
    "draw/R")`` in seat order."""
    contenders = list(range(players))
    out: list[dict[int, Card]] = []
    for round_no in range(1, rounds + 1):
        pack = shuffled(full_deck(), seed, f"draw/{round_no}")
        drawn = {seat: pack[i] for i, seat in enumerate(contenders)}
        out.append(drawn)
        low = min(card.rank for card in drawn.values())
        contenders = [seat for seat, card in drawn.items() if card.rank == low]
    return out


@dataclass(frozen=True)
class ExpectedDeal:
    """One hand's deal recomputed from the seed: each seat's cards, the crib card of a
    three-player deal, and the starter (the first undealt card)."""

    hands: tuple[tuple[Card, ...], ...]
    crib: tuple[Card, ...]
    starter: Card


def expected_deal(seed: str, hand_no: int, players: int, dealer: int) -> ExpectedDeal:
    """Hand ``hand_no`` dealt from ``shuffled(deck, K, "hand/H")``: one card at a time
    from the dealer's left (seat dealer+1 first), five or six each, one to the crib
    when three play, the next card is the starter."""
    pack = shuffled(full_deck(), seed, f"hand/{hand_no}")
    size = 6 if players == 2 else 5
    hands: list[list[Card]] = [[] for _ in range(players)]
    order = [(dealer + 1 + i) % players for i in range(players)]
    pos = 0
    for _ in range(size):
        for seat in order:
            hands[seat].append(pack[pos])
            pos += 1
    crib: tuple[Card, ...] = ()
    if players == 3:
        crib = (pack[pos],)
        pos += 1
    return ExpectedDeal(tuple(tuple(sorted(h)) for h in hands), crib, pack[pos])


def check_deals(states: Iterable[Game], seed: str) -> Verdict:
    """Check (c): every draw card, each hand's dealt cards, the crib card of a
    three-player deal and each starter in the replayed ``states`` (before the first
    action, then after each) equal those recomputed from ``seed``."""
    deals = 0
    current: int | None = None
    starter_seen = False
    last: Game | None = None
    try:
        for game in states:
            if last is None:
                draws = game.draws
                for number, (got, want) in enumerate(
                    zip(draws, expected_draws(seed, game.players, len(draws)), strict=True),
                    start=1,
                ):
                    if got != want:
                        return Verdict(
                            False,
                            check="draw",
                            hand=0,
                            detail=f"round {number} of the draw for the first deal shows "
                            f"{_cards(got.values())}, the seed gives {_cards(want.values())}",
                        )
            last = game
            if game.hand_no != current:
                current, starter_seen = game.hand_no, False
                deals += 1
                want_deal = expected_deal(seed, game.hand_no, game.players, game.dealer)
                state = game.state_json()
                for seat in range(game.players):
                    held = tuple(sorted(_dealt_cards(game, seat)))
                    if held != want_deal.hands[seat]:
                        return Verdict(
                            False,
                            check="deal",
                            hand=game.hand_no,
                            detail=f"seat {seat} was dealt {_cards(held)}, the seed gives "
                            f"{_cards(want_deal.hands[seat])}",
                        )
                if game.players == 3:
                    crib = tuple(state["crib"][:1])
                    if crib != tuple(c.ascii for c in want_deal.crib):
                        return Verdict(
                            False,
                            check="crib",
                            hand=game.hand_no,
                            detail=f"the crib card is {' '.join(crib)}, the seed gives "
                            f"{_cards(want_deal.crib)}",
                        )
            if game.starter is not None and not starter_seen:
                starter_seen = True
                turned = expected_deal(seed, game.hand_no, game.players, game.dealer).starter
                if game.starter != turned:
                    return Verdict(
                        False,
                        check="starter",
                        hand=game.hand_no,
                        detail=f"the starter is {game.starter.ascii}, "
                        f"the seed gives {turned.ascii}",
                    )
    except ReplayError as exc:
        return Verdict(False, check="replay", hand=current, detail=str(exc))
    return Verdict(True, deals=deals)


def _dealt_cards(game: Game, seat: int) -> tuple[Card, ...]:
    """What ``seat`` holds right after a deal (nothing laid away yet)."""
    return tuple(game.holding(seat)) + tuple(game.laid_away(seat))


def _cards(cards: Iterable[Card]) -> str:
    return " ".join(c.ascii for c in cards)


def verify_archive(data: dict[str, Any] | str) -> Verdict:
    """Check an archive per step 6 of ``pbem-deal/1``: (a) SHA-256(S) == C,
    (b) derive(S, entropy) == seed, (c) `check_deals`. A game without a
    ``deal_proof`` is not verifiable; ReplayError when the archive is unreadable."""
    from engine.archive import parse_archive, replay_archive

    record = parse_archive(data)
    raw = record.get("deal_proof")
    if raw is None:
        return Verdict(False, verifiable=False)
    wrong_dealer = check_first_dealer(record)
    if wrong_dealer is not None:
        return wrong_dealer
    unplayed = check_unplayed(record)
    if unplayed is not None:
        return unplayed
    proof = DealProof.from_json(raw)
    if proof.server_seed is None:
        return Verdict(
            False,
            check="commitment",
            detail="the server seed is not revealed yet (the game is not over)",
        )
    if commitment(proof.server_seed) != proof.commitment:
        return Verdict(
            False,
            check="commitment",
            detail=f"SHA-256 of the server seed is {commitment(proof.server_seed)}, "
            f"the commitment says {proof.commitment}",
        )
    derived = proof.seed()
    if derived != str(record["seed"]):
        return Verdict(
            False,
            check="seed",
            detail=f"the server seed and the entropy give {derived}, the archive's seed is "
            f"{record['seed']}",
        )
    try:
        return check_deals(replay_archive(record), derived)
    except EngineError as exc:
        return Verdict(False, check="replay", detail=str(exc))


# Bound cuts, aborted games and linked games (the service side of issue 23): small
# self-contained checks that `verify_archive` calls.

FOLLOW_RULE = "loser-deals-first"


def text_hash(text: str) -> str:
    """The lowercase hex SHA-256 of the UTF-8 ``text``: how a cut's entropy text is
    quoted in its receipt, in every later mail of the game and in the archive."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_first_dealer(record: dict[str, Any]) -> Verdict | None:
    """The first dealer of an archived game: with ``deal_proof.follows`` (a rematch, or
    the next game of a match) ``settings.first_dealer`` must be the loser-deals-first
    rule applied to that result (`engine.match.loser_deals_first`); without it,
    ``settings.first_dealer`` must be null (the first dealer comes from the draw). None
    when it is right (or the archive is older than ``follows``), else the failing
    Verdict (check "first_dealer")."""
    from engine.match import loser_deals_first

    proof = record.get("deal_proof")
    if not isinstance(proof, dict) or "follows" not in proof:
        return None  # an archive from before games were linked: nothing to check
    follows = proof["follows"]
    settings = record.get("settings")
    chosen = settings.get("first_dealer") if isinstance(settings, dict) else None
    if follows is None:
        if chosen is None:
            return None
        return Verdict(
            False,
            check="first_dealer",
            detail=f"seat {chosen} dealt first without a draw, but the game follows no other game",
        )
    try:
        if not isinstance(follows, dict) or follows.get("rule") != FOLLOW_RULE:
            raise ValueError(f"not a {FOLLOW_RULE} result: {follows!r}")
        players = int(settings["players"]) if isinstance(settings, dict) else 0
        want = loser_deals_first(
            players,
            int(follows["dealer"]),
            [int(n) for n in follows["scores"]],
            int(follows["winner"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        return Verdict(False, check="first_dealer", detail=f"unreadable follows: {exc}")
    if chosen != want:
        return Verdict(
            False,
            check="first_dealer",
            detail=f"game {follows.get('game')} ended {follows['scores']} (winner "
            f"{follows['winner']}, last dealer seat {follows['dealer']}): seat {want} deals "
            f"first, the archive says {chosen}",
        )
    return None


def check_unplayed(record: dict[str, Any]) -> Verdict | None:
    """A game aborted before its deal (``outcome`` "aborted", no engine seed: not every
    player cut): the revealed server seed must match the commitment, and no action may
    have been played. None for any other game."""
    proof = record.get("deal_proof")
    if not isinstance(proof, dict) or record.get("seed") is not None:
        return None
    if proof.get("outcome") != "aborted":
        return None
    seed = proof.get("server_seed")
    if not isinstance(seed, str):
        return Verdict(
            False, check="commitment", detail="the aborted game's server seed is not revealed"
        )
    if commitment(seed) != proof.get("commitment"):
        return Verdict(
            False,
            check="commitment",
            detail=f"SHA-256 of the server seed is {commitment(seed)}, the commitment says "
            f"{proof.get('commitment')}",
        )
    if record.get("actions"):
        return Verdict(False, check="replay", detail="a game never dealt has actions")
    return Verdict(True, deals=0, notes=["aborted before the deal: nothing was dealt"])
