"""``easy``: medium's judgement with deliberate slips, reproducible from its rng."""

from __future__ import annotations

import random
from dataclasses import replace

from engine import Accept, Claim, Discard, Muggins, Play, new_game, show_points
from engine.arena import ArenaConfig, run_arena
from engine.computer import choose_action
from engine.easy import (
    DISCARD_SLIP,
    MISCOUNT,
    MISS_MUGGINS,
    PLAY_SLIP,
    easy_action,
    easy_answer,
    easy_claim,
    easy_discard,
    easy_play,
)
from engine.game import PEGGING, Event
from engine.players import discard_values, play_values
from engine.view import PlayerView, player_view


def _discard_views(n: int) -> list[PlayerView]:
    views = []
    for i in range(n):
        game = new_game(2, seed=f"easy-discard-{i}", first_dealer=i % 2)
        views.append(player_view(game, 0))
    return views


def test_sometimes_keeps_a_weaker_hand_among_the_top_few() -> None:
    rng = random.Random(1)
    slips = 0
    views = _discard_views(300)
    for view in views:
        values = sorted((v for v, _ in discard_values(view)), reverse=True)
        action = easy_discard(view, rng)
        assert isinstance(action, Discard)
        chosen = next(v for v, a in discard_values(view) if a == action)
        assert chosen >= values[3] - 1e-9  # never worse than the fourth best
        slips += chosen < values[0] - 1e-9
    assert 0.5 * DISCARD_SLIP < slips / len(views) <= DISCARD_SLIP + 0.1


def test_sometimes_plays_carelessly() -> None:
    """Some of its cards are worse than medium's by medium's own reckoning."""
    rng = random.Random(2)
    worse = decisions = 0
    for i in range(60):
        game = new_game(2, seed=f"easy-play-{i}", target=61)
        while not game.is_over and game.hand_no < 3:
            seat = game.to_act()[0]
            if game.phase == PEGGING and len(game.legal_actions(seat)) > 1:
                view = player_view(game, seat)
                values = {a: v for v, a in play_values(view)}
                action = easy_play(view, rng)
                assert isinstance(action, Play)
                decisions += 1
                worse += values[action] < max(values.values()) - 1e-9
                game.apply(action)
            else:
                game.apply(choose_action(game, seat, rng, "medium"))
    assert decisions > 200
    assert 0.1 < worse / decisions <= PLAY_SLIP + 0.05


def _show_views(n: int) -> list[PlayerView]:
    """Views of a seat about to count a scoring hand in a muggins game."""
    views: list[PlayerView] = []
    i = 0
    while len(views) < n:
        game = new_game(2, seed=f"easy-claim-{i}", muggins=True)
        i += 1
        rng = random.Random(i)
        while not game.is_over and game.phase != "show":
            game.apply(choose_action(game, game.to_act()[0], rng, "medium"))
        if game.is_over:
            continue
        view = player_view(game, game.to_act()[0])
        entry, starter = view.show_entry, view.starter
        if entry and starter and show_points(view.showing, starter, crib=entry[1] == "crib"):
            views.append(view)
    return views


def test_sometimes_counts_short_never_over() -> None:
    rng = random.Random(3)
    short = 0
    views = _show_views(150)
    for view in views:
        assert view.starter is not None and view.show_entry is not None
        actual = show_points(view.showing, view.starter, crib=view.show_entry[1] == "crib")
        claim = easy_claim(view, rng)
        assert isinstance(claim, Claim) and 0 <= claim.points <= actual
        short += claim.points < actual
    assert 0.5 * MISCOUNT < short / len(views) <= MISCOUNT + 0.1


def test_sometimes_misses_a_short_claim() -> None:
    """Answering a claim one short, ``easy`` calls muggins only some of the time and
    never on a right claim."""
    rng = random.Random(4)
    missed = asked = 0
    for view in _show_views(60):
        assert view.starter is not None and view.show_entry is not None
        # Rebuild the window from a real game: the claimant counts one short.
        actual = show_points(view.showing, view.starter, crib=view.show_entry[1] == "crib")
        answer_view = _answering_view(view, actual - 1)
        answer = easy_answer(answer_view, rng)
        asked += 1
        missed += isinstance(answer, Accept)
        assert isinstance(easy_answer(_answering_view(view, actual), rng), Accept)
    assert 0.5 * MISS_MUGGINS < missed / asked < 1 - 0.5 * (1 - MISS_MUGGINS)


def _answering_view(view: PlayerView, claimed: int) -> PlayerView:
    """``view`` turned into the opponent's view of the open muggins window after a claim."""
    seat, what = view.show_entry or (0, "hand")
    opponent = 1 - seat
    detail = f"{what}: claimed {claimed}"
    claim = Event("claim", view.hand_no, seat=seat, side=seat, points=claimed, detail=detail)
    return replace(
        view,
        seat=opponent,
        my_side=opponent,
        awaiting_muggins=True,
        legal=(Muggins(opponent), Accept(opponent)),
        events=(*view.events, claim),
    )


def test_easy_is_reproducible_and_weaker_than_medium() -> None:
    """A short duplicate arena run to 61: easy wins well under half against medium."""
    report = run_arena(ArenaConfig("easy", "medium", 40, seed="easy-vs-medium", target=61))
    assert report["a_win_rate"]["mean"] < 0.45
    assert (
        report["points_per_hand_per_seat"]["A"]["total"]
        < report["points_per_hand_per_seat"]["B"]["total"]
    )
    again = run_arena(ArenaConfig("easy", "medium", 3, seed="easy-vs-medium", target=61))
    first = run_arena(ArenaConfig("easy", "medium", 3, seed="easy-vs-medium", target=61))
    again.pop("timing")
    first.pop("timing")
    assert again == first


def test_easy_action_every_phase() -> None:
    game = new_game(3, seed="easy-phases", muggins=True, target=61)
    rng = random.Random(5)
    while not game.is_over:
        seat = game.to_act()[0]
        action = easy_action(player_view(game, seat), rng)
        assert action in game.legal_actions(seat)
        game.apply(action)
