"""archive: a game as a JSON archive — the file the ``archive`` answer attaches.

`game_archive` is the engine's archive with the service's record around it: the
players, the computer seats and their levels (`computer_list`), and the deal proof of a
fair game once its seed may be shown. `archive_bytes` is its file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from engine import Game, to_archive
from pbem.service.context import Seated
from pbem.service.game.deals import archive_players, computer_seats, deal_proof, timeout_list
from pbem.store import models as m


def game_archive(
    game_row: m.Game,
    game: Game,
    seats: Sequence[Seated],
    cuts: Sequence[m.CutMail] = (),
) -> dict[str, Any]:
    """The JSON archive of a game (`pbem game export`, and the ``archive`` reply).

    A fair game's ``deal_proof`` reveals the server seed only once it is finished or
    aborted, and lists its cut mails (``cuts``: `pbem.store.games.cut_mails`); a game of
    a match names it (``match``: its length, the game's number, the score before)."""

    extra: dict[str, Any] = {}
    proof = deal_proof(game_row, cuts, game)
    if proof is not None:
        extra["deal_proof"] = proof
    if game_row.match_info:
        extra["match"] = dict(game_row.match_info)
    if game_row.rematch_of is not None:
        extra["rematch_of"] = game_row.rematch_of
    if game_row.finished_at is not None:
        extra["finished_at"] = game_row.finished_at.isoformat()
    timeouts = timeout_list(game_row)
    if timeouts:
        extra["timeouts"] = timeouts
    return to_archive(
        game,
        game_id=game_row.id,
        players=archive_players(game_row, seats),
        status=game_row.status,
        created_at=game_row.created_at.isoformat(),
        computer=computer_list(game_row),
        **extra,
    )


def computer_list(game_row: m.Game) -> list[dict[str, Any]]:
    """The archive's ``computer`` (`pbem.service.game.deals.computer_seats`)."""
    return computer_seats(game_row)


def archive_bytes(data: dict[str, Any]) -> bytes:
    """An archive as the file `pbem game export` writes."""
    return (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
