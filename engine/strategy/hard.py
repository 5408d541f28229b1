"""The ``hard`` computer player: whole-hand discards, searched pegging, game position.

It sees only a ``PlayerView`` (``engine.levels.decide`` hands it nothing else):
never the pack, the seed or another player's hidden cards.  All randomness
comes from the generator passed in, so a decision is a function of the view
and that generator.

Discard
    For every discard: the mean show of the kept cards over every starter the
    seat has not seen (exact, ``handvalue.mean_show``), plus (own crib) or minus
    (an opponent's crib) the crib value of the cards laid away, from crib tables
    computed for *realistic* discards — each side's table re-derived from the
    other side's discard policy until it settles (``cribtables``; suited and
    unsuited pairs, own and opponent's crib, one-card tables for 3 and 4
    players) — plus, at 2 players, ``PEG_WEIGHT`` × the pegging value of the
    kept ranks (``pegtable``: measured against the opponent the pegging search
    models, holding what a player keeps).  When a side is within ``ENDGAME_DISCARD`` points
    of the target (2 players), the discard is chosen by the chance of winning
    instead: the kept hand's exact show over every starter, fed through
    ``winprob.discard_vector`` (pegging, the other hand and the crib from the
    measured per-hand distributions, the crib moved by the table value of the
    discard, counting order respected), points breaking ties.

Pegging, 2 players
    ``pegsearch``: the opponent's unplayed cards are dealt ``SAMPLES`` ways
    from the cards the seat has not seen, consistent with their gos, each deal
    weighted by how likely the opponent was to keep it; each deal's play to the
    end of the hand is solved exactly against an opponent who cannot see our
    cards (``pegsearch.solve_model``, memoised on ranks); the card best on
    average is played.  Within ``ENDGAME_PLAY`` points of the target the
    same deals are solved for the chance of winning (``pegsearch.WinSearch``
    with the same modelled opponent:
    reaching the target wins on the spot; at the end of the play both shows are
    known in the deal and the crib comes from its distribution; then the win
    table), points breaking ties: it holds back cards that would let the
    dealer peg out and takes the points that go out first.

Pegging, 3 players (``MULTI_PEG``)
    ``multi``: every other seat's unplayed cards are dealt ``MULTI_SAMPLES``
    ways (``MULTI_LEAD_SAMPLES`` for the first two plays of a hand) from the
    cards the seat has not seen, consistent with each seat's gos and weighted
    by how good a keep each makes; each deal's play to the end of the hand is
    searched with the other seats — the partner too — playing a model that
    cannot see the other hands (``multi.model_play``: points now less what the
    next player can expect to answer, the medium player's tactics breaking
    ties), and my own later turns chosen best; the value is my side's points
    less the others' (``multi.weights_for``: at 3 players an opponent's point
    costs ``multi.OPP_WEIGHT``).  Within ``MULTI_ENDGAME`` points of the target
    the same deals (``MULTI_END_SAMPLES`` of them) are searched for the chance
    of winning (``multi.WinSearch``: a side reaching the target while pegging
    wins on the spot; at the end of the play the hands are counted in order
    from the dealer's left, the shows known in the deal, then the crib from
    its distribution, then ``multi.race``), points breaking ties.

Pegging, 4 players (``FOUR_LOOKAHEAD``)
    ``partners``: for each card, the next seat's answers as the medium player
    models them (the chance of each rank being held and being its best score),
    for each of them my partner's answers, for each of those the last seat's,
    and then my own best answer from the cards I hold — the medium player looks
    only at the next seat and answers with its own cards, though at 4 players it
    is the partner who answers next.  The sampled search of 3 players, even with
    many more deals (``FOUR_SAMPLES``), pegged about as well in duels but no
    better in whole games, at many times the cost.

Show
    Claims and muggins answers as the medium player (exact counts).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from itertools import combinations

import numpy as np

from engine import players as medium
from engine.actions import Action, Discard, Play
from engine.cards import Card
from engine.game import DISCARD, PEGGING, SHOW
from engine.scoring import rank_points, show_points
from engine.strategy import cribdata, multi, partners, pegdata, pegsearch, winprob
from engine.strategy.cribtables import pair_key
from engine.strategy.handvalue import mean_show, show_index
from engine.strategy.pegtable import PAIR_INDEX
from engine.view import PlayerView

_EPS = 1e-9
SAMPLES = {8: 64, 7: 128, 6: 192}
"""Deals of the opponent's hidden cards per pegging decision, by the number of
cards still to play (mine and theirs): fewer where each deal's search is large.
The noise of the sampling, not the search, limits the play: in pegging duels
against medium (``benchmarks/peg_duel.py``, 3,000 deals) 20–32 deals a decision
made +0.03 points a hand, 40–64 +0.11, 64–128 +0.19."""
FEW_SAMPLES = 256
"""Deals when five cards or fewer are left (each deal's search is tiny)."""
ENDGAME_SHARE = 4
"""Near the end each deal is solved for the chance of winning, a bigger search:
a quarter as many deals."""
LEAD_POLICY = "medium"
"""The pone's first card of the hand: "medium" leads by medium's rules (a card
under five, from a pair, not a five), "search" by the sampled search.  With all
eight cards unseen the search's leads differ by less than its noise; medium's
rules peg better there (+0.06 points a hand in the duels) and cost nothing."""
ENDGAME_DISCARD = 35
"""Discard by the chance of winning when a side is this close to the target."""
ENDGAME_INTERP = True
"""Near the end, move the pegging and the crib by the discard's estimates, fractions
included (else only the crib, rounded to whole points)."""
ENDGAME_PLAY = 40
"""Peg by the chance of winning when a side is this close to the target."""
PEG_MODEL = True
"""Solve each deal against a modelled opponent who cannot see our cards
(``pegsearch.solve_model``) rather than one who can (``pegsearch.solve``)."""
PEG_WEIGHT = 0.5
"""Weight of the pegging value of the kept cards in the discard (``peg_estimate``)."""
PEG_SOURCE = "table"
"""Which pegging value: ``"table"`` the table of ``pegtable`` (against the modelled
opponent, opponents that keep by a rule), ``"fit"`` its rank-and-pair fit,
``"open"`` the per-rank fit of the earlier open-card table (``OPEN_FIT``)."""
OPEN_FIT = {
    True: (
        0.611,
        0.516,
        0.478,
        0.465,
        0.733,
        0.51,
        0.425,
        0.324,
        0.238,
        0.008,
        -0.003,
        0.001,
        0.007,
    ),
    False: (
        -0.047,
        -0.152,
        -0.172,
        -0.188,
        -0.384,
        -0.306,
        -0.286,
        -0.298,
        -0.256,
        -0.368,
        -0.367,
        -0.378,
        -0.378,
    ),
}
"""The earlier estimate: per card kept, ace..king (dealer: True), open-card minimax
against random hands, 40 deals an entry; a pair costs ``OPEN_PAIR``."""
OPEN_PAIR = {True: -0.381, False: -0.296}
MULTI_SAMPLES = 24
"""Deals of the other seats' hidden cards per pegging decision, 3 players (4 players:
``FOUR_SAMPLES``)."""
MULTI_LEAD_SAMPLES = 16
"""Fewer deals for the first two plays of a hand, when each deal's search is largest."""
FOUR_LOOKAHEAD = True
"""4 players: peg by ``partners.play_values`` (the next seats' answers, my partner's
among them) instead of the medium player's one-card lookahead."""
FOUR_SAMPLES = {16: 48, 15: 64, 14: 64, 13: 64, 12: 96, 11: 96, 10: 128, 9: 128}
"""4 players, when 4 is in ``MULTI_PEG`` (not by default): deals per pegging decision
by the cards still to play at the table."""
FOUR_FEW_SAMPLES = 192
"""4 players: deals when eight cards or fewer are left."""
MULTI_SAMPLE_KEEP = 0.0
"""Softness of the keep model weighting each sampled deal, per other seat
(``multi.sample_hands``; 0: every deal equally likely)."""
MULTI_DEPTH = 99
"""My own later turns searched (beyond it I play the model as the others do)."""
MULTI_ENDGAME = 30
"""3 and 4 players: peg by the chance of winning when a side is this close to the target."""
MULTI_END_SAMPLES = 16
"""Deals per pegging decision when each is searched for the chance of winning."""
MULTI_DISCARD_PEG = 0.0
"""3 and 4 players: weight of the kept cards' pegging value (``multi.keep_peg_values``)
in the discard (0: not used)."""
MULTI_DISCARD_SAMPLES = 24
"""Deals of the other hands for that pegging value."""
MULTI_PEG: tuple[int, ...] = (3,)
"""Table sizes pegged by the ``multi`` search (4 players otherwise by ``FOUR_LOOKAHEAD``).
At 4 players the search did not beat medium's pegging in whole games: 47–48 % for
hard+hard against medium+medium with 16–24 deals a decision, 50.3 % with
``FOUR_SAMPLES`` (p99 259 ms a decision); the lookahead 51.9–52.5 %."""
CRIB_MEAN = float(sum(i * p for i, p in enumerate(winprob.CRIB)))


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
    """``PEG_WEIGHT`` × the pegging value of keeping these cards (2 players), by
    ``PEG_SOURCE``: my points minus the opponent's in the play of the hand."""
    if len(kept) != 4 or not PEG_WEIGHT:
        return 0.0
    ranks = tuple(sorted(c // 4 + 1 for c in kept))
    if PEG_SOURCE == "table":
        return PEG_WEIGHT * (pegdata.DEALER if dealer else pegdata.PONE)[ranks]
    if PEG_SOURCE == "open":
        pairs = sum(ranks[i] == ranks[j] for i in range(4) for j in range(i + 1, 4))
        weights = OPEN_FIT[dealer]
        return PEG_WEIGHT * (sum(weights[r - 1] for r in ranks) + OPEN_PAIR[dealer] * pairs)
    fitted = pegdata.DEALER_FIT if dealer else pegdata.PONE_FIT
    return PEG_WEIGHT * sum(fitted[i] for i in _peg_features(ranks))


def _peg_features(ranks: tuple[int, ...]) -> list[int]:
    """Indices of ``pegtable.features`` with multiplicity: each card's rank, each pair
    of cards' ranks (``ranks`` sorted)."""
    out = [r - 1 for r in ranks]
    for i in range(4):
        for j in range(i + 1, 4):
            out.append(PAIR_INDEX[ranks[i], ranks[j]])
    return out


def board(view: PlayerView) -> tuple[int, int]:
    """(my side's score, the other side's) — 2 players."""
    mine = next(s.front for s in view.scores if s.side == view.my_side)
    theirs = max(s.front for s in view.scores if s.side != view.my_side)
    return mine, theirs


def endgame(view: PlayerView, reach: int) -> bool:
    """2 players, and a side within ``reach`` points of the target."""
    if view.players != 2:
        return False
    mine, theirs = board(view)
    return view.target - mine <= reach or view.target - theirs <= reach


def discard_values(
    view: PlayerView, rng: random.Random | None = None
) -> list[tuple[float, Discard]]:
    """Every discard with its value: mean kept hand ± realistic crib + pegging estimate;
    near the end of a 2-player game, the chance of winning (points break ties)."""
    hand = [c.index for c in view.holding]
    need = 2 if view.players == 2 else 1
    own = _owns_crib(view)
    sign = 1.0 if own else -1.0
    late = endgame(view, ENDGAME_DISCARD)
    if late:
        mine, theirs = board(view)
        starters = [c for c in range(52) if c not in hand]
    pegs = None
    if view.players > 2 and MULTI_DISCARD_PEG and rng is not None:
        n = view.players
        pegs = multi.keep_peg_values(
            hand,
            (view.dealer + 1 - view.seat) % n,
            [c for c in range(52) if c not in hand],
            MULTI_DISCARD_SAMPLES,
            rng,
            multi.weights_for(n),
        )
    options = []
    for d in combinations(hand, need):
        kept = [c for c in hand if c not in d]
        crib = crib_value(d, view.players, own)
        if view.players == 2:
            peg = peg_estimate(kept, view.dealer == view.seat)
        elif pegs is not None:
            peg = MULTI_DISCARD_PEG * pegs[d[0]]
        else:
            peg = 0.0
        options.append((d, kept, crib, peg))
    peg_centre = sum(o[3] for o in options) / len(options)
    out: list[tuple[float, Discard]] = []
    for d, kept, crib, peg in options:
        value = mean_show(kept, hand) + sign * crib + peg
        if late:
            if ENDGAME_INTERP:
                vector = _late_vector(mine, theirs, own, view.target, peg - peg_centre, crib)
            else:
                shift = round(crib - CRIB_MEAN)
                vector = winprob.discard_vector(mine, theirs, own, view.target, shift)
            shows = [show_index(kept, s) for s in starters]
            value = float(sum(vector[h] for h in shows)) / len(shows) + 1e-4 * value
        out.append((value, Discard(view.seat, tuple(Card.from_index(c) for c in d))))
    return out


def _late_vector(
    mine: int, theirs: int, own: bool, target: int, peg: float, crib: float
) -> np.ndarray:
    """``winprob.discard_vector`` with my pegging moved ``peg`` points and the crib's
    mean moved to ``crib``: fractional moves as the mix of the two whole moves
    around them (a pegging move is a move of my score before the hand)."""
    crib_move = crib - CRIB_MEAN
    p0, c0 = math.floor(peg), math.floor(crib_move)
    fp, fc = peg - p0, crib_move - c0
    out = np.zeros(winprob.SHOW_SPAN)
    for dp, wp in ((0, 1.0 - fp), (1, fp)):
        for dc, wc in ((0, 1.0 - fc), (1, fc)):
            if wp * wc > 1e-9:
                start = min(max(mine + p0 + dp, 0), target - 1)
                out += (wp * wc) * winprob.discard_vector(start, theirs, own, target, c0 + dc)
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
    """The card best on average over sampled deals of the opponent's hidden cards."""
    opp = 1 - view.seat
    mine = tuple(sorted(c.rank for c in view.holding))
    seq = pegsearch.trim(tuple(c.rank for _, c in view.count_cards))
    played = [c.index for s, c, _ in view.plays if s == opp]
    late = endgame(view, ENDGAME_PLAY) and view.starter is not None
    deals = _deals_2p(view, rng)
    solver = pegsearch.card_values_model if PEG_MODEL else pegsearch.card_values
    values = solver(mine, deals, seq, view.count)
    if late:
        chances = _win_values(
            view, mine, deals, seq, [c.rank for c in (Card.from_index(i) for i in played)]
        )
        values = {r: chances[r] + 1e-4 * v for r, v in values.items()}
    scored = [(values[card.rank], Play(view.seat, card)) for card in view.playable]
    return _pick(scored, rng)


def _deals_2p(view: PlayerView, rng: random.Random) -> list[tuple[pegsearch.Ranks, float]]:
    """The sampled deals of the opponent's unplayed cards that `play_2p` searches."""
    opp = 1 - view.seat
    played = [c.index for s, c, _ in view.plays if s == opp]
    samples = SAMPLES.get(len(view.holding) + view.cards_left[opp], FEW_SAMPLES)
    if endgame(view, ENDGAME_PLAY) and view.starter is not None:
        samples //= ENDGAME_SHARE
    return pegsearch.sample_holdings(
        _unseen(view), view.cards_left[opp], _go_floor(view, opp), played, samples, rng
    )


def peg_values(view: PlayerView, rng: random.Random) -> dict[Card, float]:
    """Each card the seat may play now, with the points it is worth to the end of the
    hand's play (the seat's side's points less the others'), as this player reckons
    them when it chooses — in points even near the end, where it chooses by the chance
    of winning. 2 players: the deals `play_2p` would sample from ``rng`` (the same
    deals, given a generator in the same state), each solved against the modelled
    opponent; but the hand's first card, which it leads by medium's rules
    (``LEAD_POLICY``), as medium values it. 3 players: the ``multi`` search over
    sampled deals; 4 players: the lookahead round the table (``partners``). Raises
    ValueError when the seat may play no card."""
    if view.phase != PEGGING or not view.playable:
        raise ValueError(f"seat {view.seat} has no card to play now")
    mine = tuple(sorted(c.rank for c in view.holding))
    seq = pegsearch.trim(tuple(c.rank for _, c in view.count_cards))
    if view.players == 2 and LEAD_POLICY == "medium" and not view.plays:
        # The pone's lead: chosen by medium's rules, so valued as medium values it.
        return {a.card: v for v, a in medium.play_values(view) if isinstance(a, Play)}
    if view.players == 2:
        solver = pegsearch.card_values_model if PEG_MODEL else pegsearch.card_values
        by_rank = solver(mine, _deals_2p(view, rng), seq, view.count)
    elif view.players in MULTI_PEG:
        n = view.players
        others = [(view.seat + k) % n for k in range(1, n)]
        deals = multi.sample_hands(
            _unseen(view),
            [view.cards_left[s] for s in others],
            [_go_floor(view, s) for s in others],
            [[c.index for p, c, _ in view.plays if p == s] for s in others],
            multi_samples(view),
            rng,
            MULTI_SAMPLE_KEEP,
        )
        by_rank = multi.card_values(mine, deals, seq, view.count, multi.weights_for(n), MULTI_DEPTH)
    else:
        scored = partners.play_values(view) if FOUR_LOOKAHEAD else medium.play_values(view)
        return {a.card: v for v, a in scored if isinstance(a, Play)}
    return {card: float(by_rank[card.rank]) for card in view.playable}


def play_multi(view: PlayerView, rng: random.Random) -> Action:
    """3 and 4 players: the card best on average over sampled deals of every other
    seat's hidden cards, each deal's play searched with the others modelled
    (``multi``)."""
    n = view.players
    others = [(view.seat + k) % n for k in range(1, n)]
    mine = tuple(sorted(c.rank for c in view.holding))
    seq = pegsearch.trim(tuple(c.rank for _, c in view.count_cards))
    deals = multi.sample_hands(
        _unseen(view),
        [view.cards_left[s] for s in others],
        [_go_floor(view, s) for s in others],
        [[c.index for p, c, _ in view.plays if p == s] for s in others],
        multi_samples(view),
        rng,
        MULTI_SAMPLE_KEEP,
    )
    values = multi.card_values(mine, deals, seq, view.count, multi.weights_for(n), MULTI_DEPTH)
    if view.starter is not None and _near_end(view, MULTI_ENDGAME):
        chances = _multi_win_values(view, mine, deals[:MULTI_END_SAMPLES], seq)
        values = {r: chances[r] + 1e-4 * v for r, v in values.items()}
    scored = [(values[card.rank], Play(view.seat, card)) for card in view.playable]
    return _pick(scored, rng)


def multi_samples(view: PlayerView) -> int:
    """Deals of the other seats' hidden cards for a pegging decision at 3 or 4 players."""
    if view.players == 4:
        return FOUR_SAMPLES.get(sum(view.cards_left), FOUR_FEW_SAMPLES)
    return MULTI_LEAD_SAMPLES if len(view.plays) < 2 else MULTI_SAMPLES


def _near_end(view: PlayerView, reach: int) -> bool:
    return any(view.target - sc.front <= reach for sc in view.scores)


def _multi_win_values(
    view: PlayerView,
    mine: pegsearch.Ranks,
    deals: Sequence[tuple[multi.Hands, float]],
    seq: pegsearch.Ranks,
) -> dict[int, float]:
    """3 and 4 players: for each rank I may play, the weighted mean over the deals of
    my side's chance to win (``multi.WinSearch``)."""
    assert view.starter is not None
    n = view.players
    seats = [(view.seat + k) % n for k in range(n)]
    order = [view.my_side] + [sc.side for sc in view.scores if sc.side != view.my_side]
    side_index = {side: i for i, side in enumerate(order)}
    seat_side = {seat: sc.side for sc in view.scores for seat in sc.seats}
    side_of = [side_index[seat_side[s]] for s in seats]
    front = {sc.side: sc.front for sc in view.scores}
    needs = [view.target - front[side] for side in order]
    dealer = (view.dealer - view.seat) % n
    start = view.starter.rank
    my_show = show_points(view.kept, view.starter)
    played = [[c.rank for p, c, _ in view.plays if p == s] for s in seats]
    total = sum(w for _, w in deals)
    out: dict[int, float] = {}
    searches = []
    for others, w in deals:
        shows = [my_show] + [
            rank_points(tuple(sorted((*played[k], *others[k - 1], start)))) for k in range(1, n)
        ]

        def terminal(gains: tuple[int, ...], shows: list[int] = shows) -> float:
            left = [need - g for need, g in zip(needs, gains, strict=True)]
            return multi.after_pegging(left, shows, side_of, dealer, 0, n)

        searches.append((multi.WinSearch(needs, side_of, terminal), others, w))
    zero = tuple(0 for _ in order)
    for r in sorted(set(mine)):
        if view.count + min(r, 10) > 31:
            continue
        acc = 0.0
        for search, others, w in searches:
            acc += w * search.after((mine, *others), seq, view.count, 0, r, zero)
        out[r] = acc / total
    return out


def _win_values(
    view: PlayerView,
    mine: pegsearch.Ranks,
    deals: Sequence[tuple[pegsearch.Ranks, float]],
    seq: pegsearch.Ranks,
    their_played: Sequence[int],
) -> dict[int, float]:
    """For each rank I may play: the weighted mean chance of winning over the deals."""
    assert view.starter is not None
    a, b = board(view)
    t = view.target
    i_deal = view.dealer == view.seat
    my_show = show_points(view.kept, view.starter)
    start = view.starter.rank
    total = sum(w for _, w in deals)
    out: dict[int, float] = {}
    searches = []
    for theirs, w in deals:
        their_show = rank_points(tuple(sorted((*their_played, *theirs, start))))

        def terminal(got_me: int, got_them: int, their_show: int = their_show) -> float:
            return winprob.end_of_pegging(a + got_me, b + got_them, i_deal, my_show, their_show, t)

        searches.append((pegsearch.WinSearch(t - a, t - b, terminal, PEG_MODEL), theirs, w))
    for r in sorted(set(mine)):
        if view.count + min(r, 10) > 31:
            continue
        pts, new_seq = pegsearch.step(seq, r, view.count)
        rest = list(mine)
        rest.remove(r)
        acc = 0.0
        for search, theirs, w in searches:
            acc += w * search.value(
                tuple(rest), theirs, new_seq, view.count + min(r, 10), 1, 0, pts, 0
            )
        out[r] = acc / total
    return out


def hard_action(view: PlayerView, rng: random.Random) -> Action:
    if view.phase == DISCARD:
        pegsearch.forget()
        multi.forget()
        return _pick(discard_values(view, rng), rng)
    if view.phase == PEGGING:
        if view.must_go:
            return view.legal[0]
        if len(view.playable) == 1:
            return Play(view.seat, view.playable[0])
        if view.players == 2:
            if LEAD_POLICY == "medium" and not view.plays:
                return medium.choose_play(view, rng)
            return play_2p(view, rng)
        if view.players in MULTI_PEG:
            return play_multi(view, rng)
        if view.players == 4 and FOUR_LOOKAHEAD:
            return medium.pick(partners.play_values(view), rng)
        return medium.choose_play(view, rng)
    if view.phase == SHOW:
        if view.awaiting_muggins:
            return medium.answer_claim(view)
        return medium.choose_claim(view)
    raise ValueError(f"nothing to decide in phase {view.phase!r}")
