"""The play: pegging examples of the rules texts, scored alone and driven through a game."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    PEGGING,
    Card,
    Game,
    Go,
    IllegalActionError,
    Play,
    Settings,
    Suit,
    full_deck,
    parse_cards,
    score_play,
)
from engine.scoring import (
    DOUBLE_PAIR_ROYAL,
    FIFTEEN,
    PAIR,
    PAIR_ROYAL,
    RUN,
    THIRTY_ONE,
)
from tests.engine.helpers import (
    card,
    discard_all,
    peg,
    points_by_seat,
    rigged,
    stack_deal,
)

# (cards of one count in the order played, what the last card scores, kinds, reasoning)
PLAY_TABLE = [
    ("KC 5D", 2, [FIFTEEN], "000: K (10) 5 (15 for 2)"),
    ("KC 5D 8H 8S", 4, [PAIR, THIRTY_ONE], "000: two for pairing the 8, plus two for 31"),
    ("4C 6D 5H", 5, [FIFTEEN, RUN], "000: three for a three-card run (4-6-5), two for 15"),
    ("4C 6D 5H 3S", 4, [RUN], "000: a four-card run (4-6-5-3); the last-card point is apart"),
    ("AC 3D 2H", 3, [RUN], "000: you play an Ace, opponent a 3, you a 2 — three points"),
    ("AC 3D 2H 4S", 4, [RUN], "000: if opponent now plays a 4, he gets 4 points"),
    ("AC 3D 2H 4S 5C", 7, [FIFTEEN, RUN], "000: 5 for the 5-card run and 2 for 15"),
    ("AC 3D 2H 4S AD", 4, [RUN], "000: another Ace gives 4: the last four were 3-2-4-A"),
    ("QC KD AH", 0, [], "000: Ace is low only; Q-K-A is not a run"),
    ("KC AD 2H", 0, [], "K-A-2 is not a run either"),
    ("8C 7D", 2, [FIFTEEN], "001: 8, 7 — the dealer pegs 2 for 15"),
    ("8C 7D 7H", 2, [PAIR], "001: 8, 7, 7 — the opponent pegs 2 for the pair"),
    ("8C 7D 7H 6S", 0, [], "001: 8, 7, 7, 6 — no run: the extra seven is a foreign card"),
    ("9C 6D", 2, [FIFTEEN], "001: 9, 6 — 2 for fifteen when he plays the six"),
    ("9C 6D 8H", 0, [], "001: 9, 6, 8 — nothing yet"),
    ("9C 6D 8H 7S", 4, [RUN], "001: 4 for the run 6-7-8-9, not played in order"),
    ("9C 10D JH", 3, [RUN], "001: 9, 10, J is a run"),
    ("JC 9D 10H", 3, [RUN], "001: J, 9, 10 is a run"),
    ("9C 10D QH", 0, [], "001: 9, 10, Q is not"),
    ("8C 6D 7H", 3, [RUN], "003: an 8, a 6, then a 7 is a run of 3"),
    ("3C 5D 4H", 3, [RUN], "runs in any order"),
    ("4C 2D 3H 6S 5C", 5, [RUN], "the five most recent cards make 2-3-4-5-6"),
    ("7C 2D 3H 4S", 3, [RUN], "the longest run among the most recent cards: 2-3-4"),
    ("3C 5D 5H 4S", 0, [], "a duplicate five breaks the run"),
    ("KC KD", 2, [PAIR], "000: pairing the card the opponent just played"),
    ("KC KD KH", 6, [PAIR_ROYAL], "000: the third card of a denomination in a row"),
    ("3C 3D 3H 3S", 12, [DOUBLE_PAIR_ROYAL], "000: the fourth consecutive card: 12"),
    ("5C 5D 6H 5S", 0, [], "the third five is not consecutive: no pair royal, no pair"),
    ("JC QD", 0, [], "001: face cards pair only by actual rank"),
    ("KC QD JH AS", 2, [THIRTY_ONE], "31 scores 2 in all, never 3"),
    ("2H 4H 6H 8H", 0, [], "001: a flush cannot happen during the play"),
]


@pytest.mark.parametrize(
    ("text", "points", "kinds", "reasoning"), PLAY_TABLE, ids=[row[0] for row in PLAY_TABLE]
)
def test_score_play_table(text: str, points: int, kinds: list[str], reasoning: str) -> None:
    items = score_play(parse_cards(text))
    assert sum(i.points for i in items) == points, reasoning
    assert sorted(i.kind for i in items) == sorted(kinds), reasoning


def test_score_play_rejects_a_count_over_31() -> None:
    with pytest.raises(IllegalActionError, match="33"):
        score_play(parse_cards("KC QD JH 3S"))


def test_run_items_name_the_cards_of_the_run() -> None:
    items = score_play(parse_cards("7C 2D 3H 4S"))
    assert [i.cards for i in items if i.kind == RUN] == [tuple(parse_cards("2D 3H 4S"))]


# ---------------------------------------------------------------------------------------
# Through a game.  Seat 0 deals; seat 1 (the pone) leads.  Each step is (seat, card or
# "go", points that step gives each seat).  The point for the last card of a count comes
# with the play that ends the count.

PONE, DEALER = 1, 0


def two_player_game(
    monkeypatch: pytest.MonkeyPatch, pone: str, dealer: str, starter: str = "2C"
) -> Game:
    """Deal ``pone``/``dealer`` (four kept cards each, then two to lay away)."""
    pack = stack_deal(2, DEALER, {PONE: pone, DEALER: dealer}, starter)
    game = rigged(monkeypatch, Settings(2, first_dealer=DEALER), {1: pack})
    discard_all(game, {PONE: " ".join(pone.split()[4:]), DEALER: " ".join(dealer.split()[4:])})
    assert game.phase == PEGGING
    return game


def drive(game: Game, steps: list[tuple[int, str, dict[int, int]]]) -> None:
    for number, (seat, what, expected) in enumerate(steps, start=1):
        assert game.to_act() == (seat,), f"step {number}: {seat} should be to act"
        events = [e for e in peg(game, seat, what) if e.kind in ("play", "go", "count_end")]
        assert points_by_seat(events) == expected, f"step {number}: {seat} {what}: {events}"


def test_ted_and_sally_first_sample_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    # 000: "When Ted made the count 27, Sally couldn't play without going over 31, so she
    # said 'Go.'  Ted was still able to play his 3 or his 2.  Once he played the 2, he
    # couldn't play the 3, so the count reverted to 0, with Sally playing first in the new
    # sequence. ... Ted would score one point when he played his 2, the last card in the
    # first sequence to 31.  Sally would score 1 point for playing her 7."
    ted, sally = PONE, DEALER
    game = two_player_game(monkeypatch, "KS 7C 2D 3H 4S 4D", "10H 9D 8S 7H QC QD", starter="AH")
    drive(game, [(ted, "KS", {}), (sally, "10H", {}), (ted, "7C", {})])
    assert game.count == 27
    assert game.legal_actions() == [Go(sally)]
    drive(game, [(sally, "go", {})])
    assert game.legal_actions() == [Play(ted, card("2D")), Play(ted, card("3H"))]
    drive(game, [(ted, "2D", {ted: 1})])
    assert game.count == 0
    drive(game, [(sally, "9D", {}), (ted, "3H", {}), (sally, "8S", {})])
    assert game.count == 20
    drive(game, [(sally, "7H", {sally: 1})])
    assert game.phase != PEGGING


def test_ted_and_sally_sample_hand_with_scoring(monkeypatch: pytest.MonkeyPatch) -> None:
    # 000: "K (10) 5 (15 for 2*) / 8 (23) 8 (31 for 4**) / 4 6 (10) / 5 (15 for 5***)
    # 3 (18 for 5****)": ** two for pairing the 8, plus two for 31; *** three for the
    # run 4-6-5 plus two for 15; **** four for the run 4-6-5-3, plus one for the last card
    # of a sequence that did not reach 31.
    ted, sally = PONE, DEALER
    game = two_player_game(monkeypatch, "KS 8C 4D 5H AS AD", "5C 8S 6H 3D QC QD")
    drive(
        game,
        [
            (ted, "KS", {}),
            (sally, "5C", {sally: 2}),
            (ted, "8C", {}),
            (sally, "8S", {sally: 4}),  # 31: the player after Sally (Ted) leads next
            (ted, "4D", {}),
            (sally, "6H", {}),
            (ted, "5H", {ted: 5}),
            (sally, "3D", {sally: 5}),
        ],
    )
    play_points = [e.points for e in game.events if e.kind == "play"]
    assert play_points == [0, 2, 0, 4, 0, 0, 5, 4]
    assert [e.points for e in game.events if e.kind == "count_end"] == [0, 1]


@pytest.mark.parametrize(
    ("last", "points", "reasoning"),
    [
        ("5C", 7, "If you now play a 5, you get 7 points: 5 for the run and 2 for 15"),
        ("AD", 4, "Had you played another Ace, you would get 4 points: 3-2-4-A"),
    ],
)
def test_ace_three_two_four_run(
    monkeypatch: pytest.MonkeyPatch, last: str, points: int, reasoning: str
) -> None:
    # 000: "you play an Ace, opponent plays a 3, you play a 2 — you get three points.  If
    # opponent now plays a 4, he gets 4 points."
    you, opponent = PONE, DEALER
    game = two_player_game(monkeypatch, f"AC 2H {last} KS QS QD", "3D 4S KH KD JC JD")
    drive(
        game,
        [
            (you, "AC", {}),
            (opponent, "3D", {}),
            (you, "2H", {you: 3}),
            (opponent, "4S", {opponent: 4}),
            (you, last, {you: points}),
        ],
    )


def test_eight_seven_seven_six(monkeypatch: pytest.MonkeyPatch) -> None:
    # 001: "Cards are played in this order: 8, 7, 7, 6.  The dealer pegs 2 for 15, and the
    # opponent pegs 2 for pair, but the dealer cannot peg for run because of the extra
    # seven (foreign card) that has been played."
    game = two_player_game(monkeypatch, "8C 7H AS AD KS KD", "7D 6S QH QC QD JS")
    drive(
        game,
        [
            (PONE, "8C", {}),
            (DEALER, "7D", {DEALER: 2}),
            (PONE, "7H", {PONE: 2}),
            (DEALER, "6S", {}),
        ],
    )


def test_nine_six_eight_seven(monkeypatch: pytest.MonkeyPatch) -> None:
    # 001: "Cards are played in this order: 9, 6, 8, 7.  The dealer pegs 2 for fifteen when
    # he or she plays the six and pegs 4 for run when he plays the seven (the 6, 7, 8, 9
    # sequence).  The cards were not played in sequential order, but they form a true run
    # with no foreign card."
    game = two_player_game(monkeypatch, "9C 8H AS AD KS KD", "6D 7S QH QC QD JS")
    drive(
        game,
        [
            (PONE, "9C", {}),
            (DEALER, "6D", {DEALER: 2}),
            (PONE, "8H", {}),
            (DEALER, "7S", {DEALER: 4}),
        ],
    )


def test_a_pair_does_not_carry_into_the_next_count(monkeypatch: pytest.MonkeyPatch) -> None:
    # 000: "if my 9 makes the count 31, and the count reverts to 0, and you start the next
    # sequence by playing a 9, you don't get credit for pairing my 9."
    game = two_player_game(monkeypatch, "KC 2H 9S 3D AS AD", "KD 9D 4C 6H QS JS")
    drive(
        game,
        [
            (PONE, "KC", {}),
            (DEALER, "KD", {DEALER: 2}),
            (PONE, "2H", {}),
            (DEALER, "9D", {DEALER: 2}),  # 31 for 2
            (PONE, "9S", {}),  # no pair across the counts
            (DEALER, "4C", {}),
        ],
    )


def test_thirty_one_scores_two_in_all_and_no_go(monkeypatch: pytest.MonkeyPatch) -> None:
    # Readings: "31 scores 2 in all (not 2 plus 1 for the go)."
    game = two_player_game(monkeypatch, "KC QH 7S 3D AS AD", "9D 2S 4C 6H 8S 8D")
    drive(
        game,
        [
            (PONE, "KC", {}),
            (DEALER, "9D", {}),
            (PONE, "QH", {}),
            (DEALER, "2S", {DEALER: 2}),
        ],
    )
    assert game.count == 0
    ended = [e for e in game.events if e.kind == "count_end"]
    assert len(ended) == 1 and ended[0].points == 0 and ended[0].count == 31
    # The next count is led by the player after the one who played last.
    assert game.to_act() == (PONE,)


def test_the_player_who_said_go_leads_next(monkeypatch: pytest.MonkeyPatch) -> None:
    # 001: "If a player cannot add another card without exceeding 31, he or she says 'Go'
    # and the opponent pegs 1.  After gaining the Go, the opponent must first lay down any
    # additional cards he can without exceeding 31 ... The player who called Go leads for
    # the next series of plays."  000: "The count can never be higher than 31."
    game = two_player_game(monkeypatch, "KC QH AS 3D 7C 7D", "9D 4C 6H 8S 10S 10D")
    drive(game, [(PONE, "KC", {}), (DEALER, "9D", {}), (PONE, "QH", {})])
    assert game.count == 29
    assert game.legal_actions() == [Go(DEALER)]
    drive(game, [(DEALER, "go", {})])
    # The pone must go on playing: the ace (30), not the three (33).
    assert game.legal_actions() == [Play(PONE, card("AS"))]
    drive(game, [(PONE, "AS", {PONE: 1})])
    assert game.count == 0
    assert game.to_act() == (DEALER,)


def test_three_player_next_count_led_after_the_last_player(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Readings: "After a go, the next count is led by the player after the one who played
    # the last card" — not by the first player who said go.
    pack = stack_deal(
        3,
        0,
        {1: "KC 9H 9S 9D AS", 2: "QC AH 8C 8D 2S", 0: "9C 7H 7S 7D 3S"},
        starter="4H",
        crib_card="4C",
    )
    game = rigged(monkeypatch, Settings(3, first_dealer=0), {1: pack})
    discard_all(game, {0: "3S", 1: "AS", 2: "2S"})
    steps = [
        (1, "KC", {}),  # 10
        (2, "QC", {}),  # 20
        (0, "9C", {}),  # 29
        (1, "go", {}),  # nines only
        (2, "AH", {2: 1}),  # 30, and no one can play: the last card
    ]
    for seat, what, expected in steps:
        assert game.to_act() == (seat,)
        assert points_by_seat(peg(game, seat, what)) == expected
    # Seat 2 played the last card of the count and scored 1; seat 0, on its left, leads
    # the next count although seat 1 said go first.
    assert [e for e in game.events if e.kind == "count_end"][-1].seat == 2
    assert game.count == 0
    assert game.to_act() == (0,)


def test_pair_royal_and_double_pair_royal_in_play(monkeypatch: pytest.MonkeyPatch) -> None:
    # 000: "6 points for playing the third card of a specific denomination in a row ... 12
    # points for the fourth consecutive card of a specific denomination during one
    # sequence to 31."  The third five also makes 15.
    game = two_player_game(monkeypatch, "5C 5H 9S 3D AS AD", "5D 5S 4C 6H QS JS")
    drive(
        game,
        [
            (PONE, "5C", {}),
            (DEALER, "5D", {DEALER: 2}),  # a pair
            (PONE, "5H", {PONE: 6 + 2}),  # a pair royal and fifteen
            (DEALER, "5S", {DEALER: 12}),  # a double pair royal
        ],
    )
    kinds = [i.kind for e in game.events if e.kind == "play" for i in e.items]
    assert kinds == [PAIR, FIFTEEN, PAIR_ROYAL, DOUBLE_PAIR_ROYAL]


def test_a_foreign_card_breaks_a_pair_royal(monkeypatch: pytest.MonkeyPatch) -> None:
    # Readings: a pair royal counts "only for cards of the same rank played one after
    # another in the same count".
    game = two_player_game(monkeypatch, "5C 9S 5H 3D AS AD", "5D 2H 4C 6H QS JS")
    drive(
        game,
        [
            (PONE, "5C", {}),
            (DEALER, "5D", {DEALER: 2}),  # a pair
            (PONE, "9S", {}),  # 19
            (DEALER, "2H", {}),  # 21
            (PONE, "5H", {}),  # 26: the third five is not next to the others
        ],
    )


def reference_play_points(played: list[Card]) -> int:
    """What the last card scores, written from the readings rather than from the engine."""
    count = sum(min(c.rank, 10) for c in played)
    points = 2 if count == 15 else 0
    points += 2 if count == 31 else 0
    same = 1
    while same < len(played) and played[-1 - same].rank == played[-1].rank:
        same += 1
    points += {1: 0, 2: 2, 3: 6, 4: 12}[same]
    best = 0
    for k in range(3, len(played) + 1):
        ranks = sorted(c.rank for c in played[-k:])
        if ranks == list(range(ranks[0], ranks[0] + k)):
            best = k
    return points + best


@st.composite
def counts(draw: st.DrawFn) -> list[Card]:
    """A sequence of cards of one count (never past 31), drawn from a pack."""
    pack = draw(st.permutations(full_deck()))
    played: list[Card] = []
    total = 0
    for c in pack[: draw(st.integers(1, 13))]:
        if total + c.value > 31:
            break
        played.append(c)
        total += c.value
    return played


@settings(max_examples=300, deadline=None)
@given(played=counts())
def test_score_play_matches_reference(played: list[Card]) -> None:
    items = score_play(played)
    assert sum(i.points for i in items) == reference_play_points(played)
    assert all(i.cards and i.cards[-1] == played[-1] for i in items)


@settings(max_examples=200, deadline=None)
@given(
    ranks=st.lists(st.integers(1, 8), min_size=3, max_size=7, unique=True).filter(
        lambda r: sum(r) <= 31
    )
)
def test_runs_are_found_in_any_order(ranks: list[int]) -> None:
    # Consecutive ranks in any order form a run; the points do not depend on the order.
    played = [Card(r, Suit.CLUBS) for r in ranks]
    expected = reference_play_points(played)
    assert sum(i.points for i in score_play(played)) == expected
    if sorted(ranks) == list(range(min(ranks), min(ranks) + len(ranks))):
        assert any(i.kind == RUN and len(i.cards) == len(ranks) for i in score_play(played))
