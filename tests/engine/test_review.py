"""engine.review: a finished game's discards and plays for one seat beside the hard
player's — its numbers are engine.analysis's and the hard search's, on fixed (seeded)
games, and it names no card the seat had not seen when it decided."""

from __future__ import annotations

from functools import cache

import pytest

from engine import Card, Discard, Game, Play, Settings
from engine.analysis import discard_analysis, discard_review
from engine.computer import computer_move, computer_view, view_rng
from engine.review import (
    DiscardDecision,
    PlayDecision,
    is_choice,
    review_discard,
    review_game,
    review_play,
)
from engine.strategy.hard import peg_values
from engine.view import visible_events


@cache
def played(seed: str, levels: tuple[str, ...], target: int = 121) -> Game:
    """A whole game between computer players (seat by seat ``levels``)."""
    game = Game(Settings(players=len(levels), target=target), seed)
    while not game.is_over:
        seat = game.to_act()[0]
        game.apply(computer_move(computer_view(game, seat), levels[seat]))
    return game


def moments(game: Game, seat: int) -> list[tuple[Game, Discard | Play]]:
    """The game just before each discard and play of ``seat``, with that action."""
    replayed = Game(game.settings, game.seed)
    out: list[tuple[Game, Discard | Play]] = []
    for action in game.actions:
        if action.seat == seat and isinstance(action, Discard | Play):
            out.append((replayed.copy(), action))
        replayed.apply(action)
    return out


GAME = ("rv1", ("medium", "hard"))


def test_discards_are_valued_as_the_hint_values_them() -> None:
    """Each discard's numbers are `engine.analysis`'s: the option laid away, the hard
    player's option, and the points between them."""
    game = played(*GAME)
    review = review_game(game, 0)
    discards = [(g, a) for g, a in moments(game, 0) if isinstance(a, Discard)]
    assert len(review.discards) == len(discards) > 5
    for decision, (then, action) in zip(review.discards, discards, strict=True):
        view = computer_view(then, 0)
        analysis = discard_analysis(view)
        made = analysis.option_for(action.cards)
        hard = computer_move(view, "hard")
        assert isinstance(hard, Discard)
        theirs = analysis.option_for(hard.cards)
        assert decision.hand_no == view.hand_no
        assert decision.holding == view.holding
        assert decision.made.total == pytest.approx(made.total)
        assert decision.made.hand == pytest.approx(made.hand)
        assert decision.made.crib == pytest.approx(made.crib)
        assert decision.computer.laid_away == theirs.laid_away
        assert decision.given_away == pytest.approx(max(0.0, theirs.total - made.total))
        assert decision.own_crib == (then.dealer == 0)
        # Where the hard player lays away the hint's best, it is the hint's review.
        if set(hard.cards) == set(analysis.best.laid_away):
            assert decision.given_away == pytest.approx(
                discard_review(view, action.cards).given_away
            )


def test_plays_are_valued_by_the_hard_search() -> None:
    """Each play with a choice: every card's value is the hard search's (`peg_values`
    from the view's own generator), the hard card is its choice, and the points given
    away are the difference; forced plays are left out."""
    game = played(*GAME)
    review = review_game(game, 0)
    plays = [(g, a) for g, a in moments(game, 0) if isinstance(a, Play)]
    chosen = [(g, a) for g, a in plays if is_choice(computer_view(g, 0))]
    assert len(chosen) < len(plays)  # some plays had no choice
    assert len(review.plays) == len(chosen) > 10
    for decision, (then, action) in zip(review.plays, chosen, strict=True):
        view = computer_view(then, 0)
        values = peg_values(view, view_rng(view))
        assert dict(decision.values) == pytest.approx(values)
        assert decision.made == action.card
        hard = computer_move(view, "hard")
        assert isinstance(hard, Play) and decision.computer == hard.card
        given = values[hard.card] - values[action.card]
        assert decision.given_away == pytest.approx(max(0.0, given))
        assert decision.matched == (hard.card.rank == action.card.rank)
        assert decision.count == view.count


def test_the_hard_players_own_game_gives_nothing_away() -> None:
    """The seat the hard player played matches itself at every decision."""
    review = review_game(played(*GAME), 1)
    assert review.decisions
    assert review.matched == len(review.decisions)
    assert review.total == 0.0
    assert review.costliest() == ()


def test_the_total_and_the_costliest() -> None:
    review = review_game(played(*GAME), 0)
    assert review.total == pytest.approx(sum(d.given_away for d in review.decisions))
    assert review.total > 0
    top = review.costliest()
    assert 0 < len(top) <= 3
    given = [d.given_away for d in top]
    assert given == sorted(given, reverse=True)
    rest = [d.given_away for d in review.decisions if d not in top]
    assert max(rest, default=0.0) <= given[-1]


def _seen_before(game: Game, seat: int) -> set[Card]:
    """Every card ``seat`` could have seen in ``game`` so far, from the view-filtered
    log: its own hand and the cards in the events it may see (plays, starters, shows)."""
    seen = set(game.holding(seat)) | set(game.kept(seat)) | set(game.laid_away(seat))
    for event in visible_events(game, seat):
        seen |= set(event.cards)
        for item in event.items:
            seen |= set(item.cards)
    if game.starter is not None:
        seen.add(game.starter)
    return seen


@pytest.mark.parametrize(
    "seed, levels, seat",
    [
        ("rv1", ("medium", "hard"), 0),
        ("rv2", ("hard", "easy"), 1),
        ("rv3", ("medium", "easy", "hard"), 0),
        ("rv4", ("medium", "hard", "easy", "medium"), 2),
    ],
)
def test_a_review_names_no_card_the_seat_had_not_seen(
    seed: str, levels: tuple[str, ...], seat: int
) -> None:
    """Every card a decision names was in the seat's view-filtered log when it decided;
    the other seats' hands and the crib's other cards never appear before their show."""
    game = played(seed, levels, 121 if len(levels) == 2 else 61)
    review = review_game(game, seat)
    by_moment = [
        (then, action)
        for then, action in moments(game, seat)
        if isinstance(action, Discard) or is_choice(computer_view(then, seat))
    ]
    assert len(by_moment) == len(review.decisions)
    for decision, (then, _) in zip(review.decisions, by_moment, strict=True):
        seen = _seen_before(then, seat)
        hidden = {c for s in range(then.players) if s != seat for c in then.holding(s)}
        hidden |= {c for s in range(then.players) if s != seat for c in then.laid_away(s)}
        named = decision.cards()
        if isinstance(decision, DiscardDecision):
            named |= set(decision.computer.laid_away) | set(decision.made.laid_away)
            named |= {c for o in decision.analysis.options for c in (*o.kept, *o.laid_away)}
        else:
            assert isinstance(decision, PlayDecision)
            named |= {decision.made, decision.computer} | {c for c, _ in decision.values}
        assert named <= seen, (decision.hand_no, named - seen)
        assert not named & hidden
        if isinstance(decision, PlayDecision) and decision.threat is not None:
            assert decision.threat.chance < 1.0  # a guess about hidden cards, never a peek


def test_single_views() -> None:
    """`review_discard` and `review_play` refuse what the seat could not do."""
    game = Game(Settings(players=2, target=121), "single")
    view = computer_view(game, 0)
    with pytest.raises(KeyError):
        review_discard(view, view.holding[:1])  # one card: no discard of two
    with pytest.raises(ValueError):
        review_play(view, view.holding[0])
    with pytest.raises(ValueError):
        review_game(game, 2)
