"""The hard player at 3 and 4 players: the multi-seat pegging search, its endgame,
the sampled hands; legal, deterministic and blind to hidden cards in whole games."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from engine import Play, new_game, parse_cards, player_view
from engine.computer import choose_action, decide
from engine.game import PEGGING
from engine.strategy import hard, multi, pegsearch
from engine.strategy.hard import common, discard, pegmany

from .test_hard import _play, _scrambled

W3 = multi.weights_for(3)
W4 = multi.weights_for(4)


# -- the search on hand-checked positions ---------------------------------------------


def test_weights() -> None:
    assert W3 == (1.0, -multi.OPP_WEIGHT, -multi.OPP_WEIGHT)
    assert W4 == (1.0, -1.0, 1.0, -1.0)


def test_opponent_fifteen_and_last_card() -> None:
    # I lead a 5; the next seat's 10 makes fifteen (2) and the last card (1)
    assert multi.solve(((), (10,), ()), (5,), 5, 1, 0, W3) == pytest.approx(-3 * multi.OPP_WEIGHT)
    # at 4 players the seat across is my partner: its points are mine
    assert multi.solve(((), (), (10,), ()), (5,), 5, 1, 0, W4) == 3.0


def test_turn_skips_a_seat_that_cannot_play_and_the_go() -> None:
    # count 25: seat 1 holds a king (cannot play), seat 2 plays its 6 for 31 (2, no go)
    value = multi.solve(((), (13,), (6,)), (10, 5, 10), 25, 1, 0, W3)
    # then seat 2 (last to play) ... the next count: seat 1 (left of seat 2... seat 0 empty)
    # leads its king alone and takes the last card: 2 + 1 for the opponents
    assert value == pytest.approx(-3 * multi.OPP_WEIGHT)
    # the go goes to the last player when nobody can play: I hold nothing, seat 1 a king
    assert multi.solve(((), (13,), ()), (10, 10), 29, 1, 0, W3) == pytest.approx(
        1 + -multi.OPP_WEIGHT * 1
    )


def test_i_take_the_best_line() -> None:
    # count 10 (a ten), I hold 5 and 9: the 5 makes fifteen; the other seats hold nothing
    values = multi.card_values((5, 9), [(((), ()), 1.0)], (10,), 10, W3)
    # 5: fifteen (2), then my 9 alone to 24 and the last card (1)
    assert values[5] == 3.0
    # 9: 19, then my 5 to 24, last card 1
    assert values[9] == 1.0


def _reference_solve(
    hands: multi.Hands,
    seq: tuple[int, ...],
    count: int,
    turn: int,
    last: int,
    weights: tuple[float, ...],
    depth: int,
) -> float:
    """``multi.solve`` written plainly: one recursive call a card, no memo."""
    n = len(hands)
    room = 31 - count
    seats = [(turn + k) % n for k in range(n)]
    mover = next((s for s in seats if hands[s] and min(hands[s][0], 10) <= room), -1)
    if mover < 0:
        point = weights[last] if last >= 0 and count != 31 else 0.0
        if not any(hands):
            return point
        nxt = next(s for s in ((last + k) % n for k in range(1, n + 1)) if hands[s])
        return point + _reference_solve(hands, (), 0, nxt, -1, weights, depth)

    def after(r: int, d: int) -> float:
        pts, new_seq = pegsearch.step(seq, r, count)
        rest = list(hands[mover])
        rest.remove(r)
        new = (*hands[:mover], tuple(rest), *hands[mover + 1 :])
        return weights[mover] * pts + _reference_solve(
            new, new_seq, count + min(r, 10), (mover + 1) % n, mover, weights, d
        )

    if mover == 0 and depth > 0:
        return max(after(r, depth - 1) for r in set(hands[0]) if count + min(r, 10) <= 31)
    holder = next(s for s in ((mover + k) % n for k in range(1, n + 1)) if hands[s])
    return after(multi.model_play(hands[mover], seq, count, len(hands[holder])), depth)


@pytest.mark.parametrize("players", [3, 4])
def test_solve_is_the_plain_recursion(players: int) -> None:
    """The loop over the modelled seats' plays and the memo at my turns only change
    no value: random deals, whole hands and part-played counts, every depth."""
    rng = random.Random(players)
    weights = multi.weights_for(players)
    for trial in range(120):
        cards = rng.sample(range(52), 4 * players)
        hands = [
            tuple(sorted(c // 4 + 1 for c in cards[4 * s : 4 * s + 4])) for s in range(players)
        ]
        seq: tuple[int, ...] = ()
        count, turn, last = 0, rng.randrange(players), -1
        for _ in range(rng.randrange(4)):  # a few plays in, with the model's cards
            room = 31 - count
            if not hands[turn] or min(hands[turn][0], 10) > room:
                break
            r = multi.model_play(hands[turn], seq, count, 4)
            rest = list(hands[turn])
            rest.remove(r)
            hands[turn] = tuple(rest)
            _, seq = pegsearch.step(seq, r, count)
            count += min(r, 10)
            last, turn = turn, (turn + 1) % players
        for depth in (0, 1, 99):
            multi.forget()
            got = multi.solve(tuple(hands), seq, count, turn, last, weights, depth)
            want = _reference_solve(tuple(hands), seq, count, turn, last, weights, depth)
            assert got == want, (trial, hands, seq, count, turn, last, depth)


def test_four_players_sample_more_deals_as_the_cards_run_out() -> None:
    game = new_game(4, seed="four-samples")
    rng = random.Random(2)
    seen: dict[int, int] = {}
    while game.hand_no == 1:
        seat = game.to_act()[0]
        view = player_view(game, seat)
        if game.phase == PEGGING:
            left = sum(view.cards_left)
            seen[left] = pegmany.samples(view)
        game.apply(choose_action(game, seat, rng, "medium"))
    assert seen[16] == pegmany.FOUR_SAMPLES[16]
    assert min(seen) <= 8 and seen[min(seen)] == pegmany.FOUR_FEW_SAMPLES
    by_left = [seen[k] for k in sorted(seen, reverse=True)]
    assert by_left == sorted(by_left)
    three = new_game(3, seed="three-samples")
    view = player_view(three, 0)
    assert pegmany.samples(view) == pegmany.MULTI_LEAD_SAMPLES


def test_the_model_ignores_hidden_hands_and_leads_low() -> None:
    # a lead: nothing scores, ties broken as medium does (a four or lower, not a five)
    assert multi.model_play((3, 5, 10, 13), (), 0, 4) == 3
    # fifteen on the board
    assert multi.model_play((2, 5, 9), (10,), 10, 4) == 5


def test_sampled_hands_respect_counts_gos_and_seed() -> None:
    unseen = [c for c in range(52) if c // 4 + 1 not in (5,)]
    deals = multi.sample_hands(unseen, [3, 2], [8, 0], [[0], [1, 2]], 40, random.Random(3))
    again = multi.sample_hands(unseen, [3, 2], [8, 0], [[0], [1, 2]], 40, random.Random(3))
    assert deals == again
    for (first, second), w in deals:
        assert len(first) == 3 and len(second) == 2 and w > 0
        assert all(min(r, 10) >= 8 for r in first)
        assert 5 not in first and 5 not in second
    assert sum(w for _, w in deals) > 0


# -- the end of the game ----------------------------------------------------------------


def test_race_is_a_distribution_favouring_the_leader() -> None:
    p = multi.race([10, 20, 30], 3)
    assert sum(p) == pytest.approx(1.0)
    assert p[0] > p[1] > p[2]
    assert multi.race([15, 15], 4) == pytest.approx([0.5, 0.5])


def test_after_pegging_counts_in_order() -> None:
    # 3 players, seat 2 deals: seat 0 counts first and its 8 reaches its need of 8,
    # before seat 1 (also enough) would
    assert multi.after_pegging([8, 5, 50], [8, 20, 0], [0, 1, 2], 2, 0, 3) == 1.0
    # seat 1 deals: seat 2 counts first and goes out
    assert multi.after_pegging([8, 50, 3], [8, 0, 4], [0, 1, 2], 1, 0, 3) == 0.0
    # 4 players, my partner (seat 2) goes out in its show
    assert multi.after_pegging([6, 40], [0, 0, 6, 0], [0, 1, 0, 1], 3, 0, 4) == 1.0
    # nobody goes out, the dealer's crib may: strictly between
    p = multi.after_pegging([40, 30, 9], [0, 0, 0], [0, 1, 2], 2, 0, 3)
    assert 0.0 < p < 0.5


def test_win_search_holds_back_the_card_that_lets_the_next_seat_out() -> None:
    # count 2; I hold 3 and 7; seat 1 holds a 6 and needs 2 points to win
    search = multi.WinSearch([50, 2, 50], [0, 1, 2], lambda gains: 0.5)
    hands = ((3, 7), (6,), ())
    assert search.after(hands, (2,), 2, 0, 7, (0, 0, 0)) == 0.0  # 9, then their 6: fifteen
    assert search.after(hands, (2,), 2, 0, 3, (0, 0, 0)) == 0.5  # nobody goes out
    # the points that go out first win on the spot
    search = multi.WinSearch([2, 2, 50], [0, 1, 2], lambda gains: 0.5)
    assert search.after(((5, 9), (5,), ()), (10,), 10, 0, 5, (0, 0, 0)) == 1.0
    # my partner going out is my win (4 players: seats 0 and 2 one side)
    search = multi.WinSearch([2, 50], [0, 1, 0, 1], lambda gains: 0.5)
    assert search.after(((9,), (), (5,), ()), (), 0, 0, 9, (0, 0)) == 0.5
    assert search.after(((9,), (), (6,), ()), (), 0, 0, 9, (0, 0)) == 1.0


# -- whole games and the view ---------------------------------------------------------


@pytest.mark.parametrize("players", [3, 4])
def test_hard_pegs_by_the_multi_search(players: int) -> None:
    game = new_game(players, seed=f"multi-peg-{players}")
    rng = random.Random(1)
    searched = 0
    while not game.is_over and searched < 20:
        seat = game.to_act()[0]
        view = player_view(game, seat)
        if game.phase == PEGGING and len(view.playable) > 1:
            a = hard.hard_action(view, random.Random(searched))
            b = pegmany.play(view, random.Random(searched))
            assert b in view.legal
            if players in pegmany.MULTI_PEG:
                assert a == b
            searched += 1
        game.apply(choose_action(game, seat, rng, "medium"))
    assert searched == 20


@pytest.mark.parametrize("players", [3, 4])
def test_same_seed_same_game_to_121(players: int) -> None:
    def run() -> list[object]:
        game = new_game(players, seed=f"multi-repeat-{players}")
        levels = ["hard" if s % 2 == 0 else "medium" for s in range(players)]
        actions = _play(game, levels, random.Random(11))
        assert game.outcome is not None
        return list(actions)

    assert run() == run()


@pytest.mark.parametrize("players", [3, 4])
def test_late_game_decisions_ignore_hidden_cards(
    players: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The endgame search (near the target) sees only the view."""
    monkeypatch.setattr(pegmany, "MULTI_PEG", (3, 4))
    game = new_game(players, seed=f"multi-late-{players}", target=61)
    drive, shuffler = random.Random(5), random.Random(6)
    late = 0
    while not game.is_over:
        seat = game.to_act()[0]
        if game.phase == PEGGING and max(game.scores) >= 61 - pegmany.MULTI_ENDGAME:
            late += 1
            twin = _scrambled(game, seat, shuffler)
            assert player_view(twin, seat) == player_view(game, seat)
            a = choose_action(game, seat, random.Random(late), "hard")
            b = choose_action(twin, seat, random.Random(late), "hard")
            assert a == b
        game.apply(choose_action(game, seat, drive, "hard"))
    assert late >= 5


