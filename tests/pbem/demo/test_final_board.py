"""The final board of ``pbem demo``: the board a mail draws, labelled with the players'
names, the winner's side first."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from engine import player_view
from pbem.render import named_board, render_board_text, render_turn
from pbem.render.board import build_board
from pbem.render.words import People
from tests.cli_process import PBEM
from tests.e2e.helpers import fresh_env
from tests.pbem.test_render import NAMES, ctx_for, play


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_named_board_is_the_mails_board_with_names_and_the_winner_first(
    players: int,
) -> None:
    *_, last = play(players, f"final-{players}", target=61)
    game = last.game
    assert game.is_over and game.outcome is not None
    board = named_board(player_view(game, 0), NAMES[:players])
    fronts = [line.front for line in board.scores]
    assert fronts == sorted(fronts, reverse=True)
    winner_side = game.side_of(game.outcome.winner_seats[0])
    assert board.scores[0].front == min(game.scores[winner_side], 61) == 61  # pegged out
    labels = [line.label for line in board.scores]
    if players == 4:  # partnerships: seats 0 & 2 against 1 & 3
        assert sorted(labels) == ["Alice & Carol", "Bob & Dave"]
    else:
        assert sorted(labels) == sorted(NAMES[:players])
    text = render_board_text(board)
    assert text.startswith("Scores — game to 61\n")
    assert f"61 game hole: {labels[0]} ●" in text
    for label, line in zip(labels, board.scores, strict=True):
        assert re.search(rf"^  {re.escape(label)} +{line.front} ", text, re.MULTILINE), text

    # The same drawing as the mail's: the recipient's own board, drawn by the same code,
    # is word for word in the mail's text part.
    mail = render_turn(player_view(game, 0), ctx_for(game, 0))
    assert "You" in mail.text
    mine = render_board_text(
        build_board(player_view(game, 0), People(player_view(game, 0), ctx_for(game, 0)))
    )
    assert mine.strip("\n") in mail.text


def test_the_demo_ends_with_the_final_board_winner_first(tmp_path: Path) -> None:
    done = subprocess.run(
        [*PBEM, "demo", "--to", "61", "--quiet", "--dir", str(tmp_path / "demo")],
        cwd=tmp_path,
        env=fresh_env(),
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    heading = next(i for i, line in enumerate(lines) if "Final board" in line)
    assert set(lines[heading].replace("Final board", "")) == {"─", " "}
    result = re.fullmatch(
        r"(Alice|Bob) (\d+) — (Alice|Bob) (\d+) \((Alice|Bob) wins\)", lines[heading + 1]
    )
    assert result, lines[heading + 1]
    first, high, second, low, winner = result.groups()
    assert {first, second} == {"Alice", "Bob"}
    assert winner == first and int(high) >= 61 > int(low)
    board = "\n".join(lines[heading + 2 :])
    assert "Scores — game to 61" in board
    assert re.search(rf"^  {first} +{high} .*pegged out$", board, re.MULTILINE), board
    assert re.search(rf"^  {second} +{low} .*{61 - int(low)} to go$", board, re.MULTILINE)
    assert f"61 game hole: {first} ●" in board
    assert board.index(f"  {first}  ") < board.index(f"  {second}  ")
    assert re.search(r"^\d+ replies by email in [\d.]+ s; game value \d$", board, re.MULTILINE)
    assert re.search(r"replay it:\s+pbem --data-dir \S+ game replay \d+ --verify", board)
