"""The hard player: legal, deterministic, blind to hidden cards; its tables and solver."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from engine import Action, Discard, Game, Play, PlayerView, new_game, parse_cards, player_view
from engine.cards import Card, Suit
from engine.computer import choose_action, decide
from engine.game import PEGGING
from engine.players import CRIB_PAIR_VALUE, exact_crib_mean
from engine.scoring import show_points
from engine.strategy import cribdata, cribtables, pegsearch, winprob
from engine.strategy.handvalue import mean_show, show_index
from engine.strategy.hard import discard_values, peg_estimate

# -- playing whole games -------------------------------------------------------------


def _play(game: Game, levels: list[str], rng: random.Random) -> list[Action]:
    while not game.is_over:
        seat = game.to_act()[0]
        action = choose_action(game, seat, rng, levels[seat])
        assert action.seat == seat
        assert action in game.legal_actions(seat), (action, game.phase)
        game.apply(action)
    return game.actions


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("muggins", [False, True])
def test_legal_in_whole_games(players: int, muggins: bool) -> None:
    for i in range(3):
        levels = ["hard" if (seat + i) % 2 == 0 else "medium" for seat in range(players)]
        game = new_game(players, seed=f"hard-{players}-{muggins}-{i}", muggins=muggins, target=61)
        _play(game, levels, random.Random(i))
        assert game.outcome is not None


@pytest.mark.parametrize("players", [2, 3, 4])
def test_same_rng_same_game(players: int) -> None:
    def run() -> list[Action]:
        game = new_game(players, seed=f"hard-repeat-{players}", muggins=True, target=61)
        return _play(game, ["hard"] * players, random.Random(7))

    assert run() == run()


def test_hard_to_hard_to_121_ends() -> None:
    game = new_game(2, seed="hard-121")
    _play(game, ["hard", "hard"], random.Random(1))
    assert game.outcome is not None and max(game.outcome.scores) >= 121


# -- never reads hidden information ---------------------------------------------------


def _scrambled(game: Game, seat: int, rng: random.Random) -> Game:
    """A copy in which every card ``seat`` cannot see is dealt differently."""
    other = game.copy()
    s = other._s
    mine = set(s.laid_away[seat])
    others = [x for x in range(game.players) if x != seat]
    shown = set(game.showing())
    crib_slots = [i for i, c in enumerate(s.crib) if c not in mine and c not in shown]
    hidden = [c for x in others for c in s.holding[x]] + [s.crib[i] for i in crib_slots]
    hidden += s.pack
    rng.shuffle(hidden)
    pos = 0
    for x in others:
        played = [c for who, c, _ in s.plays if who == x]
        k = len(s.holding[x])
        s.holding[x] = hidden[pos : pos + k]
        pos += k
        if s.kept[x]:
            s.kept[x] = tuple(sorted([*played, *s.holding[x]]))
    for i in crib_slots:
        s.crib[i] = hidden[pos]
        pos += 1
    s.pack = hidden[pos:]
    return other


@pytest.mark.parametrize(("players", "muggins"), [(2, False), (2, True), (3, False), (4, True)])
def test_same_view_same_decision(players: int, muggins: bool) -> None:
    """Two games differing only in cards the seat cannot see: the same decision."""
    game = new_game(players, seed=f"hard-hidden-{players}", muggins=muggins)
    drive = random.Random(3)
    shuffler = random.Random(4)
    decisions = changed = 0
    while not game.is_over and decisions < 120:
        seat = game.to_act()[0]
        twin = _scrambled(game, seat, shuffler)
        changed += twin.state_json() != game.state_json()
        assert player_view(twin, seat) == player_view(game, seat)
        mine = choose_action(game, seat, random.Random(decisions), "hard")
        theirs = choose_action(twin, seat, random.Random(decisions), "hard")
        assert mine == theirs, (game.phase, mine, theirs)
        decisions += 1
        game.apply(choose_action(game, seat, drive, "hard"))
    assert decisions >= 60
    assert changed >= 0.8 * decisions


def test_late_game_decisions_ignore_hidden_cards() -> None:
    """The win-probability searches (near the target) see only the view too."""
    game = new_game(2, seed="hard-late", target=61)
    drive, shuffler = random.Random(5), random.Random(6)
    late = 0
    while not game.is_over:
        seat = game.to_act()[0]
        if max(game.scores) >= 30:
            late += 1
            twin = _scrambled(game, seat, shuffler)
            a = choose_action(game, seat, random.Random(late), "hard")
            b = choose_action(twin, seat, random.Random(late), "hard")
            assert a == b
        game.apply(choose_action(game, seat, drive, "hard"))
    assert late >= 10


# -- discarding ----------------------------------------------------------------------


def _discard_view(dealer: bool, holding: str, scores: tuple[int, int] = (0, 0)) -> PlayerView:
    game = new_game(2, seed="hard-discard", first_dealer=0)
    view = player_view(game, 0 if dealer else 1)
    board = tuple(
        replace(s, front=scores[0] if s.side == view.my_side else scores[1]) for s in view.scores
    )
    return replace(view, holding=tuple(sorted(parse_cards(holding))), scores=board)


def _best_discard(view: PlayerView) -> set[Card]:
    action = decide(view, random.Random(0), "hard")
    assert isinstance(action, Discard)
    return set(action.cards)


def test_dealer_throws_fives_to_own_crib_pone_keeps_them() -> None:
    assert _best_discard(_discard_view(True, "5c 5d 2h 3s 4c 9d")) == set(parse_cards("5c 5d"))
    assert all(c.rank != 5 for c in _best_discard(_discard_view(False, "5c 5d 2h 3s 4c 9d")))


def test_discard_value_is_hand_plus_or_minus_table() -> None:
    holding = "ac 2c 3c 4c 5c 6c"
    hand = [c.index for c in parse_cards(holding)]
    kept = [c.index for c in parse_cards("ac 4c 5c 6c")]
    for dealer, table, sign in ((True, cribdata.OWN_PAIR, 1), (False, cribdata.OPP_PAIR, -1)):
        values = {a.cards: v for v, a in discard_values(_discard_view(dealer, holding))}
        expected = mean_show(kept, hand) + sign * table[(2, 3, True)] + peg_estimate(kept, dealer)
        assert values[tuple(parse_cards("2c 3c"))] == pytest.approx(expected)


def test_at_the_end_keeps_the_hand_that_goes_out() -> None:
    """Pone at 115 counts first: six sure points beat a bigger average."""
    view = _discard_view(False, "3c 3d 3h kc qd 5s", scores=(115, 100))
    kept = set(view.holding) - _best_discard(view)
    assert min(show_points(list(kept), s) for s in parse_cards("2s 7h 9d")) >= 6


def test_three_and_four_players_lay_one() -> None:
    for players in (3, 4):
        game = new_game(players, seed=f"hard-lay-{players}", first_dealer=0)
        action = choose_action(game, 1, random.Random(0), "hard")
        assert isinstance(action, Discard) and len(action.cards) == 1


# -- the crib tables ----------------------------------------------------------------


def test_random_crib_table_reproduces_the_exact_means() -> None:
    """RANDOM_PAIR (suited and not) weighted as dealt is the medium player's table."""
    for a in range(1, 14):
        for b in range(a, 14):
            if a == b:
                mixed = cribdata.RANDOM_PAIR[(a, b, False)]
            else:
                mixed = (
                    0.25 * cribdata.RANDOM_PAIR[(a, b, True)]
                    + 0.75 * cribdata.RANDOM_PAIR[(a, b, False)]
                )
            assert mixed == pytest.approx(CRIB_PAIR_VALUE[a][b], abs=1e-3)  # both rounded


