"""``pbem game replay ID --as PLAYER`` shows the game as that player saw it: their own
cards and discards, the public moves and shows, and never a card another player held
hidden at that moment (their hand, their discards into the crib) before it was shown."""

from __future__ import annotations

import itertools
import json
import random
import re
from pathlib import Path

import pytest
from sqlalchemy import Engine

from engine import Discard, Event, Game, new_game, parse_card, to_archive
from engine.cards import Card
from tests.e2e.helpers import cli_env, hidden_from, run_cli

NAMES = ("Alice", "Bob", "Carol", "Dave")
CARD = re.compile(r"(?<![0-9A-Za-z])(10|[2-9AJQK])([♣♦♥♠])")
STEP = re.compile(r"^#(\d+) ", re.MULTILINE)


def _random_game(players: int, seed: str) -> Game:
    game = new_game(players, seed=seed, target=61, muggins=players == 3)
    rng = random.Random(seed)
    while not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
    return game


def _cards(text: str) -> set[Card]:
    return {parse_card(rank + suit) for rank, suit in CARD.findall(text)}


def _imported(tmp_path: Path, db_url: str, game: Game) -> tuple[dict[str, str | None], str]:
    archive = to_archive(
        game,
        players=[
            {"email": f"{name.lower()}@example.com", "name": name} for name in NAMES[: game.players]
        ],
    )
    path = tmp_path / "game.json"
    path.write_text(json.dumps(archive), encoding="utf-8")
    env = cli_env(tmp_path, db_url)
    imported = run_cli(env, "game", "import", str(path))
    assert imported.exit_code == 0, imported.output
    match = re.search(r"imported as game (\d+)", imported.stdout)
    assert match, imported.stdout
    return env, match.group(1)


def _steps(output: str) -> list[str]:
    """The output cut at each move's line: [before the first move, move 0, move 1, …]."""
    starts = [m.start() for m in STEP.finditer(output)]
    bounds = [0, *starts, len(output)]
    return [output[a:b] for a, b in itertools.pairwise(bounds)]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_replay_as_a_player_never_shows_another_seats_hidden_cards(
    tmp_path: Path, db_url: str, db_engine: Engine, players: int
) -> None:
    final = _random_game(players, f"replay-as-{players}")
    env, game_id = _imported(tmp_path, db_url, final)
    admin = run_cli(env, "game", "replay", game_id)
    assert admin.exit_code == 0, admin.output
    assert len(_steps(admin.stdout)) == len(final.actions) + 1

    for seat in range(players):
        result = run_cli(env, "game", "replay", game_id, "--as", NAMES[seat])
        assert result.exit_code == 0, result.output
        chunks = _steps(result.stdout)
        assert len(chunks) == len(final.actions) + 1
        # Walk the game again beside the output: each chunk is what was printed after
        # its move, so it may name only cards this seat could know at that moment.
        game = new_game(players, seed=final.seed, target=61, muggins=players == 3)
        since = 0
        others_shown: set[Card] = set()
        for step, chunk in enumerate(chunks):
            if step:
                action = final.actions[step - 1]
                game.apply(action)
                if isinstance(action, Discard):
                    laid = " ".join(str(c) for c in action.cards)
                    if action.seat == seat:
                        assert f"discard {laid}" in chunk
                    else:
                        assert "lays away" in chunk and laid not in chunk
            told: tuple[Event, ...] = tuple(game.events[since:])
            since = len(game.events)
            leaked = _cards(chunk) & hidden_from(game, seat, told)
            assert not leaked, (seat, step, sorted(map(str, leaked)), chunk)
            others_shown |= {
                c
                for e in told
                if e.kind in ("show", "claim", "reveal") and e.seat != seat and e.private_to is None
                for c in e.cards
            } & _cards(chunk)
        # Not too little either: other players' hands are printed once they are shown.
        assert others_shown, f"no other seat's shown hand in the replay as seat {seat}"
    # The admin's replay shows everything, discards included.
    discards = [a for a in final.actions if isinstance(a, Discard)]
    assert all(f"discard {' '.join(str(c) for c in a.cards)}" in admin.stdout for a in discards)
