"""engine.analysis: advice from one player's view — every discard with its expected
hand, crib and play points; every card to play with what the next opponent may answer;
a discard beside the best one."""

from __future__ import annotations

from dataclasses import replace
from math import comb

import pytest

from engine import Card, Play, PlayerView, new_game, parse_cards, player_view, show_points
from engine.analysis import (
    PEG_FIVE_PONE,
    PEG_LOW,
    PEG_NEIGHBOURS,
    PEG_PAIR,
    crib_points,
    discard_analysis,
    discard_review,
    pegging_estimate,
    play_analysis,
)
from engine.cards import full_deck
from engine.game import PEGGING
from engine.players import crib_value
from engine.scoring import FIFTEEN, PAIR_ROYAL, THIRTY_ONE


def card(text: str) -> Card:
    return parse_cards(text)[0]


def discard_view(players: int = 2, dealer: bool = True, holding: str = "") -> PlayerView:
    game = new_game(players, seed="analysis", first_dealer=0)
    view = player_view(game, 0 if dealer else 1)
    if holding:
        view = replace(view, holding=tuple(sorted(parse_cards(holding))))
    return view


def pegging_view(holding: str, count_cards: list[tuple[int, str]], left: int = 4) -> PlayerView:
    """Seat 0 (the pone) to play ``holding`` on the count ``count_cards``; the starter K♠."""
    view = player_view(new_game(2, seed="analysis", first_dealer=1), 0)
    mine = tuple(sorted(parse_cards(holding)))
    played = [(seat, parse_cards(c)[0]) for seat, c in count_cards]
    count, plays = 0, []
    for seat, card in played:
        count += card.value
        plays.append((seat, card, count))
    return replace(
        view,
        phase=PEGGING,
        holding=mine,
        kept=mine,
        laid_away=(),
        starter=parse_cards("ks")[0],
        count=count,
        count_cards=tuple(played),
        plays=tuple(plays),
        cards_left=(len(mine), left),
        legal=tuple(Play(0, c) for c in mine if count + c.value <= 31),
        my_turn=True,
        events=(),
    )


# -- discards -----------------------------------------------------------------------


@pytest.mark.parametrize(("players", "ways"), [(2, 15), (3, 5), (4, 5)])
def test_every_discard_is_listed_best_first(players: int, ways: int) -> None:
    analysis = discard_analysis(discard_view(players))
    assert len(analysis.options) == ways
    totals = [o.total for o in analysis.options]
    assert totals == sorted(totals, reverse=True)
    assert analysis.best is analysis.options[0]


@pytest.mark.parametrize("dealer", [True, False])
def test_hand_is_exact_over_unseen_starters_and_crib_signed(dealer: bool) -> None:
    view = discard_view(dealer=dealer, holding="5c 5d jh js ac 9d")
    analysis = discard_analysis(view)
    assert analysis.own_crib is dealer
    unseen = [c for c in full_deck() if c not in view.holding]
    assert len(unseen) == 46
    for option in analysis.options:
        exact = sum(show_points(option.kept, s) for s in unseen) / 46
        assert option.hand == pytest.approx(exact)
        value = crib_points(option.laid_away, 2, dealer)
        assert option.crib == pytest.approx(value if dealer else -value)
        # The realistic tables: within a point of the random-crib ones.
        assert abs(value - crib_value(option.laid_away, 2)) < 1.0
        assert option.total == pytest.approx(option.hand + option.crib + option.pegging)
    # The classic: keep the fives and the jacks, lay away the ace and the nine.
    assert set(analysis.best.laid_away) == set(parse_cards("ac 9d"))


def test_the_pegging_estimate_is_its_documented_sum() -> None:
    kept = parse_cards("5c 5d 6h 2s")
    # A pair (5-5), neighbours 5-6 twice, one low card (2), two fives for the pone.
    assert pegging_estimate(kept, dealer=True) == pytest.approx(
        PEG_PAIR + 2 * PEG_NEIGHBOURS + PEG_LOW
    )
    assert pegging_estimate(kept, dealer=False) == pytest.approx(
        PEG_PAIR + 2 * PEG_NEIGHBOURS + PEG_LOW + 2 * PEG_FIVE_PONE
    )


def test_nothing_to_lay_away_is_an_error() -> None:
    with pytest.raises(ValueError, match="nothing to lay away"):
        discard_analysis(pegging_view("5c", []))


def test_a_review_gives_the_points_given_away() -> None:
    view = discard_view(dealer=False, holding="5c 5d jh js ac 9d")
    best = discard_review(view, parse_cards("ac 9d"))
    assert best.rank == 1 and best.given_away == 0
    worst_option = best.analysis.options[-1]
    worst = discard_review(view, worst_option.laid_away)
    assert worst.rank == 15
    assert worst.given_away == pytest.approx(best.analysis.best.total - worst_option.total)
    with pytest.raises(KeyError):
        discard_review(view, parse_cards("2c 3c"))


# -- the play -----------------------------------------------------------------------


def _chance(pool: int, of_rank: int, holds: int) -> float:
    return 1 - comb(pool - of_rank, holds) / comb(pool, holds)


def test_a_five_led_leaves_fifteen_two_for_a_ten_card() -> None:
    view = pegging_view("5h 4c 9d 8s", [])
    option = next(o for o in play_analysis(view).options if o.card == card("5h"))
    ten = next(t for t in option.threats if FIFTEEN in t.kinds)
    assert ten.ranks == (10, 11, 12, 13) and ten.points == 2 and ten.ten_cards
    # Unseen: 52 less my 4 cards and the starter (a king): 15 ten cards among 47.
    assert ten.chance == pytest.approx(_chance(47, 15, 4))


def test_leaving_twenty_one_leaves_thirty_one_for_a_ten_card() -> None:
    view = pegging_view("10h 2c", [(1, "9s"), (0, "2d")])
    option = next(o for o in play_analysis(view).options if o.card == card("10h"))
    assert option.count == 21
    threat = next(t for t in option.threats if t.kinds == (THIRTY_ONE,))
    assert threat.ranks == (11, 12, 13)  # a ten would pair the 10 too: scored apart
    assert threat.points == 2


def test_pairing_leaves_a_pair_royal() -> None:
    view = pegging_view("7h 2c", [(1, "7s")])
    option = next(o for o in play_analysis(view).options if o.card == card("7h"))
    assert option.points == 2
    royal = next(t for t in option.threats if PAIR_ROYAL in t.kinds)
    assert royal.ranks == (7,) and royal.points == 6
    # Unseen: 52 less 7♥ 2♣ held, the starter and 7♠ played; two sevens among them.
    assert royal.chance == pytest.approx(_chance(48, 2, 4))


def test_the_suggested_card_comes_first_and_thirty_one_has_no_threat() -> None:
    view = pegging_view("10h 2c", [(1, "10s"), (0, "jd")])
    analysis = play_analysis(view, card("2c"))
    assert analysis.best.card == card("2c")
    ten = next(o for o in analysis.options if o.card == card("10h"))
    assert ten.count == 30 and ten.points == 0
    assert play_analysis(view).best.card in (card("10h"), card("2c"))
    done = next(
        o for o in play_analysis(pegging_view("ah", [(1, "10s"), (0, "kd"), (1, "qc")])).options
    )
    assert done.count == 31 and done.threats == () and THIRTY_ONE in done.kinds


def test_no_card_to_play_is_an_error() -> None:
    with pytest.raises(ValueError, match="no card to play"):
        play_analysis(discard_view())