@pytest.mark.parametrize("key", [(5, 5, False), (1, 13, True), (4, 6, False)])
def test_random_crib_table_is_exact(key: tuple[int, int, bool]) -> None:
    a, b, suited = key
    exact = exact_crib_mean([Card(a, Suit.SPADES), Card(b, Suit.SPADES if suited else Suit.HEARTS)])
    assert cribdata.RANDOM_PAIR[key] == pytest.approx(exact, abs=5e-4)


def test_realistic_tables_shape() -> None:
    """The pone throws away from the dealer's crib, the dealer into it: the pone's
    cards are worth more to the dealer than a random crib says, the dealer's own less."""
    keys = cribtables.pair_keys()
    assert len(keys) == 13 + 2 * 78
    assert set(cribdata.OWN_PAIR) == set(cribdata.OPP_PAIR) == set(keys)
    own = np.mean([cribdata.OWN_PAIR[k] for k in keys])
    opp = np.mean([cribdata.OPP_PAIR[k] for k in keys])
    rnd = np.mean([cribdata.RANDOM_PAIR[k] for k in keys])
    assert own < rnd < opp
    assert max(cribdata.OWN_PAIR, key=cribdata.OWN_PAIR.__getitem__) == (5, 5, False)
    for table in (
        cribdata.OWN_SINGLE_3,
        cribdata.OPP_SINGLE_3,
        cribdata.OWN_SINGLE_4,
        cribdata.OPP_SINGLE_4,
    ):
        assert max(table, key=table.__getitem__) == 5


