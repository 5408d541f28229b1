"""The replay page's data and HTML (no browser): a running game's page holds only one
seat's view, never a hidden card nor the seeds; names cannot break out of the page's
script; the result's words; the failures."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from engine import Card, Outcome, parse_card, replay_archive
from engine.game import Event
from pbem.render.replay import ReplayPageError, replay_data, replay_page, result_words
from tests.e2e.helpers import hidden_from
from tests.pbem.replay.proofs import proof_archive

CARD = re.compile(r'"((?:10|[2-9AJQK])[CDHS])"|((?:10|[2-9AJQK])[♣♦♥♠])')
SUITS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}


def _named(blob: Any) -> set[Card]:
    """Every card a piece of the page's data names (ASCII or with a suit symbol)."""
    text = json.dumps(blob, ensure_ascii=False)
    found = set()
    for ascii_card, symbol_card in CARD.findall(text):
        found.add(parse_card(ascii_card or symbol_card[:-1] + SUITS[symbol_card[-1]]))
    return found


def _embedded(html: str) -> dict[str, Any]:
    match = re.search(
        r'<script type="application/json" id="replay-data">(.*?)</script>', html, re.S
    )
    assert match
    return json.loads(match.group(1))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_running_games_page_holds_no_card_hidden_from_its_player(players: int) -> None:
    archive = proof_archive(players, target=61, stop_after=45, muggins=players == 3)
    games = list(replay_archive(archive))
    assert not games[-1].is_over
    for seat in range(players):
        page = replay_page(archive, seat=seat)
        data = _embedded(page.html)
        assert data["seed"] is None and data["deal_proof"] is None and data["hidden"]
        assert archive["seed"] not in page.html
        assert archive["deal_proof"]["commitment"] not in page.html
        told: list[Event] = []
        for game, state in zip(games, data["states"], strict=True):
            told = [e for e in game.events if e.private_to in (None, seat)]
            leaked = _named(state) & hidden_from(game, seat, told)
            assert not leaked, (seat, state)
            for other in range(players):
                if other != seat:
                    assert isinstance(state["hold"][other], int)
            assert isinstance(state["crib"], int)


def test_a_finished_games_page_holds_everything_and_the_proof() -> None:
    archive = proof_archive(3, target=61)
    data = replay_data(archive, seat=2)
    assert data["seat"] == 2 and not data["hidden"] and data["over"]
    assert data["seed"] == archive["seed"]
    assert data["deal_proof"] == archive["deal_proof"]
    games = list(replay_archive(archive))
    for game, state in zip(games, data["states"], strict=True):
        assert state["hold"] == [[c.ascii for c in sorted(game.holding(s))] for s in range(3)]
        assert state["crib"] == [c.ascii for c in sorted(game.crib())]
        pegged = [min(s, game.settings.target) for s in game.scores]  # stops at the target
        assert state["f"] == pegged and state["b"] == list(game.back_pegs)


def test_a_running_game_needs_a_seat_and_a_seat_must_exist() -> None:
    running = proof_archive(2, target=61, stop_after=10)
    with pytest.raises(ReplayPageError, match="still running"):
        replay_page(running)
    with pytest.raises(ReplayPageError, match="no seat 5"):
        replay_page(running, seat=5)


def test_an_archive_that_does_not_replay_is_refused() -> None:
    archive = proof_archive(2, target=61)
    broken = copy.deepcopy(archive)
    broken["actions"][3] = {"type": "play", "seat": 0, "card": "KS"}
    with pytest.raises(ReplayPageError, match="does not replay"):
        replay_page(broken)
    with pytest.raises(ReplayPageError, match="does not replay"):
        replay_page({"format": "something else"})


def test_names_cannot_break_out_of_the_page() -> None:
    archive = proof_archive(2, target=61)
    evil = "</script><script>alert(1)</script><!--"
    archive["players"][0]["name"] = evil
    html = replay_page(archive).html
    assert "<script>alert" not in html
    assert html.count("</script>") == 2  # the data and the page's own script
    assert _embedded(html)["names"][0] == evil


def test_result_words_name_the_skunk() -> None:
    names = ["Alice", "Bob", "Carol", "Dave"]
    double = Outcome(0, (0,), (121, 80), "target", {1: 2})
    assert result_words(double, names[:2], "skunk", 121) == (
        "Alice wins, 121 to 80: a double game (Bob is skunked)"
    )
    quadruple = Outcome(1, (1,), (50, 121), "target", {0: 4})
    assert result_words(quadruple, names[:2], "skunk", 121) == (
        "Bob wins, 121 to 50: a quadruple game (Alice is double skunked)"
    )
    lurch = Outcome(1, (1, 3), (40, 121), "target", {0: 2})
    assert result_words(lurch, names, "lurch", 121) == (
        "Bob and Dave win, 121 to 40: a double game (Alice and Carol are lurched)"
    )
    three = Outcome(2, (2,), (100, 95, 121), "resigned", {0: 1, 1: 1})
    assert result_words(three, names[:3], "skunk", 121) == (
        "Carol wins, 121 to 100 (resigned): a single game"
    )
    # A last show that counts past the target: the result stops at it.
    past = Outcome(0, (0,), (135, 98), "target", {1: 1})
    assert result_words(past, names[:2], "skunk", 121).startswith("Alice wins, 121 to 98")


def test_the_tests_proofs_follow_the_protocol() -> None:
    """The helper that builds these tests' proofs agrees with the spec's test vector and
    with `engine.fairness` (so the page is checked against the protocol, not itself)."""
    from engine.dealcheck import verify_archive
    from engine.fairness import PROTOCOL_1
    from engine.fairness import derive_seed as engine_derive
    from tests.pbem.replay.proofs import derive_seed

    # The helper's proofs are pbem-deal/1 ones (the page verifies those still).
    vector = "16275ef0f5d0eb9dd9e0a53277549fda5c886358a6872df23c797b13e11455bc"
    assert derive_seed("a", ["b"]) == engine_derive("a", ["b"], PROTOCOL_1) == vector
    for players in (2, 3, 4):
        archive = proof_archive(players, target=61)
        assert any("🐘" in e["text"] for e in archive["deal_proof"]["entropy"])
        verdict = verify_archive(archive)
        assert verdict.ok, verdict.message
