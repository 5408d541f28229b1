"""Linked games and games never dealt, as verification sees them: the loser-deals-first
rule from a result alone (`loser_deals_first`), `check_first_dealer` on an archive's
``deal_proof.follows``, `check_unplayed` for a game aborted before its deal, and
`text_hash`."""

from __future__ import annotations

import hashlib
import random
from typing import Any

import pytest

from engine import Game, Resign, new_game
from engine.fairness import (
    FOLLOW_RULE,
    check_first_dealer,
    check_unplayed,
    commitment,
    text_hash,
)
from engine.match import first_dealer_after, loser_deals_first
from engine.players import choose_action


def finished(players: int, seed: str) -> Game:
    game = new_game(players, seed=seed, target=61)
    rng = random.Random(seed)
    while not game.is_over:
        game.apply(choose_action(game, game.to_act()[0], rng, "random"))
    return game


def follows_of(game: Game) -> dict[str, Any]:
    assert game.outcome is not None
    return {
        "game": 7,
        "state_hash": game.state_hash(),
        "scores": list(game.outcome.scores),
        "winner": game.outcome.winner,
        "dealer": game.dealer,
        "rule": FOLLOW_RULE,
    }


def record(players: int, first_dealer: int | None, follows: Any) -> dict[str, Any]:
    return {
        "settings": {"players": players, "first_dealer": first_dealer},
        "deal_proof": {"commitment": "c", "follows": follows},
    }


@pytest.mark.parametrize(
    ("players", "seed"),
    [(2, "l2a"), (2, "l2b"), (3, "l3a"), (3, "l3b"), (4, "l4a"), (4, "l4b")],
)
def test_the_rule_from_the_result_alone_is_the_engines(players: int, seed: str) -> None:
    game = finished(players, seed)
    follows = follows_of(game)
    want = first_dealer_after(game)
    assert (
        loser_deals_first(players, follows["dealer"], follows["scores"], follows["winner"]) == want
    )
    assert check_first_dealer(record(players, want, follows)) is None
    for other in range(players):
        if other != want:
            verdict = check_first_dealer(record(players, other, follows))
            assert verdict is not None and verdict.check == "first_dealer"
            assert f"seat {want} deals first, the archive says {other}" in verdict.detail


def test_a_three_player_tie_goes_to_the_first_loser_after_the_dealer() -> None:
    # Seats 0 and 2 lost with 40 each; seat 2 dealt last, so seat 0 is next in turn.
    assert loser_deals_first(3, 2, [40, 61, 40], 1) == 0
    assert loser_deals_first(3, 0, [40, 61, 40], 1) == 2
    # Partners: side 1 lost; the first of seats 1 and 3 after the dealer deals.
    assert loser_deals_first(4, 0, [61, 50], 0) == 1
    assert loser_deals_first(4, 2, [61, 50], 0) == 3


@pytest.mark.parametrize(
    ("players", "dealer", "scores", "winner"),
    [(2, 0, [61], 0), (2, 0, [61, 3], 2), (3, 5, [1, 2, 61], 2), (4, 0, [61, 2, 3, 4], 0)],
)
def test_a_result_that_is_not_one_is_refused(
    players: int, dealer: int, scores: list[int], winner: int
) -> None:
    with pytest.raises(ValueError, match="not the result"):
        loser_deals_first(players, dealer, scores, winner)


def test_without_follows_the_first_dealer_is_drawn() -> None:
    assert check_first_dealer(record(2, None, None)) is None
    verdict = check_first_dealer(record(2, 1, None))
    assert verdict is not None and verdict.check == "first_dealer"
    assert "follows no other game" in verdict.detail
    # An archive made before games were linked has no "follows" key: nothing to check.
    old = {"settings": {"players": 2, "first_dealer": 1}, "deal_proof": {"commitment": "c"}}
    assert check_first_dealer(old) is None


@pytest.mark.parametrize(
    "follows",
    [
        {"rule": "winner-deals-first", "dealer": 0, "scores": [61, 3], "winner": 0},
        {"rule": FOLLOW_RULE, "scores": [61, 3], "winner": 0},
        {"rule": FOLLOW_RULE, "dealer": 0, "scores": "61,3", "winner": 0},
        {"rule": FOLLOW_RULE, "dealer": 0, "scores": [61, 3], "winner": 4},
        "game 3",
    ],
)
def test_an_unreadable_follows_is_a_mismatch(follows: Any) -> None:
    verdict = check_first_dealer(record(2, 1, follows))
    assert verdict is not None and verdict.check == "first_dealer"
    assert verdict.detail.startswith("unreadable follows")


def unplayed(seed: str | None, **changes: Any) -> dict[str, Any]:
    proof = {"commitment": commitment("s" * 64), "server_seed": seed, "outcome": "aborted"}
    return {"seed": None, "actions": [], "deal_proof": proof, **changes}


def test_a_game_aborted_before_its_deal_checks_its_commitment() -> None:
    verdict = check_unplayed(unplayed("s" * 64))
    assert verdict is not None and verdict.ok and verdict.deals == 0
    wrong = check_unplayed(unplayed("t" * 64))
    assert wrong is not None and wrong.check == "commitment"
    assert commitment("t" * 64) in wrong.detail
    hidden = check_unplayed(unplayed(None))
    assert hidden is not None and hidden.check == "commitment" and "not revealed" in hidden.detail
    played = check_unplayed(unplayed("s" * 64, actions=[{"type": "go", "seat": 0}]))
    assert played is not None and played.check == "replay"
    # A dealt game, or one still cutting, is verified the usual way.
    assert check_unplayed({**unplayed("s" * 64), "seed": "k"}) is None
    running = unplayed(None)
    running["deal_proof"]["outcome"] = None
    assert check_unplayed(running) is None


def test_text_hash_is_the_sha256_of_the_utf8_text() -> None:
    text = "<id@example.com> 17 éléphants"
    assert text_hash(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert text_hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_a_resigned_game_links_like_a_played_one() -> None:
    game = new_game(3, seed="resigned", target=61)
    game.apply(Resign(1))
    follows = follows_of(game)
    assert check_first_dealer(record(3, first_dealer_after(game), follows)) is None