def test_iteration_is_deterministic_and_moves_toward_the_tables() -> None:
    start = cribdata.RANDOM_PAIR
    one = cribtables.iterate_pairs(samples=3, rounds=1, seed=9, log=False, start=start)
    two = cribtables.iterate_pairs(samples=3, rounds=1, seed=9, log=False, start=start)
    assert one == two
    # a pair of fives is still the best thing for a dealer to lay away
    assert max(one[0], key=one[0].__getitem__) == (5, 5, False)
    singles = cribtables.iterate_singles(3, samples=8, rounds=1, seed=9, log=False)
    assert set(singles[0]) == set(range(1, 14))


def test_discard_policy_of_the_generator() -> None:
    hand = [c.index for c in parse_cards("5c 5d 2h 3s 4c 9d")]
    pair = cribtables.best_discard_pair(hand, cribdata.OWN_PAIR, 1.0)
    assert {Card.from_index(c) for c in pair} == set(parse_cards("5c 5d"))
    pair = cribtables.best_discard_pair(hand, cribdata.OPP_PAIR, -1.0)
    assert all(Card.from_index(c).rank != 5 for c in pair)


def test_fast_show_agrees_with_scoring() -> None:
    rng = random.Random(2)
    for _ in range(300):
        six = rng.sample(range(52), 6)
        crib = rng.random() < 0.5
        cards = [Card.from_index(i) for i in six]
        assert show_index(six[:4], six[4], crib) == show_points(cards[:4], cards[4], crib=crib)
        others = [s for s in range(52) if s not in six]
        expected = sum(show_points(cards[:4], Card.from_index(s), crib=crib) for s in others) / 46
        assert mean_show(six[:4], six, crib) == pytest.approx(expected)


# -- the pegging solver --------------------------------------------------------------


def test_peg_points() -> None:
    assert pegsearch.peg_points((10, 5)) == 2  # fifteen
    assert pegsearch.peg_points((7, 7, 7)) == 6  # pair royal
    assert pegsearch.peg_points((3, 5, 4)) == 3  # run of three out of order
    assert pegsearch.peg_points((10, 10, 10, 1)) == 2  # thirty-one
    assert pegsearch.peg_points((2, 3, 4, 4)) == 2  # the pair, not a run


def test_trim_keeps_what_can_still_score() -> None:
    assert pegsearch.trim((5, 5, 5)) == (5, 5, 5)
    assert pegsearch.trim((9, 5, 5)) == (5, 5)
    assert pegsearch.trim((5, 5, 6, 7)) == (5, 6, 7)


@pytest.mark.parametrize(
    ("mine", "theirs", "turn", "value"),
    [
        # They lead the ten; my five makes fifteen (2) and is the last card (1).
        ((5,), (10,), 1, 3),
        # I lead: whatever I lead they answer; 5 then their 10 is 15 for them, and the
        # last card: -3.  A lone ten against their five is the same.
        ((5,), (10,), 0, -3),
        # Two kings each, they lead: K, K (pair, me 2), K (pair royal, them 6) makes 30;
        # my king cannot go: their go (1); I lead my last king and take the last card
        # (1): 2 - 6 - 1 + 1.
        ((13, 13), (13, 13), 1, -4),
        # Nothing left for them: I play both cards, 7 and 8 make fifteen, and the go.
        ((7, 8), (), 0, 3),
    ],
)
def test_solver_on_hand_checked_positions(
    mine: tuple[int, ...], theirs: tuple[int, ...], turn: int, value: int
) -> None:
    assert pegsearch.solve(mine, theirs, (), 0, turn, -1) == value


