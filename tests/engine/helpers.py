"""Test helpers: stacking a deal, driving the play, and choosing actions at random.

``stack_deal`` lays out a pack so that the engine's own deal hands out the cards a
worked example needs; ``rigged`` makes the game use it by replacing the seeded shuffle
for chosen hands (the engine itself has no hook for this).  Such games do not replay
from their seed, so the replay tests never use them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence

import pytest

import engine.gamestate
from engine import (
    Accept,
    Action,
    Card,
    Claim,
    Discard,
    Event,
    Game,
    Go,
    Muggins,
    Play,
    Settings,
    full_deck,
    parse_card,
    parse_cards,
    score_show,
)
from engine.game import SHOW


def cards(text: str) -> list[Card]:
    return parse_cards(text)


def card(text: str) -> Card:
    return parse_card(text)


def stack_deal(
    players: int,
    dealer: int,
    hands: Mapping[int, str],
    starter: str,
    crib_card: str | None = None,
) -> list[Card]:
    """A 52-card pack that deals ``hands[seat]`` to each seat, one card at a time from
    the dealer's left, then (three players) ``crib_card`` to the crib, then the starter."""
    size = 6 if players == 2 else 5
    order = [(dealer + 1 + i) % players for i in range(players)]
    dealt = {seat: cards(hands[seat]) for seat in range(players)}
    assert all(len(h) == size for h in dealt.values()), "each hand needs the full deal"
    pack: list[Card] = []
    for round_no in range(size):
        for seat in order:
            pack.append(dealt[seat][round_no])
    if players == 3:
        assert crib_card is not None, "three players: one card goes to the crib"
        pack.append(card(crib_card))
    pack.append(card(starter))
    pack.extend(c for c in full_deck() if c not in pack)
    assert len(set(pack)) == 52, "a card is used twice in the stacked deal"
    return pack


def rigged(
    monkeypatch: pytest.MonkeyPatch,
    settings: Settings,
    packs: Mapping[int, list[Card]],
    seed: str = "rigged",
) -> Game:
    """A game whose hand ``h`` is dealt from ``packs[h]`` (other hands from the seed)."""
    original: Callable[..., list[Card]] = engine.gamestate.shuffled

    def shuffled(items: Sequence[Card], seed: str, label: str) -> list[Card]:
        if label.startswith("hand/") and int(label.split("/")[1]) in packs:
            return list(packs[int(label.split("/")[1])])
        return original(items, seed, label)

    monkeypatch.setattr(engine.gamestate, "shuffled", shuffled)
    return Game(settings, seed)


def discard_all(game: Game, discards: Mapping[int, str]) -> list[Event]:
    """Every seat lays away its cards (in seat order); returns the events."""
    events: list[Event] = []
    for seat in range(game.players):
        events += game.apply(Discard(seat, tuple(cards(discards[seat]))))
    return events


def peg(game: Game, seat: int, what: str) -> list[Event]:
    """Apply ``go`` or ``play <card>`` for ``seat``."""
    action: Action = Go(seat) if what == "go" else Play(seat, card(what))
    return game.apply(action)


def points_by_seat(events: Iterable[Event]) -> dict[int, int]:
    out: dict[int, int] = {}
    for event in events:
        if event.points and event.seat is not None and event.kind != "reveal":
            out[event.seat] = out.get(event.seat, 0) + event.points
    return out


def set_scores(game: Game, *scores: int) -> None:
    """Put the front pegs where a test needs them (a position reached earlier)."""
    assert len(scores) == game.settings.sides
    game._s.scores = list(scores)
    game._s.back_pegs = list(scores)


def shown_now(game: Game) -> tuple[Card, ...]:
    """Muggins games: the hand or crib being counted now."""
    entry = game.show_entry()
    assert entry is not None
    seat, what = entry
    return tuple(sorted(game._s.crib)) if what == "crib" else game.kept(seat)


def true_count(game: Game) -> int:
    entry = game.show_entry()
    assert entry is not None
    return sum(i.points for i in score_show(shown_now(game), game.starter, crib=entry[1] == "crib"))


def choose(game: Game, rng: random.Random) -> Action:
    """A random legal action, with claims drawn exact, short or over in fair measure."""
    if game.phase == SHOW and not game.awaiting_muggins:
        seat = game.to_act()[0]
        actual = true_count(game)
        roll = rng.random()
        if roll < 0.5 or (roll < 0.75 and actual == 0) or (roll >= 0.75 and actual == 29):
            return Claim(seat, actual)
        if roll < 0.75:
            return Claim(seat, rng.randrange(actual))
        return Claim(seat, rng.randint(actual + 1, 29))
    if game.awaiting_muggins:
        seat = rng.choice(game.to_act())
        return Muggins(seat) if rng.random() < 0.5 else Accept(seat)
    return rng.choice(game.legal_actions())


def find_seed(predicate: Callable[[str], bool], prefix: str = "seed-", limit: int = 20000) -> str:
    """The first seed ``prefix0``, ``prefix1``, … that satisfies ``predicate``."""
    for number in range(limit):
        seed = f"{prefix}{number}"
        if predicate(seed):
            return seed
    raise AssertionError(f"no seed among {limit} satisfies the predicate")


def play_out(game: Game, rng: random.Random | None = None, stop: int | None = None) -> Game:
    """Apply random legal actions (the first legal one without ``rng``) until the game is
    over, or until hand ``stop`` begins."""
    while not game.is_over and (stop is None or game.hand_no < stop):
        game.apply(choose(game, rng) if rng else first_action(game))
    return game


def first_action(game: Game) -> Action:
    if game.phase == SHOW and not game.awaiting_muggins:
        return Claim(game.to_act()[0], true_count(game))
    return game.legal_actions()[0]
