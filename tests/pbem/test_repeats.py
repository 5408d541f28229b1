"""A move sent again after it was made: `already_done` recognises it from the game's moves."""

from __future__ import annotations

import random

from engine import DISCARD, PEGGING, Claim, Discard, Game, Go, Play, computer, new_game
from pbem.commands import Command, parse_line
from pbem.repeats import already_done


def cmd(line: str) -> Command:
    parsed = parse_line(line)
    assert parsed is not None, line
    return parsed


def never_auto(seq: int) -> bool | None:
    return False


def play_forward(game: Game, stop: object) -> None:
    """Forced moves as the service makes them, random choices otherwise, until ``stop``."""
    rng = random.Random(3)
    for _ in range(400):
        while not game.is_over and (forced := game.forced_action()) is not None:
            game.apply(forced)
        if stop(game):  # type: ignore[operator]
            return
        seat = game.to_act()[0]
        game.apply(computer.choose_action(game, seat, rng))
    raise AssertionError("never reached")


def both_discarded() -> tuple[Game, tuple[Discard, Discard]]:
    game = new_game(2, seed="repeats")
    discards = []
    for seat in (0, 1):
        cards = tuple(sorted(game.holding(seat))[:2])
        discards.append(Discard(seat, cards))
        game.apply(discards[-1])
    return game, (discards[0], discards[1])


def test_the_same_discard_again_is_already_done() -> None:
    game, (mine, _) = both_discarded()
    words = " ".join(c.ascii.lower() for c in mine.cards)
    told = already_done(game, 0, cmd(f"discard {words}"), never_auto)
    assert told == f"already done: you laid away {mine.cards[0]} {mine.cards[1]}."
    # Bare cards, in either order, and by rank when that is what was written.
    reverse = " ".join(c.ascii for c in reversed(mine.cards))
    assert already_done(game, 0, cmd(reverse), never_auto) == told
    # By rank: "a" names the ace laid away, but Alice still holds a six (6♠), so "throw a 6"
    # is a move she could mean now, not a repeat.
    assert [c.label for c in mine.cards] == ["A", "6"] and "6♠" in map(str, game.holding(0))
    assert already_done(game, 0, cmd("throw a 6"), never_auto) is None
    assert already_done(game, 0, cmd(f"throw an ace and the {mine.cards[1]}"), never_auto) == told


def test_a_discard_of_other_cards_is_not_already_done() -> None:
    game, (mine, theirs) = both_discarded()
    # Bob's cards: Alice never laid them away.
    words = " ".join(c.ascii for c in theirs.cards)
    assert already_done(game, 0, cmd(f"discard {words}"), never_auto) is None
    # One card the same, one still held.
    held = game.holding(0)[0]
    mixed = f"discard {mine.cards[0].ascii} {held.ascii}"
    assert already_done(game, 0, cmd(mixed), never_auto) is None
    # Before anyone moved there is nothing to repeat.
    fresh = new_game(2, seed="repeats")
    cards = " ".join(c.ascii for c in fresh.holding(0)[:2])
    assert already_done(fresh, 0, cmd(f"discard {cards}"), never_auto) is None


def test_a_card_played_again_by_card_or_by_rank() -> None:
    game, _ = both_discarded()
    assert game.phase == PEGGING
    seat = game.to_act()[0]
    card = next(
        c
        for c in game.holding(seat)
        if not any(o.rank == c.rank for o in game.holding(seat) if o != c)
    )
    game.apply(Play(seat, card))
    assert already_done(game, seat, cmd(f"play {card.ascii}"), never_auto) == (
        f"already done: you played {card}."
    )
    assert already_done(game, seat, cmd(card.ascii), never_auto) == (
        f"already done: you played {card}."
    )
    rank = card.label.lower()
    assert already_done(game, seat, cmd(f"play {rank}"), never_auto) == (
        f"already done: you played {card}."
    )
    # The other player never played it.
    assert already_done(game, 1 - seat, cmd(f"play {card.ascii}"), never_auto) is None