def test_solver_go_and_new_count() -> None:
    # Count at 28 after their card: I hold a 4 (cannot play) and a 3 (31 for 2).
    assert pegsearch.solve((3, 4), (), (10, 10, 8), 28, 0, 1) == 2 + 1  # 31, then the last card
    # Count at 29, I cannot play: they get the go, then I lead my last card and take it.
    assert pegsearch.solve((9,), (), (10, 10, 9), 29, 0, 1) == -1 + 1


def test_win_search_counts_winning_on_the_spot() -> None:
    """Needing 2, a fifteen wins at once whatever the rest of the hand does."""
    search = pegsearch.WinSearch(2, 50, lambda me, them: 0.0)
    assert search.value((5,), (10,), (), 0, 1, -1, 0, 0) == 1.0
    search = pegsearch.WinSearch(5, 1, lambda me, them: 0.5)
    assert search.value((5,), (10,), (), 0, 0, -1, 0, 0) == 0.0  # I lead; their 10 makes 15


def test_reply_risk_is_what_a_hidden_hand_can_answer() -> None:
    # After a ten, one hidden card: a five makes fifteen (four fives unseen), else a
    # ten pairs it (three left); picture cards make 20 and nothing.
    p5 = 4 / 46
    p10 = 3 / 46
    assert pegsearch.reply_risk((10,), 10, 1) == pytest.approx(2 * p5 + (1 - p5) * 2 * p10)
    assert pegsearch.reply_risk((10,), 10, 0) == 0.0
    assert pegsearch.reply_risk((10, 10, 1, 10), 31, 3) == 0.0  # 31: the count is over
    # Holding more cards, the same answers are likelier.
    assert pegsearch.reply_risk((10,), 10, 4) > pegsearch.reply_risk((10,), 10, 1)


def test_model_opponent_takes_points_and_avoids_risk() -> None:
    # On a ten, a five makes fifteen: taken over a nine.
    assert pegsearch.model_choice((5, 9), (10,), 10, 4) == (5,)
    # Leading from a four and a five: the five invites fifteen from every ten-card.
    assert pegsearch.model_choice((4, 5), (), 0, 4) == (4,)
    # Two leads equally safe (only a pair answers either) are both kept: the search
    # averages them.
    assert pegsearch.model_choice((2, 3), (), 0, 4) == (2, 3)


def test_model_search_is_never_worse_than_minimax() -> None:
    """Against any fixed opponent the best answer makes at least the minimax value,
    and with nothing to choose the two searches agree."""
    rng = random.Random(5)
    deck = [r for r in range(1, 14) for _ in range(4)]
    for _ in range(200):
        cards = rng.sample(deck, 8)
        mine = tuple(sorted(cards[:4]))
        theirs = tuple(sorted(cards[4:]))
        turn = rng.randrange(2)
        assert pegsearch.solve_model(mine, theirs, (), 0, turn, -1) >= pegsearch.solve(
            mine, theirs, (), 0, turn, -1
        )
    for mine, theirs, turn, value in [((5,), (10,), 1, 3), ((7, 8), (), 0, 3)]:
        assert pegsearch.solve_model(mine, theirs, (), 0, turn, -1) == value


def test_model_win_search_agrees_when_the_opponent_has_no_choice() -> None:
    search = pegsearch.WinSearch(2, 50, lambda me, them: 0.0, model=True)
    assert search.value((5,), (10,), (), 0, 1, -1, 0, 0) == 1.0
    search = pegsearch.WinSearch(5, 1, lambda me, them: 0.5, model=True)
    assert search.value((5,), (10,), (), 0, 0, -1, 0, 0) == 0.0


