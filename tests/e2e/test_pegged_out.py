"""Scores stop at the target, end to end on both databases: a game whose last count
takes the winner past 61 (the engine counts the show in full) is shown as "61, pegged
out" in the game-over mails (the score line, the final score, the board), in the replay
page of the ``archive`` reply, and in the ``games`` list of finished games."""

from __future__ import annotations

import json
import re
from email.message import EmailMessage

from engine import Game
from pbem.store import models as m
from tests.e2e.helpers import ALICE, BOB, SERVICE_ADDRESS, Harness, find_seed, plain_mail

A, B = ALICE[0], BOB[0]


def _past(game: Game) -> bool:
    return game.is_over and game.outcome is not None and max(game.outcome.scores) > 61


def _text(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content()).replace("\r\n", "\n")


def _html(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("html",))
    assert part is not None
    return str(part.get_content())


def test_a_score_past_the_target_is_shown_pegged_out(harness: Harness) -> None:
    h = harness
    seed = find_seed("past", _past)
    game_id = h.new_game((ALICE, BOB), seed=seed)
    game = h.play_until(game_id, lambda g: g.is_over)
    assert game.outcome is not None
    winner = game.outcome.winner
    raw = game.outcome.scores[winner]
    assert raw > 61  # what the engine counted
    loser = game.outcome.scores[1 - winner]
    for address in (A, B):
        over = h.latest(address)
        text = _text(over)
        (score,) = [line for line in text.splitlines() if line.startswith("Score: ")]
        assert "61, pegged out" in score and f" {loser}" in score and ";" in score, score
        assert str(raw) not in re.findall(r"\d+", text.split("Your cards")[0])
        assert re.search(r"Final score: .* 61, pegged out; .* " + str(loser) + r"\.", text)
        assert re.search(r"^\s+\S+\s+61 .*pegged out$", text, re.MULTILINE), text
        assert "61, pegged out" in _html(over)
    # The replay page of the archive: no state past the target, the result at 61.
    h.answer(A, "archive")
    pages = [
        part.get_content()
        for part in h.latest(A).iter_attachments()
        if part.get_content_type() == "text/html"
    ]
    assert pages
    data_json = pages[0].split('id="replay-data">', 1)[1].split("</script>", 1)[0]
    data = json.loads(data_json)
    assert max(max(state["f"]) for state in data["states"]) == 61
    # The mail's words about the page are what it opens on: Alice's own view, with
    # "everything" (every hand face up) in its View menu for a finished game.
    said = " ".join(_text(h.latest(A)).split())
    assert "it opens on your own view; choose “everything” in its View menu" in said
    assert data["seat"] == 0 and not data["hidden"]
    assert re.search(r", 61 to \d+", data["result"]), data["result"]
    # The list of finished games.
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "games"))
    assert h.last_inbound().status == "applied"
    listed = _text(h.latest(A))
    assert f"Game {game_id} v Bob: you " in listed
    assert re.search(rf"Game {game_id} v Bob: you \w+ (61–{loser}|{loser}–61)", listed), listed
    assert h.game_row(game_id).status == m.GameStatus.FINISHED.value