def test_pegs_out_near_the_end() -> None:
    """3 players, the player on my left and I both need 2 of 61: the fifteen wins on
    the spot; the 9 would let a pair of nines win for them."""
    game = new_game(3, seed="multi-out", first_dealer=2, target=61)
    view = player_view(game, 0)
    mine = tuple(sorted(parse_cards("5h 9c")))
    ten = parse_cards("ts")[0]
    scores = tuple(replace(sc, front=50 if 2 in sc.seats else 59, back=0) for sc in view.scores)
    view = replace(
        view,
        phase=PEGGING,
        scores=scores,
        holding=mine,
        kept=(*mine, *parse_cards("kd qd")),
        laid_away=(),
        starter=parse_cards("ks")[0],
        count=10,
        count_cards=((2, ten),),
        plays=((2, ten, 10),),
        cards_left=(2, 4, 3),
        legal=tuple(Play(0, c) for c in mine),
        events=(),
    )
    assert common.near_end(view, pegmany.MULTI_ENDGAME)
    deals = [(((2, 3, 9, 9), (6, 7, 8)), 1.0)]
    chances = pegmany.win_values(view, (5, 9), deals, (10,))
    assert chances == {5: 1.0, 9: 0.0}
    assert decide(view, random.Random(0), "hard") == Play(0, parse_cards("5h")[0])


def test_keep_peg_values_same_deals_for_every_discard() -> None:
    hand = [16, 17, 40, 44, 48]  # 5c 5d Jc Qc Kc
    unseen = [c for c in range(52) if c not in hand]
    a = multi.keep_peg_values(hand, 1, unseen, 12, random.Random(2), W3)
    b = multi.keep_peg_values(hand, 1, unseen, 12, random.Random(2), W3)
    assert a == b and set(a) == set(hand)
    # the two fives are the same ranks kept: the same value on the same deals
    assert a[16] == a[17]


def test_discard_at_three_players_is_legal_with_the_keep_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(discard, "MULTI_DISCARD_PEG", 0.5)
    game = new_game(3, seed="multi-keep")
    for seat in range(3):
        view = player_view(game, seat)
        action = hard.hard_action(view, random.Random(seat))
        assert action in view.legal