def test_sampled_deals_respect_a_go() -> None:
    unseen = list(range(52))
    deals = pegsearch.sample_holdings(unseen, 3, 8, [], 50, random.Random(1))
    assert all(min(r, 10) >= 8 for ranks, _ in deals for r in ranks)


def test_plays_fifteen_with_the_search() -> None:
    game = new_game(2, seed="hard-peg", first_dealer=1)
    view = player_view(game, 0)
    mine = tuple(sorted(parse_cards("5h 9c 2d 3s")))
    ten = parse_cards("10s")[0]
    view = replace(
        view,
        phase=PEGGING,
        holding=mine,
        kept=mine,
        laid_away=(),
        starter=parse_cards("ks")[0],
        count=10,
        count_cards=((1, ten),),
        plays=((1, ten, 10),),
        cards_left=(4, 3),
        legal=tuple(Play(0, c) for c in mine),
        events=(),
    )
    action = decide(view, random.Random(0), "hard")
    assert action == Play(0, parse_cards("5h")[0])


def _pone_first_lead(cards: str) -> PlayerView:
    game = new_game(2, seed="hard-lead", first_dealer=1)
    view = player_view(game, 0)
    mine = tuple(sorted(parse_cards(cards)))
    return replace(
        view,
        phase=PEGGING,
        holding=mine,
        kept=mine,
        laid_away=(),
        starter=parse_cards("ks")[0],
        count=0,
        count_cards=(),
        plays=(),
        cards_left=(4, 4),
        legal=tuple(Play(0, c) for c in mine),
        events=(),
    )


@pytest.mark.parametrize("cards", ["5h 9c 2d 3s", "5h 5c jd qs", "7h 8c 8d ks", "ah 4c 6d 10s"])
def test_pone_leads_the_first_card_by_medium_rules(cards: str) -> None:
    view = _pone_first_lead(cards)
    assert decide(view, random.Random(3), "hard") == decide(view, random.Random(3), "medium")


def test_forgetting_the_memos_changes_no_decision() -> None:
    view = replace(_pone_first_lead("5h 9c 2d 3s"), count=10)
    ten = parse_cards("10s")[0]
    view = replace(view, count_cards=((1, ten),), plays=((1, ten, 10),), cards_left=(4, 3))
    first = decide(view, random.Random(8), "hard")
    assert pegsearch.solve_model.cache_info().currsize > 0
    pegsearch.forget()
    assert pegsearch.solve_model.cache_info().currsize == 0
    assert decide(view, random.Random(8), "hard") == first


def test_more_deals_where_the_search_is_small() -> None:
    from engine.strategy.hard import pegtwo

    by_size = [pegtwo.SAMPLES[n] for n in sorted(pegtwo.SAMPLES, reverse=True)]
    assert by_size == sorted(by_size)
    assert max(by_size) <= pegtwo.FEW_SAMPLES


# -- the win table -------------------------------------------------------------------


@pytest.mark.parametrize("target", [61, 121])
def test_win_table_sane(target: int) -> None:
    table = winprob.win_table(target)
    assert table.shape == (target, target)
    assert ((table >= 0) & (table <= 1)).all()
    assert (np.diff(table, axis=0) >= -1e-9).all()  # more points for me: better
    assert (np.diff(table, axis=1) <= 1e-9).all()  # more for them: worse
    assert 0.5 < table[0, 0] < 0.6  # the first dealer has the edge
    assert table[target - 1, 0] > 0.999
    assert table[0, target - 1] < 0.01
    assert winprob.win_prob(target, 0, False, target) == 1.0
    assert winprob.win_prob(0, target, True, target) == 0.0
    # my chance as pone is one minus the dealer's
    assert winprob.win_prob(40, 50, False, target) == pytest.approx(1 - table[50, 40])


def test_end_of_pegging_counting_order() -> None:
    # The pone counts first: pone at 110 with a 12-point hand wins even if the dealer
    # would also reach the target.
    assert winprob.end_of_pegging(110, 118, False, 12, 20, 121) == 1.0
    assert winprob.end_of_pegging(118, 110, True, 20, 12, 121) == 0.0
    assert 0.0 < winprob.end_of_pegging(100, 100, True, 8, 8, 121) < 1.0


