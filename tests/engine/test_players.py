"""Computer opponents: always legal, never peeking, and clearly better than chance."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

import pytest

from engine import (
    Accept,
    Action,
    Claim,
    Discard,
    Game,
    Muggins,
    Play,
    PlayerView,
    full_deck,
    new_game,
    parse_cards,
    player_view,
    show_points,
)
from engine.cards import Card, Suit
from engine.computer import choose_action, decide
from engine.game import PEGGING, SHOW
from engine.levels import STRATEGIES
from engine.players import (
    CRIB_PAIR_VALUE,
    CRIB_SINGLE_VALUE,
    answer_claim,
    choose_claim,
    discard_values,
    exact_crib_mean,
    exact_pair_value,
    play_values,
    unseen_cards,
)

ALL_PLAYERS = tuple(STRATEGIES)


def _is_legal(game: Game, seat: int, action: Action) -> bool:
    return action in game.legal_actions(seat)


def play_game(
    game: Game,
    levels: list[str],
    rng: random.Random,
    check: Callable[[Game, int, Action], None] | None = None,
) -> Game:
    while not game.is_over:
        seat = game.to_act()[0]
        action = choose_action(game, seat, rng, levels[seat])
        if check is not None:
            check(game, seat, action)
        game.apply(action)
    return game


# -- legality ----------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("muggins", [False, True])
def test_always_legal(players: int, muggins: bool) -> None:
    def check(game: Game, seat: int, action: Action) -> None:
        assert action.seat == seat
        assert _is_legal(game, seat, action), (action, game.phase)

    for i in range(4):
        rng = random.Random(i)
        levels = [rng.choice(ALL_PLAYERS) for _ in range(players)]
        game = new_game(players, seed=f"legal-{players}-{muggins}-{i}", muggins=muggins, target=61)
        play_game(game, levels, rng, check)
        assert game.outcome is not None


def test_every_seat_every_phase_legal_with_good_players() -> None:
    """Ask every seat that may act, not only the first, at every step."""
    for players in (2, 3, 4):
        game = new_game(players, seed=f"all-seats-{players}", muggins=True, target=61)
        rng = random.Random(players)
        while not game.is_over:
            for seat in game.to_act():
                assert _is_legal(game, seat, choose_action(game, seat, rng))
            game.apply(choose_action(game, game.to_act()[-1], rng))


def test_nothing_to_do_and_unknown_level() -> None:
    game = new_game(2, seed="idle", first_dealer=0)
    game.apply(choose_action(game, 0, random.Random(1)))
    with pytest.raises(ValueError):
        choose_action(game, 0, random.Random(1))  # already laid away
    with pytest.raises(ValueError):
        choose_action(game, 1, random.Random(1), level="genius")


def test_same_rng_same_game() -> None:
    def run() -> list[Action]:
        game = new_game(2, seed="repeat", muggins=True)
        return play_game(game, ["good", "random"], random.Random(5)).actions

    assert run() == run()


# -- strength ----------------------------------------------------------------------


def test_good_beats_random() -> None:
    games, good_wins = 200, 0
    for i in range(games):
        good_seat = i % 2
        levels = ["good", "random"] if good_seat == 0 else ["random", "good"]
        game = play_game(new_game(2, seed=f"match-{i}"), levels, random.Random(i))
        assert game.outcome is not None
        good_wins += game.outcome.winner == good_seat
    assert good_wins / games > 0.75, good_wins


def test_good_beats_two_randoms_at_three_handed() -> None:
    games, good_wins = 30, 0
    for i in range(games):
        levels = ["random"] * 3
        levels[i % 3] = "good"
        game = play_game(new_game(3, seed=f"three-{i}", target=61), levels, random.Random(i))
        assert game.outcome is not None
        good_wins += game.outcome.winner == i % 3
    assert good_wins / games > 0.5, good_wins


# -- discarding --------------------------------------------------------------------


def _discard_view(dealer: bool) -> PlayerView:
    game = new_game(2, seed="discard-sanity", first_dealer=0)
    return player_view(game, 0 if dealer else 1)


def _best_discard(view: PlayerView, holding: str) -> set[Card]:
    cards = tuple(sorted(parse_cards(holding)))
    action = decide(replace(view, holding=cards), random.Random(0))
    assert isinstance(action, Discard)
    assert set(action.cards) <= set(cards)
    return set(action.cards)


@pytest.mark.parametrize("dealer", [True, False])
def test_keeps_fives_and_jacks_over_junk(dealer: bool) -> None:
    assert _best_discard(_discard_view(dealer), "5c 5d jh js ac 9d") == set(parse_cards("ac 9d"))


def test_dealer_lays_fives_in_own_crib_pone_keeps_them() -> None:
    assert _best_discard(_discard_view(True), "5c 5d 2h 3s 4c 9d") == set(parse_cards("5c 5d"))
    assert _best_discard(_discard_view(False), "5c 5d 2h 3s 4c 9d") == set(parse_cards("2h 9d"))


@pytest.mark.parametrize(
    "holding", ["5s kc qd 9h 8c 2d", "5c 5d kh 9s 7c 2d", "5h 5s 6c 4d kc qs", "5c 6d 9h 10s jc qd"]
)
def test_pone_never_gives_a_five(holding: str) -> None:
    assert all(c.rank != 5 for c in _best_discard(_discard_view(False), holding))


def test_discard_values_are_hand_average_plus_or_minus_crib() -> None:
    holding = tuple(sorted(parse_cards("ac 2c 3c 4c 5c 6c")))
    unseen = [c for c in full_deck() if c not in holding]
    kept = parse_cards("ac 4c 5c 6c")
    hand = sum(show_points(kept, s) for s in unseen) / len(unseen)
    for dealer, sign in ((True, 1), (False, -1)):
        values = discard_values(replace(_discard_view(dealer), holding=holding))
        assert len(values) == 15
        by_cards = {a.cards: v for v, a in values}
        expected = hand + sign * CRIB_PAIR_VALUE[2][3]
        assert by_cards[tuple(parse_cards("2c 3c"))] == pytest.approx(expected)
    # As dealer, 2-3 to the crib keeps a flush and a run of four around the five.
    assert _best_discard(_discard_view(True), "ac 2c 3c 4c 5c 6c") == set(parse_cards("2c 3c"))


def test_three_player_discard_lays_one() -> None:
    game = new_game(3, seed="three-discard", first_dealer=0)
    action = choose_action(game, 1, random.Random(0))
    assert isinstance(action, Discard) and len(action.cards) == 1


# -- pegging -----------------------------------------------------------------------


def _pegging_view(
    holding: str, count_cards: list[tuple[int, str]], opponent_left: int = 4
) -> PlayerView:
    game = new_game(2, seed="pegging-sanity", first_dealer=1)
    view = player_view(game, 0)
    mine = tuple(sorted(parse_cards(holding)))
    played = [(seat, parse_cards(c)[0]) for seat, c in count_cards]
    count = sum(c.value for _, c in played)
    plays = []
    running = 0
    for seat, card in played:
        running += card.value
        plays.append((seat, card, running))
    legal = tuple(Play(0, c) for c in mine if count + c.value <= 31)
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
        cards_left=(len(mine), opponent_left),
        legal=legal,
        events=(),
    )


def _best_play(view: PlayerView) -> Card:
    action = decide(view, random.Random(0))
    assert isinstance(action, Play)
    return action.card


def test_takes_fifteen_and_thirty_one() -> None:
    assert _best_play(_pegging_view("5h 9c 2d", [(1, "10s")])) == parse_cards("5h")[0]
    assert (
        _best_play(_pegging_view("7h 9c", [(1, "10s"), (0, "4d"), (1, "8c")]))
        == (parse_cards("9c")[0])
    )


def test_does_not_lead_a_five() -> None:
    assert _best_play(_pegging_view("5h kc qd 8s", [])).rank != 5


def test_leads_low_or_from_a_pair() -> None:
    card = _best_play(_pegging_view("4h kc 9d 8s", []))
    assert card == parse_cards("4h")[0]
    card = _best_play(_pegging_view("8h 8c kd qs", []))
    assert card.rank == 8


def test_avoids_leaving_twenty_one() -> None:
    assert _best_play(_pegging_view("9h 8c", [(1, "ks"), (0, "2d")])) == parse_cards("8c")[0]


def test_prefers_pair_royal_and_go_points() -> None:
    view = _pegging_view("7h 7c 2d", [(1, "7s")])
    values = {a.card: v for v, a in play_values(view) if isinstance(a, Play)}
    assert values[parse_cards("7h")[0]] > values[parse_cards("2d")[0]]
    # Alone at count 28 with the opponent gone: play the 3 for 31.
    assert (
        _best_play(_pegging_view("3h ac", [(1, "ks"), (0, "kd"), (1, "8c")], opponent_left=0))
        == parse_cards("3h")[0]
    )


def test_unseen_cards_excludes_everything_seen() -> None:
    view = _pegging_view("5h 9c", [(1, "10s"), (0, "4d")])
    unseen = unseen_cards(view)
    for card in parse_cards("5h 9c 10s 4d ks"):
        assert card not in unseen
    assert len(unseen) == 52 - 5


# -- never peeking -----------------------------------------------------------------


def _scrambled(game: Game, seat: int, rng: random.Random) -> Game:
    """A copy in which every card ``seat`` cannot see is dealt differently."""
    other = game.copy()
    s = other._s
    mine = set(s.laid_away[seat])
    others = [x for x in range(game.players) if x != seat]
    shown = set(game.showing())  # a hand or crib being counted lies face up
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


@pytest.mark.parametrize(("players", "muggins"), [(2, False), (2, True), (3, True), (4, False)])
def test_decisions_ignore_hidden_cards(players: int, muggins: bool) -> None:
    game = new_game(players, seed=f"hidden-{players}", muggins=muggins, target=61)
    drive = random.Random(3)
    shuffler = random.Random(4)
    decisions = changed = 0
    while not game.is_over and decisions < 150:
        seat = game.to_act()[0]
        twin = _scrambled(game, seat, shuffler)
        changed += twin.state_json() != game.state_json()
        assert player_view(twin, seat) == player_view(game, seat)
        for level in ALL_PLAYERS:
            mine = choose_action(game, seat, random.Random(decisions), level)
            theirs = choose_action(twin, seat, random.Random(decisions), level)
            assert mine == theirs, (game.phase, mine, theirs)
        decisions += 1
        game.apply(choose_action(game, seat, drive))
    assert decisions >= 40
    assert changed >= 0.8 * decisions


# -- muggins -----------------------------------------------------------------------


def _to_first_claim(seed: str, players: int = 2) -> Game:
    game = new_game(players, seed=seed, muggins=True, first_dealer=0)
    rng = random.Random(1)
    while game.phase != SHOW:
        game.apply(choose_action(game, game.to_act()[0], rng))
    return game


def _true_count(game: Game) -> int:
    entry = game.show_entry()
    assert entry is not None
    return show_points(game.showing(), game.starter, crib=entry[1] == "crib")


def _claims(game: Game, rng: random.Random) -> list[tuple[str, int, int]]:
    """Drive the show to its end: (what, claimed, true count) of every claim made."""
    out: list[tuple[str, int, int]] = []
    hand = game.hand_no
    while game.phase == SHOW and game.hand_no == hand:
        seat = game.to_act()[0]
        action = choose_action(game, seat, rng)
        if isinstance(action, Claim):
            entry = game.show_entry()
            assert entry is not None
            out.append((entry[1], action.points, _true_count(game)))
        game.apply(action)
    return out


def test_claims_the_true_count_of_every_hand_and_the_crib() -> None:
    whats: set[str] = set()
    for players in (2, 3, 4):
        for i in range(6):
            game = _to_first_claim(f"claim-{players}-{i}", players)
            claims = _claims(game, random.Random(i))
            for what, claimed, actual in claims:
                assert claimed == actual, (what, claimed, actual)
                whats.add(what)
            if not game.is_over:
                assert len(claims) == players + 1  # every hand, then the crib
    assert whats == {"hand", "crib"}


def test_the_crib_claim_counts_the_face_up_crib() -> None:
    tested = 0
    for i in range(10):
        game = _to_first_claim(f"crib-{i}")
        rng = random.Random(0)
        while not game.is_over and game.show_entry() not in (None, (game.dealer, "crib")):
            game.apply(choose_action(game, game.to_act()[0], rng))
        if game.show_entry() != (game.dealer, "crib"):
            continue
        view = player_view(game, game.dealer)
        assert len(view.showing) == 4 and set(view.laid_away) <= set(view.showing)
        crib = show_points(view.showing, view.starter, crib=True)
        assert choose_claim(view) == Claim(game.dealer, crib)
        tested += 1
    assert tested >= 5


def _answered(game: Game, claim: int) -> Action:
    after = game.copy()
    claimant = after.to_act()[0]
    after.apply(Claim(claimant, claim))
    responder = after.to_act()[0]
    return choose_action(after, responder, random.Random(0))


def test_calls_muggins_on_a_short_claim_only() -> None:
    tested = 0
    for players in (2, 3):
        for i in range(20):
            game = _to_first_claim(f"short-{players}-{i}", players)
            rng = random.Random(i)
            while game.phase == SHOW and not game.is_over:
                actual = _true_count(game)
                if actual:
                    short = _answered(game, actual - 1)
                    assert isinstance(short, Muggins), short
                    assert isinstance(_answered(game, actual), Accept)
                    tested += 1
                game.apply(Claim(game.to_act()[0], actual))
                while game.awaiting_muggins:
                    game.apply(choose_action(game, game.to_act()[0], rng))
    assert tested >= 40


def test_calls_muggins_on_a_short_crib_claim() -> None:
    tested = 0
    for i in range(20):
        game = _to_first_claim(f"short-crib-{i}")
        rng = random.Random(0)
        while not game.is_over and game.show_entry() not in (None, (game.dealer, "crib")):
            game.apply(choose_action(game, game.to_act()[0], rng))
        if game.show_entry() != (game.dealer, "crib") or not _true_count(game):
            continue
        actual = _true_count(game)
        assert _answered(game, actual - 1) == Muggins(1 - game.dealer)
        assert _answered(game, actual) == Accept(1 - game.dealer)
        tested += 1
    assert tested >= 5


def test_answer_without_the_claim_in_view() -> None:
    """A view whose events start after the claim (a status mail): the claim is unknown,
    and a muggins call costs nothing if the count was right."""
    for i in range(20):
        game = _to_first_claim(f"no-claim-{i}")
        if _true_count(game):
            break
    else:
        raise AssertionError("no scoring hand")
    claimant = game.to_act()[0]
    game.apply(Claim(claimant, _true_count(game)))
    responder = game.to_act()[0]
    status = player_view(game, responder, since=len(game.events))
    assert status.events == () and status.awaiting_muggins
    assert answer_claim(status) == Muggins(responder)
    full = player_view(game, responder)
    assert answer_claim(full) == Accept(responder)
    # An earlier claim of the same hand does not stand in for this one.
    earlier = replace(full, hand_no=full.hand_no + 1)
    assert answer_claim(earlier) == Muggins(responder)


def test_good_players_claim_hands_and_cribs_exactly() -> None:
    game = new_game(2, seed="honest", muggins=True)
    play_game(game, ["good", "good"], random.Random(2))
    claims: dict[str, int] = {"hand": 0, "crib": 0}
    events = game.events
    for i, event in enumerate(events):
        if event.kind != "claim":
            continue
        reveal = next((e for e in events[i:] if e.kind == "reveal"), None)
        if reveal is None:  # the claim ended the game
            continue
        claimed = int(event.detail.rsplit(" ", 1)[1])
        assert claimed == sum(item.points for item in reveal.items)
        claims[event.detail.split(":")[0]] += 1
    assert claims["hand"] >= 10 and claims["crib"] >= 5, claims
    assert not any(e.kind in ("muggins", "correction") and e.points for e in events)


# -- the crib tables ---------------------------------------------------------------


def test_crib_pair_table_is_exact() -> None:
    for a in range(1, 14):
        for b in range(a, 14):
            assert CRIB_PAIR_VALUE[a][b] == CRIB_PAIR_VALUE[b][a]
            assert CRIB_PAIR_VALUE[a][b] == pytest.approx(exact_pair_value(a, b), abs=5e-4)
    assert max((v, a, b) for a, row in CRIB_PAIR_VALUE.items() for b, v in row.items())[1:] == (
        5,
        5,
    )


@pytest.mark.parametrize("rank", [1, 5, 11, 13])
def test_crib_single_table_is_exact(rank: int) -> None:
    value = exact_crib_mean([Card(rank, Suit.HEARTS)])
    assert CRIB_SINGLE_VALUE[rank] == pytest.approx(value, abs=5e-4)
