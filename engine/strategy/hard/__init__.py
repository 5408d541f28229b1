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

The parts: `engine.strategy.hard.discard` (the discard), `engine.strategy.hard.pegtwo`
(pegging at 2 players), `engine.strategy.hard.pegmany` (at 3 and 4), on
`engine.strategy.hard.common` (reading the view); here `hard_action`, the decision, and
`peg_values`, the pegging values the review after a game compares a play with. Each
part's constants live in that part (``pegtwo.SAMPLES``, ``discard.PEG_WEIGHT`` …).
"""

from __future__ import annotations

import random

from engine import players as medium
from engine.actions import Action, Play
from engine.cards import Card
from engine.game import DISCARD, PEGGING, SHOW
from engine.strategy import multi, partners, pegsearch
from engine.strategy.hard import discard, pegmany, pegtwo
from engine.strategy.hard.common import pick
from engine.strategy.hard.discard import crib_value, discard_values, peg_estimate
from engine.view import PlayerView

__all__ = ["crib_value", "discard_values", "hard_action", "peg_estimate", "peg_values"]


def hard_action(view: PlayerView, rng: random.Random) -> Action:
    """The hard player's action for ``view``, its ties drawn from ``rng``."""
    if view.phase == DISCARD:
        pegsearch.forget()
        multi.forget()
        return pick(discard.discard_values(view, rng), rng)
    if view.phase == PEGGING:
        if view.must_go:
            return view.legal[0]
        if len(view.playable) == 1:
            return Play(view.seat, view.playable[0])
        if view.players == 2:
            if pegtwo.LEAD_POLICY == "medium" and not view.plays:
                return medium.choose_play(view, rng)
            return pegtwo.play(view, rng)
        if view.players in pegmany.MULTI_PEG:
            return pegmany.play(view, rng)
        if view.players == 4 and pegmany.FOUR_LOOKAHEAD:
            return medium.pick(partners.play_values(view), rng)
        return medium.choose_play(view, rng)
    if view.phase == SHOW:
        if view.awaiting_muggins:
            return medium.answer_claim(view)
        return medium.choose_claim(view)
    raise ValueError(f"nothing to decide in phase {view.phase!r}")


def peg_values(view: PlayerView, rng: random.Random) -> dict[Card, float]:
    """Each card the seat may play now, with the points it is worth to the end of the
    hand's play (the seat's side's points less the others'), as this player reckons
    them when it chooses — in points even near the end, where it chooses by the chance
    of winning. 2 players: the deals `hard_action` would sample from ``rng`` (the same
    deals, given a generator in the same state), each solved against the modelled
    opponent; but the hand's first card, which it leads by medium's rules
    (``pegtwo.LEAD_POLICY``), as medium values it. 3 players: the ``multi`` search over
    sampled deals; 4 players: the lookahead round the table (``partners``). Raises
    ValueError when the seat may play no card."""
    if view.phase != PEGGING or not view.playable:
        raise ValueError(f"seat {view.seat} has no card to play now")
    if view.players == 2 and pegtwo.LEAD_POLICY == "medium" and not view.plays:
        # The pone's lead: chosen by medium's rules, so valued as medium values it.
        return {a.card: v for v, a in medium.play_values(view) if isinstance(a, Play)}
    if view.players == 2:
        by_rank, _ = pegtwo.values(view, rng)
    elif view.players in pegmany.MULTI_PEG:
        by_rank, _ = pegmany.values(view, rng)
    else:
        scored = partners.play_values(view) if pegmany.FOUR_LOOKAHEAD else medium.play_values(view)
        return {a.card: v for v, a in scored if isinstance(a, Play)}
    return {card: float(by_rank[card.rank]) for card in view.playable}