# -- the pegging estimate of kept cards -------------------------------------------------


def _cards(ranks: tuple[int, ...]) -> list[int]:
    return [(r - 1) * 4 + i % 4 for i, r in enumerate(ranks)]


def test_peg_estimate_is_the_table() -> None:
    from engine.strategy import pegdata
    from engine.strategy.hard import discard

    w = discard.PEG_WEIGHT
    assert discard.PEG_SOURCE == "table"
    for ranks in [(1, 1, 2, 3), (5, 5, 10, 13), (7, 8, 9, 9)]:
        kept = _cards(ranks)
        for dealer, table in ((True, pegdata.DEALER), (False, pegdata.PONE)):
            assert peg_estimate(kept, dealer) == pytest.approx(w * table[ranks])
            assert peg_estimate(kept[::-1], dealer) == pytest.approx(w * table[ranks])
    # low cards peg better than court cards, in both roles; four of a kind is bad
    for dealer in (True, False):
        assert peg_estimate(_cards((1, 2, 3, 4)), dealer) > peg_estimate(
            _cards((10, 11, 12, 13)), dealer
        )
        assert peg_estimate(_cards((5, 5, 5, 5)), dealer) < peg_estimate(
            _cards((5, 5, 6, 6)), dealer
        )


def test_peg_estimate_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.strategy import pegdata, pegtable
    from engine.strategy.hard import discard

    monkeypatch.setattr(discard, "PEG_SOURCE", "fit")
    w = discard.PEG_WEIGHT
    for ranks in [(1, 1, 2, 3), (5, 5, 10, 13), (7, 8, 9, 9)]:
        kept = _cards(ranks)
        for dealer, fitted in ((True, pegdata.DEALER_FIT), (False, pegdata.PONE_FIT)):
            expected = w * float(np.dot(pegtable.features(ranks), fitted))
            assert peg_estimate(kept, dealer) == pytest.approx(expected)
            # the order of the cards does not matter
            assert peg_estimate(kept[::-1], dealer) == pytest.approx(expected)
    # low cards peg better than court cards, in both roles
    for dealer in (True, False):
        assert peg_estimate(_cards((1, 2, 3, 4)), dealer) > peg_estimate(
            _cards((10, 11, 12, 13)), dealer
        )


def test_peg_estimate_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.strategy import pegdata
    from engine.strategy.hard import discard

    kept = _cards((2, 3, 3, 12))
    monkeypatch.setattr(discard, "PEG_WEIGHT", 1.0)
    monkeypatch.setattr(discard, "PEG_SOURCE", "table")
    assert peg_estimate(kept, True) == pegdata.DEALER[(2, 3, 3, 12)]
    assert peg_estimate(kept, False) == pegdata.PONE[(2, 3, 3, 12)]
    monkeypatch.setattr(discard, "PEG_SOURCE", "open")
    open_d = discard.OPEN_FIT[True]
    assert peg_estimate(kept, True) == pytest.approx(
        open_d[1] + 2 * open_d[2] + open_d[11] + discard.OPEN_PAIR[True]
    )
    monkeypatch.setattr(discard, "PEG_WEIGHT", 0.0)
    assert peg_estimate(kept, True) == 0.0


def test_peg_table_fit_follows_the_table() -> None:
    """The smoothed form stays close to the measured table."""
    from engine.strategy import pegdata, pegtable

    for table, fitted, se in (
        (pegdata.DEALER, pegdata.DEALER_FIT, pegdata.SUMMARY["dealer_se"]),
        (pegdata.PONE, pegdata.PONE_FIT, pegdata.SUMMARY["pone_se"]),
    ):
        assert len(table) == 1820
        assert len(fitted) == 13 + 91
        errors = np.array([table[k] - pegtable.predict(fitted, k) for k in table])
        # the fit explains most of the spread of the table; what it misses is
        # mostly the higher-order shapes (three or four of a rank)
        assert float(np.std(errors)) < 0.5 * float(np.std(list(table.values())))
        assert float(np.std(errors)) < 4 * se
        assert float(np.mean(abs(errors) < 0.5)) > 0.9


