"""One click a move, end to end on SQLite: a whole fair game played by clicking
the ``mailto:`` links of the HTML parts alone — the cut, every discard and card, the hint
mail's table and prompt, the game-over mail's rematch and the rematch invitation's
accept — and a challenge accepted in one click.

Each link is read as RFC 6068 says (tests/e2e/mailto.py), checked to go to the mail's
Reply-To with "Re: " and the mail's subject, and sent back as a mail client sends it:
a new mail (no In-Reply-To), From the player, To the link's address, with the link's
Subject and body. Then the test checks that exactly that move was made: the game log's
next action is the player's own (not made for them) and is the link's command; the cut is
recorded; the rematch and the challenge start their games. Every turn mail's links are
checked against the legal moves: each link is legal, and every legal play (and every
discard: all fifteen pairs with two players, each card with three or four) has its link.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from email.message import EmailMessage
from email.utils import parseaddr
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from engine import DISCARD, PEGGING, action_from_json
from pbem.demo.bots import command_for, text_of
from pbem.render.invite import SUBJECT as INVITE_SUBJECT
from pbem.render.links import DISCARD_LINKS
from pbem.store import models as m
from tests.e2e.helpers import ALICE, BOB, CAROL, SERVICE_ADDRESS, Harness, about, plain_mail
from tests.e2e.mailto import Mailto, click, links_in

# What the mails say does not depend on the database: these checks of the words run on
# SQLite only. Every database path they take runs on both backends in the other e2e tests
# (commands, refusals, crashes, batches), so a second copy here would only read the same
# mails again, at a cost that mattered to the suite's time limit.
pytestmark = [
    pytest.mark.parametrize("db_url", ["sqlite"], indirect=True),
    pytest.mark.timeout(600),
]

A, B, C = ALICE[0], BOB[0], CAROL[0]


@pytest.fixture
def fair(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    """The service harness with fair deals on: a new game starts with the cut."""
    harness = Harness.build(tmp_path, db_url, db_engine, fair_deals=True)
    yield harness
    harness.close()


def checked_links(msg: EmailMessage) -> list[Mailto]:
    """The mail's links, each to the mail's Reply-To with "Re: " and the mail's subject;
    the text part has none."""
    links = links_in(msg)
    reply_to = parseaddr(str(msg["Reply-To"]))[1]
    for link in links:
        assert link.to == (reply_to,), (link.to, reply_to)
        if link.subject != f"Re: {msg['Subject']}":
            # The grid of pairs: the command alone, to keep the mail under its bound.
            assert link.subject == "" and link.body.startswith("discard "), link
    text = msg.get_body(preferencelist=("plain",))
    assert text is not None and "mailto:" not in str(text.get_content())
    return links


def press(h: Harness, link: Mailto, sender: str) -> None:
    """``sender`` clicks ``link`` and presses Send; the service applies it."""
    h.deliver(click(link, sender))
    inbound = h.last_inbound()
    assert inbound.status == "applied", (link.body, inbound.reason)


def played(h: Harness, game_id: int, seat: int, link: Mailto, sender: str) -> None:
    """Click a move's link; the log's next action is exactly that move, the player's own."""
    before = len(h.log(game_id))
    press(h, link, sender)
    made = h.log(game_id)[before:]
    assert made, f"{link.body} made no move"
    _, who, action, auto = made[0]
    assert (who, auto) == (seat, False)
    assert command_for(action_from_json(action)).lower() == link.body


MOVE_VERBS = ("discard", "play", "go", "accept", "muggins")


def moves(links: list[Mailto]) -> list[Mailto]:
    """The links that make a move (a mail offers others too: "hint", "archive", …)."""
    return [link for link in links if link.body.split()[0] in MOVE_VERBS]


def one(links: list[Mailto], body: str) -> Mailto:
    (found,) = [link for link in links if link.body == body]
    return found


