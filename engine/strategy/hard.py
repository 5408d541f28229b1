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
    kept ranks (``pegtable``).  When a side is within ``ENDGAME_DISCARD`` points
    of the target (2 players), the discard is chosen by the chance of winning
    instead: the kept hand's exact show over every starter, fed through
    ``winprob.discard_vector`` (pegging, the other hand and the crib from the
    measured per-hand distributions, the crib moved by the table value of the
    discard, counting order respected), points breaking ties.

Pegging, 2 players
    ``pegsearch``: the opponent's unplayed cards are dealt ``PEG_SAMPLES`` ways
    from the cards the seat has not seen, consistent with their gos, each deal
    weighted by how likely the opponent was to keep it; each deal's play to the
    end of the hand is solved exactly (memoised minimax on ranks); the card
    best on average is played.  Within ``ENDGAME_PLAY`` points of the target the
    same deals are solved for the chance of winning (``pegsearch.WinSearch``:
    reaching the target wins on the spot; at the end of the play both shows are
    known in the deal and the crib comes from its distribution; then the win
    table), points breaking ties: it holds back cards that would let the
    dealer peg out and takes the points that go out first.

Pegging, 3 players (``MULTI_PEG``; 4 players as the medium player)
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

Show
    Claims and muggins answers as the medium player (exact counts).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import combinations

from engine.actions import Action, Discard, Play
from engine.cards import Card
from engine.game import DISCARD, PEGGING, SHOW
from engine.scoring import rank_points, show_points
from engine.strategy import cribdata, multi, pegdata, pegsearch, winprob
from engine.strategy.cribtables import pair_key
from engine.strategy.handvalue import mean_show, show_index
from engine.view import PlayerView

_EPS = 1e-9
PEG_SAMPLES = 32
"""Deals of the opponent's hidden cards per pegging decision."""
LEAD_SAMPLES = 20
"""Deals for the pone's first lead, when all eight cards are out and each deal's
search is the largest (the decision-time budget: p99 under 200 ms of CPU)."""
ENDGAME_SAMPLES = 16
"""Fewer deals when each is solved for the chance of winning (a bigger search)."""
ENDGAME_DISCARD = 35
"""Discard by the chance of winning when a side is this close to the target."""
ENDGAME_PLAY = 40
"""Peg by the chance of winning when a side is this close to the target."""
PEG_MODEL = True
"""Solve each deal against a modelled opponent who cannot see our cards
(``pegsearch.solve_model``) rather than one who can (``pegsearch.solve``)."""
PEG_WEIGHT = 0.5
"""Shrinkage of the open-card pegging table (see ``engine.strategy.pegtable``)."""
MULTI_SAMPLES = 24
"""Deals of the other seats' hidden cards per pegging decision, 3 and 4 players."""
MULTI_LEAD_SAMPLES = 16
"""Fewer deals for the first two plays of a hand, when each deal's search is largest."""
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
"""Table sizes pegged by the ``multi`` search (the others as the medium player).
At 4 players the search did not beat medium's pegging in whole games (see the notes
of the branch: 47–48 % for hard+hard against medium+medium, 49.8 % without it)."""
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
    """``PEG_WEIGHT`` × the pegging value of keeping these cards (2 players): the
    smoothed open-card table of ``engine.strategy.pegtable``."""
    if len(kept) != 4 or not PEG_WEIGHT:
        return 0.0
    weights = pegdata.DEALER_FIT if dealer else pegdata.PONE_FIT
    ranks = tuple(c // 4 + 1 for c in kept)
    return PEG_WEIGHT * sum(weights[w] for w in _peg_features(ranks))


def _peg_features(ranks: tuple[int, ...]) -> list[int]:
    """Indices of ``pegtable.features`` with multiplicity: each card's rank, each pair."""
    out = [r - 1 for r in ranks]
    for i in range(4):
        for j in range(i + 1, 4):
            if ranks[i] == ranks[j]:
                out.append(13)
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
) -> list[tuple[float, Action]]:
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
    out: list[tuple[float, Action]] = []
    for d in combinations(hand, need):
        kept = [c for c in hand if c not in d]
        crib = crib_value(d, view.players, own)
        value = mean_show(kept, hand) + sign * crib
        if view.players == 2:
            value += peg_estimate(kept, view.dealer == view.seat)
        elif pegs is not None:
            value += MULTI_DISCARD_PEG * pegs[d[0]]
        if late:
            shift = round(crib - CRIB_MEAN)
            vector = winprob.discard_vector(mine, theirs, own, view.target, shift)
            shows = [show_index(kept, s) for s in starters]
            value = float(sum(vector[h] for h in shows)) / len(shows) + 1e-4 * value
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
    """The card best on average over sampled deals of the opponent's hidden cards."""
    opp = 1 - view.seat
    mine = tuple(sorted(c.rank for c in view.holding))
    seq = pegsearch.trim(tuple(c.rank for _, c in view.count_cards))
    played = [c.index for s, c, _ in view.plays if s == opp]
    late = endgame(view, ENDGAME_PLAY) and view.starter is not None
    deals = pegsearch.sample_holdings(
        _unseen(view),
        view.cards_left[opp],
        _go_floor(view, opp),
        played,
        ENDGAME_SAMPLES
        if late
        else LEAD_SAMPLES
        if len(mine) + view.cards_left[opp] >= 8
        else PEG_SAMPLES,
        rng,
    )
    solver = pegsearch.card_values_model if PEG_MODEL else pegsearch.card_values
    values = solver(mine, deals, seq, view.count)
    if late:
        chances = _win_values(
            view, mine, deals, seq, [c.rank for c in (Card.from_index(i) for i in played)]
        )
        values = {r: chances[r] + 1e-4 * v for r, v in values.items()}
    scored = [(values[card.rank], Play(view.seat, card)) for card in view.playable]
    return _pick(scored, rng)


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
        MULTI_LEAD_SAMPLES if len(view.plays) < 2 else MULTI_SAMPLES,
        rng,
        MULTI_SAMPLE_KEEP,
    )
    values = multi.card_values(mine, deals, seq, view.count, multi.weights_for(n), MULTI_DEPTH)
    if view.starter is not None and _near_end(view, MULTI_ENDGAME):
        chances = _multi_win_values(view, mine, deals[:MULTI_END_SAMPLES], seq)
        values = {r: chances[r] + 1e-4 * v for r, v in values.items()}
    scored = [(values[card.rank], Play(view.seat, card)) for card in view.playable]
    return _pick(scored, rng)


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

        searches.append((pegsearch.WinSearch(t - a, t - b, terminal), theirs, w))
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
    from engine import players as medium

    if view.phase == DISCARD:
        return _pick(discard_values(view, rng), rng)
    if view.phase == PEGGING:
        if view.must_go:
            return view.legal[0]
        if len(view.playable) == 1:
            return Play(view.seat, view.playable[0])
        if view.players == 2:
            return play_2p(view, rng)
        if view.players in MULTI_PEG:
            return play_multi(view, rng)
        return medium.choose_play(view, rng)
    if view.phase == SHOW:
        if view.awaiting_muggins:
            return medium.answer_claim(view)
        return medium.choose_claim(view)
    raise ValueError(f"nothing to decide in phase {view.phase!r}")