def test_peg_table_features() -> None:
    from engine.strategy import pegtable

    f = pegtable.features((1, 1, 1, 2))
    assert f[:13] == [3.0, 1.0] + [0.0] * 11
    assert f[pegtable.PAIR_INDEX[1, 1]] == 3.0
    assert f[pegtable.PAIR_INDEX[1, 2]] == 3.0
    assert sum(f[13:]) == 6.0
    assert len(pegtable.PAIRS) == 91
    # a fit reproduces a table that is exactly a sum of rank and pair weights
    rng = random.Random(3)
    truth = [rng.uniform(-1, 1) for _ in range(13 + 91)]
    table = {k: pegtable.predict(truth, k) for k in pegtable.kept_multisets()}
    fitted = pegtable.fit(table)
    for k in list(table)[::97]:
        assert pegtable.predict(fitted, k) == pytest.approx(table[k], abs=0.01)


def test_peg_table_keep_rule_and_opponents() -> None:
    from engine.strategy import pegtable

    # from 5 5 5 J 9 K the rule keeps the three fives and the jack (and, for
    # the other side's crib, lays away the 9-K rather than a five)
    six = [16, 17, 18, 40, 32, 48]
    assert sorted(pegtable.keep_rule(six, own_crib=False)) == [16, 17, 18, 40]
    # opponents never hold a fifth card of a rank
    pool = [(5, 5, 6, 7), (1, 2, 3, 4), (5, 6, 7, 8), (5, 5, 5, 9)]
    assert pegtable.opponents((5, 5, 5, 10), pool, 3) == [(1, 2, 3, 4), (5, 6, 7, 8)]
    assert pegtable.opponents((1, 2, 3, 9), pool, 2) == [(5, 5, 6, 7), (1, 2, 3, 4)]


def test_peg_table_entry_is_the_modelled_play() -> None:
    """An entry is the mean of ``solve_model`` over its opponents, the pone leading."""
    from engine.strategy import pegtable

    pool = [(1, 2, 3, 4), (10, 10, 12, 13), (5, 6, 7, 8)]
    for dealer in (True, False):
        mean, se = pegtable.entry((5, 5, 10, 11), pool, 3, dealer)
        values = [
            pegsearch.solve_model((5, 5, 10, 11), t, (), 0, 1 if dealer else 0, -1) for t in pool
        ]
        assert mean == pytest.approx(sum(values) / 3)
        assert se > 0
    # known positions: a ten against a five.  The pone leads: as dealer my five
    # makes fifteen and the last card (+3); as pone I lead the five and the
    # ten answers it (-3); a seven against an eight: 15 either way round
    assert pegtable.entry((5,), [(10,), (10,)], 2, True) == (3.0, 0.0)
    assert pegtable.entry((5,), [(10,), (10,)], 2, False) == (-3.0, 0.0)
    mean, _ = pegtable.entry((7,), [(8,), (2,)], 2, True)
    assert mean == pytest.approx((3 + 1) / 2)  # 8-7 fifteen and last; 2-7 just the last card


def test_step_scores_like_the_rules_on_trimmed_counts() -> None:
    """The solver keeps only the tail of a count that can still pair or run; the
    fifteen and thirty-one come from the count itself (a regression: a trimmed
    tail once stood for the whole count)."""
    from engine.scoring import score_play

    rng = random.Random(11)
    for _ in range(3000):
        played: list[Card] = []
        seq: tuple[int, ...] = ()
        count = 0
        pack = [Card.from_index(i) for i in rng.sample(range(52), 12)]
        for card in pack:
            if count + card.value > 31:
                break
            played.append(card)
            expected = sum(item.points for item in score_play(played))
            points, seq = pegsearch.step(seq, card.rank, count)
            count += card.value
            assert points == expected, (played, seq)
    # hand-checked: 9 6 6 stands at 21; a three makes 24, not fifteen; then the last card
    assert pegsearch.solve((3,), (), pegsearch.trim((9, 6, 6)), 21, 0, 1) == 1
    # 10 2 2 stands at 14; an ace makes fifteen (2) and the last card (1)
    assert pegsearch.solve((1,), (), pegsearch.trim((10, 2, 2)), 14, 0, 1) == 3
