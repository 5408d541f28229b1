"""The deals a seed gives, and a replayed game's deals checked against them.

`expected_draws` and `expected_deal` recompute the draw for the first deal and each
hand's deal from an engine seed (``shuffled(deck, K, "draw/R")`` and ``"hand/H"``),
`deal_records` writes a replayed game's deals as an archive keeps them, and
`check_deals` compares the two, answering with a `Verdict`.  The protocol that derives
the seed is :mod:`engine.fairness`'s (which re-exports these names); the whole check of
an archive is :mod:`engine.dealcheck`'s.

Pure: no clock, no I/O, no random numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.cards import Card, full_deck
from engine.errors import ReplayError
from engine.game import Game
from engine.rng import shuffled

NOT_VERIFIABLE = "this game's deals are not verifiable (no commitment)"
NOT_REVEALED = "the server seed is not revealed yet: the deals can be checked once the game is over"


@dataclass
class Verdict:
    """What `verify_archive` found: ``ok`` with the number of deals checked, or the
    first mismatch (``check`` names it: "commitment", "entropy", "seed", "cuts",
    "recut", "first dealer", "draw", "dealer", "deal", "crib", "starter", "records",
    "replay", "cut"; ``hand`` the hand it was found in, when it has one); not
    ``verifiable`` (no commitment, or a ``pbem-deal/1`` key that cannot be derived
    again: ``detail`` says why) or not ``revealed`` (no server seed yet)."""

    ok: bool
    verifiable: bool = True
    revealed: bool = True
    deals: int = 0
    check: str | None = None
    hand: int | None = None
    detail: str = ""
    notes: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    """What was checked beyond the archive itself: "the receipt of seat N", "the
    previous game's archive", "the commitment log", "the player's mail: …"."""

    @property
    def message(self) -> str:
        if not self.verifiable:
            return self.detail or NOT_VERIFIABLE
        if not self.revealed:
            return NOT_REVEALED
        if self.ok and not self.deals and self.notes:
            return self.notes[0]
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
    when three play, the next card is the starter. Each hand sorted (see `dealt`)."""
    deal = dealt(seed, hand_no, players, dealer)
    return ExpectedDeal(tuple(tuple(sorted(h)) for h in deal.hands), deal.crib, deal.starter)


def dealt(seed: str, hand_no: int, players: int, dealer: int) -> ExpectedDeal:
    """As `expected_deal`, each hand in the order its cards were dealt."""
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
    return ExpectedDeal(tuple(tuple(h) for h in hands), crib, pack[pos])


def deal_records(states: Iterable[Game]) -> dict[str, Any]:
    """The archive's deal records of a replayed game (its ``states``: before the first
    action, then after each): ``draws``, the rounds of the draw for the first deal
    (``{"round": R, "cards": [card or None per seat]}``), and ``deals``, per hand its
    dealer, each seat's cards in the order dealt, the crib card of a three-player deal
    (else ``[]``) and the starter (None while it is not turned). Cards as ``"10H"``."""
    draws: list[dict[str, Any]] = []
    deals: list[dict[str, Any]] = []
    first = True
    for game in states:
        if first:
            first = False
            for number, drawn in enumerate(game.draws, start=1):
                cards = [drawn[s].ascii if s in drawn else None for s in range(game.players)]
                draws.append({"round": number, "cards": cards})
        if not deals or deals[-1]["hand"] != game.hand_no:
            deals.append(
                {
                    "hand": game.hand_no,
                    "dealer": game.dealer,
                    "hands": [
                        [c.ascii for c in _dealt_cards(game, seat)] for seat in range(game.players)
                    ],
                    "crib": [c.ascii for c in game.crib()[:1]] if game.players == 3 else [],
                    "starter": None,
                }
            )
        if game.starter is not None and deals[-1]["starter"] is None:
            deals[-1]["starter"] = game.starter.ascii
    return {"draws": draws, "deals": deals}


def records_of(game: Game) -> dict[str, Any]:
    """`deal_records` of ``game``, replayed from its seed and actions (for an export)."""
    from engine.archive import replay_archive, to_archive

    return deal_records(replay_archive(to_archive(game)))


def first_dealer_rule(players: int, scores: Sequence[int], winner: int, last_dealer: int) -> int:
    """The seat that deals first in a game that follows another ("loser-deals-first"):
    ``scores`` and ``winner`` as the engine keeps them (per seat, or per side with
    partners: seat s is on side s % 2), ``last_dealer`` the seat that dealt the previous
    game's last hand. Of the losing seats in turn order from the last dealer's left,
    the one with the lowest score; with partners, the first of them (`engine.match.
    first_dealer_after` on the previous game gives the same seat)."""
    order = [(last_dealer + step) % players for step in range(1, players + 1)]

    def side(seat: int) -> int:
        return seat % 2 if players == 4 else seat

    losers = [seat for seat in order if side(seat) != winner]
    return min(losers, key=lambda seat: (scores[side(seat)], order.index(seat)))


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
    """What ``seat`` was dealt: what it holds right after a deal, in the order dealt
    (nothing laid away yet)."""
    return tuple(game.holding(seat)) + tuple(game.laid_away(seat))


def _cards(cards: Iterable[Card]) -> str:
    return " ".join(c.ascii for c in cards)