def test_a_whole_game_played_by_clicking_links(fair: Harness) -> None:
    h = fair
    people = {0: A, 1: B}
    game_id = h.service.new_game([ALICE, BOB], target=61)
    h.step()
    assert h.game_row(game_id).status == "cutting"

    # The cut for the deal: one click each.
    for seat, address in people.items():
        links = checked_links(h.latest(address))
        assert [link.body for link in links] == ["cut"]
        press(h, links[0], address)
        cut = {int(e["seat"]): str(e["text"]) for e in h.game_row(game_id).entropy or ()}
        assert seat in cut and cut[seat].startswith("<")  # the click's Message-ID is the cut
    assert h.game_row(game_id).status == "active"

    for address in people.values():
        h.answer(address, "hints on")
    assert h.game_row(game_id).hints

    rng = random.Random(22)
    clicked: Counter[str] = Counter()
    hinted: set[str] = set()
    while not (game := h.game(game_id)).is_over:
        seat = game.to_act()[0]
        address = people[seat]
        # The newest mail with moves (a note, "hints on" answered, has none: no board).
        links = next(
            found for msg in reversed(h.received(address)) if (found := moves(checked_links(msg)))
        )
        offered = [link.body for link in links]
        legal = {command_for(a).lower() for a in game.legal_actions(seat)}
        assert offered and set(offered) <= legal
        if game.phase == DISCARD:
            assert len(offered) == len(set(offered)) == DISCARD_LINKS
        else:
            assert game.phase == PEGGING and set(offered) == legal
        kind = "discard" if game.phase == DISCARD else "play"
        if kind not in hinted and (kind == "discard" or len(legal) > 1):
            # The hint mail: its table's discards, or its prompt's cards, in one click.
            hinted.add(kind)
            h.answer(address, "hint")
            hint = h.latest(address)
            assert "Hint" in about(hint)
            links = moves(checked_links(hint))
            offered = [link.body for link in links]
            assert offered and set(offered) <= legal
            if kind == "discard":
                assert len(offered) == 6  # the table's rows, the best first
            else:
                assert set(offered) == legal
            kind = f"hint {kind}"
        link = links[-1] if kind.startswith("hint") else rng.choice(links)
        played(h, game_id, seat, link, address)
        clicked[kind] += 1
    assert clicked["discard"] and clicked["play"], clicked
    assert clicked["hint discard"] == 1 and clicked["hint play"] == 1, clicked

    # The game-over mails offer a rematch; Alice's click invites Bob, whose accept starts it.
    for address in people.values():
        over = h.latest(address)
        assert "Game over" in about(over)
        offers = [link.body for link in checked_links(over)]
        assert offers == ["rematch", "rematch best of 3", "archive"]
    press(h, checked_links(h.latest(A))[0], A)
    (invite,) = [msg for msg in h.received(B) if str(msg["Subject"]) == INVITE_SUBJECT]
    links = checked_links(invite)
    assert [link.body for link in links] == ["accept", "decline", "never"]
    press(h, one(links, "accept"), B)
    started = h.last_inbound().game_id
    assert started is not None and started != game_id
    assert h.game_row(started).rematch_of == game_id
    assert {h.address_of(started, s) for s in (0, 1)} == {A, B}


def test_a_challenge_is_accepted_in_one_click(harness: Harness) -> None:
    h = harness
    h.new_game()  # Alice plays a game already: she may challenge
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "challenge carol@example.net to 61"))
    held = h.last_inbound()
    assert held.status == "applied" and "held until" in (held.reason or ""), held.reason
    # Her From alone proves nothing: she confirms it in one click too.
    asking = h.latest(A)
    assert str(asking["Subject"]) == "[Cribbage] Please confirm your request"
    confirm = checked_links(asking)
    assert [link.body for link in confirm] == ["yes", "never"]
    assert not [msg for msg in h.received(C) if str(msg["Subject"]) == INVITE_SUBJECT]
    press(h, one(confirm, "yes"), A)
    (invite,) = [msg for msg in h.received(C) if str(msg["Subject"]) == INVITE_SUBJECT]
    links = checked_links(invite)
    assert [link.body for link in links] == ["accept", "decline", "never"]
    press(h, one(links, "accept"), C)
    game_id = h.last_inbound().game_id
    assert game_id is not None
    assert [h.address_of(game_id, s) for s in (0, 1)] == [A, C]
    with Session(h.db) as session:
        (row,) = session.exec(select(m.Invitation).where(m.Invitation.invitee == C)).all()
        assert row.status == "accepted"
    # The game's first mail holds Carol's cards (a game without hints links no pair of
    # cards to lay away: ranking them would be a free hint; its plays are linked).
    assert "your turn" in about(h.latest(C)) and h.view(C).holding
    assert "discard two of" in text_of(h.latest(C))
