""" "Which game?" keeps the command, end to end on both databases: a move sent to a reply
address that names no game of the player is answered with their games, and each game's
link sends the command the player wrote again, to that game's reply address — one click
applies it where it was meant."""

from __future__ import annotations

from tests.e2e.helpers import ALICE, Harness, about, reply
from tests.e2e.mailto import click, links_in

A = ALICE[0]


def test_which_game_links_carry_the_command(harness: Harness) -> None:
    h = harness
    game = h.new_game(seed="which-keeps")
    move = "discard " + " ".join(c.ascii for c in sorted(h.game(game).holding(0))[:2])
    fake = f"cribbage+{'z' * 20}@{h.settings.domain}"
    h.deliver(reply(h.latest(A), A, "Alice", move, to=fake, threading=False))
    assert h.last_inbound().status == "rejected"
    which = h.latest(A)
    assert "Which game?" in about(which)
    (link,) = links_in(which)
    assert link.body == move
    assert link.to == (f"cribbage+{h.token(game, 0)}@{h.settings.domain}",)
    h.deliver(click(link, A))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert len(h.log(game)) == 1 and h.log(game)[0][1] == 0
