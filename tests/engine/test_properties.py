"""Properties of random complete games: 2, 3 and 4 players, with and without muggins, to 61
and to 121.  Hypothesis draws the game's seed and the seed of the players' choices."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    GAME_OVER,
    PEGGING,
    SHOW,
    Accept,
    Action,
    Card,
    Claim,
    EngineError,
    Event,
    Game,
    Go,
    Muggins,
    Play,
    PlayerView,
    Settings,
    load,
    parse_card,
    player_view,
    replay_archive,
    to_archive,
)
from tests.engine.helpers import choose

SETTINGS = st.builds(
    Settings,
    players=st.sampled_from([2, 3, 4]),
    target=st.sampled_from([61, 121]),
    skunk=st.sampled_from(["none", "lurch", "skunk"]),
    muggins=st.booleans(),
)
SEEDS = st.text(min_size=1, max_size=16)
CHOICES = st.integers(min_value=0, max_value=2**32 - 1)
EXAMPLES = settings(max_examples=60, deadline=None)


def steps(game_settings: Settings, seed: str, choices: int) -> Iterator[tuple[Game, Action]]:
    """Play a whole game with random legal choices; yield after every action."""
    game = Game(game_settings, seed)
    rng = random.Random(choices)
    while not game.is_over:
        action = choose(game, rng)
        game.apply(action)
        yield game, action
    assert len(game.actions) < 2000


# -- no card is ever in two places ----------------------------------------------------


def places(game: Game) -> list[Card]:
    s = game._s
    starter = [s.starter] if s.starter else []
    return [
        *(c for h in s.holding for c in h),
        *s.crib,
        *s.pack,
        *starter,
        *(c for _, c, _ in s.plays),
    ]


@EXAMPLES
@given(game_settings=SETTINGS, seed=SEEDS, choices=CHOICES)
def test_every_card_is_in_exactly_one_place(
    game_settings: Settings, seed: str, choices: int
) -> None:
    for game, _ in steps(game_settings, seed, choices):
        cards = places(game)
        assert len(cards) == 52 and len(set(cards)) == 52
        for seat in range(game.players):
            played = {c for who, c, _ in game.plays if who == seat}
            assert set(game.kept(seat)) <= set(game.holding(seat)) | played
            assert set(game.laid_away(seat)) <= set(game._s.crib)
        assert sum(c.value for _, c in game.count_cards) == game.count <= 31


# -- scores are the sum of their events -----------------------------------------------


def check_scores(game: Game) -> None:
    for event in game.events:
        if event.kind == "reveal":
            assert event.points == 0
        else:
            assert event.points == sum(i.points for i in event.items), event
        assert event.points >= 0
    for side in range(game.settings.sides):
        pegged = [e.points for e in game.events if e.side == side and e.kind != "reveal"]
        assert game.scores[side] == sum(pegged)


@EXAMPLES
@given(game_settings=SETTINGS, seed=SEEDS, choices=CHOICES)
def test_scores_are_the_sum_of_their_events(
    game_settings: Settings, seed: str, choices: int
) -> None:
    previous = (0,) * game_settings.sides
    for game, _ in steps(game_settings, seed, choices):
        check_scores(game)
        assert all(a >= b for a, b in zip(game.scores, previous, strict=True))
        previous = game.scores
        for event in game.events:
            if event.side is not None and event.seat is not None:
                assert game.side_of(event.seat) == event.side


# -- the game stops exactly at the target ---------------------------------------------


@EXAMPLES
@given(game_settings=SETTINGS, seed=SEEDS, choices=CHOICES)
def test_the_game_stops_exactly_when_the_target_is_reached(
    game_settings: Settings, seed: str, choices: int
) -> None:
    target = game_settings.target
    game = None
    for game, _ in steps(game_settings, seed, choices):
        if not game.is_over:
            assert max(game.scores) < target
    assert game is not None and game.outcome is not None
    outcome = game.outcome
    assert outcome.reason == "target"
    assert game.scores[outcome.winner] >= target
    assert [s for side, s in enumerate(game.scores) if side != outcome.winner] == [
        s for s in game.scores if s < target
    ]
    assert outcome.scores == game.scores
    assert game.events[-1].kind == "game_over" and game.events[-1].side == outcome.winner
    # The event just before the end is the one that crossed the target, for the winner.
    crossing = game.events[-2]
    assert crossing.side == outcome.winner and crossing.points > 0
    assert game.scores[outcome.winner] - crossing.points < target
    assert sum(1 for e in game.events if e.kind == "game_over") == 1
    assert game.phase == GAME_OVER and game.to_act() == () and game.legal_actions() == []


@EXAMPLES
@given(seed=SEEDS, choices=CHOICES, muggins=st.booleans())
def test_the_dealer_always_pegs_in_a_two_player_hand(
    seed: str, choices: int, muggins: bool
) -> None:
    # 001: "The dealer is sure to peg at least one point in every hand, for he will have a
    # Go on the last card if not earlier."
    game = Game(Settings(2, muggins=muggins), seed)
    rng = random.Random(choices)
    while not game.is_over:
        game.apply(choose(game, rng))
    dealers = {e.hand: e.seat for e in game.events if e.kind == "deal"}
    for hand, dealer in dealers.items():
        played_out = any(e.hand == hand and e.kind in ("show", "claim") for e in game.events)
        if played_out:
            assert any(
                e.hand == hand and e.kind == "count_end" and e.seat == dealer for e in game.events
            ), f"hand {hand}: the dealer ended no count"


# -- save, load, replay ---------------------------------------------------------------


@EXAMPLES
@given(game_settings=SETTINGS, seed=SEEDS, choices=CHOICES)
def test_archive_replays_to_the_same_state_at_every_step(
    game_settings: Settings, seed: str, choices: int
) -> None:
    live = [Game(game_settings, seed).state_hash()]
    game = None
    middle: dict[str, Any] | None = None
    for game, _ in steps(game_settings, seed, choices):
        live.append(game.state_hash())
        if middle is None and len(game.actions) == 40:
            middle = json.loads(json.dumps(to_archive(game)))
    assert game is not None
    archive = json.dumps(to_archive(game, names=["a", "b"]), ensure_ascii=False)
    replayed = list(replay_archive(archive))
    assert [g.state_hash() for g in replayed] == live
    assert replayed[-1].events == game.events
    loaded = load(archive)
    assert loaded.state_hash() == game.state_hash()
    assert loaded.outcome == game.outcome
    if middle is not None:
        assert load(middle).state_hash() == live[40]


# -- no view shows what its seat may not know -----------------------------------------


def cards_in(value: object) -> Iterator[Card]:
    """Every Card anywhere inside ``value`` (dataclasses, tuples, lists, dicts)."""
    if isinstance(value, Card):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from cards_in(getattr(value, f.name))
    elif isinstance(value, dict):
        for item in value.values():
            yield from cards_in(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from cards_in(item)


def card_strings_in(value: object) -> Iterator[Card]:
    """Every string inside JSON data that reads as a card."""
    if isinstance(value, str):
        try:
            yield parse_card(value)
        except EngineError:
            return
    elif isinstance(value, dict):
        for item in value.values():
            yield from card_strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from card_strings_in(item)


def hidden_from(game: Game, seat: int) -> set[Card]:
    """Cards of the current hand ``seat`` may not know now."""
    s = game._s
    hidden = set(s.pack)
    for other in range(game.players):
        if other != seat:
            hidden |= set(s.holding[other])
    crib_shown = False
    for event in reversed(game.events):
        if event.hand != s.hand_no:
            break
        if event.kind in ("show", "claim") and event.detail.startswith("crib"):
            crib_shown = True
    if not crib_shown:
        hidden |= set(s.crib) - set(s.laid_away[seat])
    # A hand or the crib being counted in a muggins game lies face up.
    return hidden - set(game.showing())


def check_view(game: Game, seat: int, since: int, never_seen: dict[int, set[Card]]) -> None:
    """The view of ``seat`` now, with the events from ``since`` (earlier ones were checked
    when they appeared; what a seat may know only grows, so they stay safe)."""
    view = player_view(game, seat, since)
    hidden = hidden_from(game, seat)

    def forbidden(event_hand: int) -> set[Card]:
        return hidden if event_hand == game.hand_no else never_seen[event_hand]

    board = dataclasses.replace(view, events=())
    assert not set(cards_in(board)) & hidden, f"seat {seat} sees {set(cards_in(board)) & hidden}"
    for event in view.events:
        if event.kind == "draw":
            continue  # the cut for the deal, from a pack of its own
        leaked = set(cards_in(event)) & forbidden(event.hand)
        assert not leaked, f"seat {seat} sees {leaked} in {event}"
    data = view.to_json()
    events_json = data.pop("events")
    assert not set(card_strings_in(data)) & hidden
    for event_json in events_json:
        if event_json["kind"] != "draw":
            assert not set(card_strings_in(event_json)) & forbidden(event_json["hand"])
    assert set(view.holding) == set(game.holding(seat))
    assert view.events == tuple(e for e in game.events[since:] if e.private_to in (None, seat))
    assert PlayerView.from_json(json.loads(json.dumps(view.to_json()))) == view


@EXAMPLES
@given(game_settings=SETTINGS, seed=SEEDS, choices=CHOICES)
def test_no_view_shows_another_players_cards(
    game_settings: Settings, seed: str, choices: int
) -> None:
    never_seen: dict[int, set[Card]] = {}
    game = Game(game_settings, seed)
    never_seen[game.hand_no] = set(game._s.pack)
    for seat in range(game.players):
        check_view(game, seat, 0, never_seen)
    seen = len(game.events)
    for game, _ in steps(game_settings, seed, choices):
        never_seen[game.hand_no] = set(game._s.pack)
        for seat in range(game.players):
            check_view(game, seat, seen, never_seen)
        seen = len(game.events)


# -- legal actions are exactly what apply accepts ---------------------------------------


def candidates(game: Game) -> list[Action]:
    out: list[Action] = []
    for seat in range(game.players):
        out += [Go(seat), Claim(seat, 0), Muggins(seat), Accept(seat)]
        out += [Play(seat, c) for c in game.holding(seat)]
    return out


@EXAMPLES
@given(game_settings=SETTINGS, seed=SEEDS, choices=CHOICES)
def test_legal_actions_are_exactly_what_apply_accepts(
    game_settings: Settings, seed: str, choices: int
) -> None:
    for game, _ in steps(game_settings, seed, choices):
        if game.is_over:
            break
        legal = game.legal_actions()
        forced = game.forced_action()
        if game.phase == PEGGING:
            assert (forced is not None) == (len(legal) == 1)
            assert forced is None or forced == legal[0]
            assert len(game.to_act()) == 1
        else:
            assert forced is None
        if game.phase == SHOW:
            assert game_settings.muggins  # without muggins the show never waits
        before = (game.state_hash(), len(game.events), len(game.actions))
        for action in candidates(game):
            if action in legal:
                game.copy().apply(action)
            else:
                try:
                    game.apply(action)
                except EngineError:
                    pass
                else:
                    raise AssertionError(f"{action} was accepted but is not legal")
        assert (game.state_hash(), len(game.events), len(game.actions)) == before
        assert set(legal) == set(game.legal_actions())


def test_events_are_frozen_values() -> None:
    event = Event("play", 1)
    try:
        event.points = 3  # type: ignore[misc]
    except dataclasses.FrozenInstanceError:
        return
    raise AssertionError("an Event could be changed")