def test_a_forced_card_was_played_for_you() -> None:
    game = new_game(2, seed="forced")

    def forced_play_just_made(g: Game) -> bool:
        if not g.actions or not isinstance(g.actions[-1], Play):
            return False
        before = Game(g.settings, g.seed)
        for action in g.actions[:-1]:
            before.apply(action)
        return before.forced_action() == g.actions[-1]

    # Stop right after a forced play (checked before the next forced move is made).
    rng = random.Random(3)
    for _ in range(400):
        if game.is_over:
            raise AssertionError("no forced play")
        forced = game.forced_action()
        if forced is not None:
            game.apply(forced)
            if forced_play_just_made(game):
                break
            continue
        seat = game.to_act()[0]
        game.apply(computer.choose_action(game, seat, rng))
    last = game.actions[-1]
    assert isinstance(last, Play)
    told = already_done(game, last.seat, cmd(f"play {last.card.ascii}"), never_auto)
    assert told == (
        f"that card was already played for you: {last.card} was the only card you could "
        "play, so it went automatically."
    )


def test_a_forced_go_was_said_for_you_unless_you_are_to_move() -> None:
    game = new_game(2, seed="forced")

    def forced_go_then_waiting(g: Game) -> bool:
        if g.phase != PEGGING or g.is_over:
            return False
        for seat in range(2):
            mine = [a for a in g.actions if a.seat == seat]
            if mine and isinstance(mine[-1], Go) and seat not in g.to_act():
                return True
        return False

    play_forward(game, forced_go_then_waiting)
    seat = next(
        s
        for s in range(2)
        if isinstance([a for a in game.actions if a.seat == s][-1], Go) and s not in game.to_act()
    )
    assert already_done(game, seat, cmd("go"), never_auto) == (
        "a go was already said for you: no card of yours fitted under 31."
    )
    # The seat to move is told what to do instead (a plain refusal).
    mover = game.to_act()[0]
    assert already_done(game, mover, cmd("go"), never_auto) is None


def test_a_move_the_computer_made_when_time_ran_out() -> None:
    game, (mine, _) = both_discarded()
    words = " ".join(c.ascii for c in mine.cards)
    told = already_done(game, 0, cmd(f"discard {words}"), lambda seq: seq == 0)
    assert told == f"that move was already made for you when your time ran out: {mine}."


def test_only_the_last_two_hands_count() -> None:
    game = new_game(2, seed="repeats-old", target=121)
    first = None

    def third_hand(g: Game) -> bool:
        return g.hand_no >= 3 and g.phase == DISCARD

    rng = random.Random(5)
    while not third_hand(game):
        while not game.is_over and (forced := game.forced_action()) is not None:
            game.apply(forced)
        if third_hand(game):
            break
        seat = game.to_act()[0]
        action = computer.choose_action(game, seat, rng)
        game.apply(action)
        if first is None and isinstance(action, Discard) and action.seat == 0:
            first = action
    assert first is not None
    # Hand 3 is being dealt and seat 0 has not laid away yet: its discards of hands 1 and 2
    # are the window, so hand 1's discard still counts; once it lays away in hand 3, not.
    words = " ".join(c.ascii for c in first.cards)
    assert not set(game.holding(0)) & set(first.cards)  # (the seed deals none of them again)
    assert already_done(game, 0, cmd(f"discard {words}"), never_auto) is not None
    game.apply(computer.choose_action(game, 0, rng))
    assert already_done(game, 0, cmd(f"discard {words}"), never_auto) is None


def test_a_count_sent_again_in_a_muggins_game() -> None:
    game = new_game(2, seed="repeats-muggins", target=61, muggins=True)

    def claimed_and_waiting(g: Game) -> bool:
        last = g.actions[-1] if g.actions else None
        return isinstance(last, Claim) and last.seat not in g.to_act()

    play_forward(game, claimed_and_waiting)
    claim = game.actions[-1]
    assert isinstance(claim, Claim)
    told = already_done(game, claim.seat, cmd(f"count {claim.points}"), never_auto)
    assert told == f"already done: you counted {claim.points}."
    # Another number is a new claim, refused for its own reason.
    other = cmd(f"count {claim.points + 1}")
    assert already_done(game, claim.seat, other, never_auto) is None
