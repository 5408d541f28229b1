"""Sub-addressing: a player registered as alice@example.com who replies from
alice+games@example.com (or the other way round) is told what happened, or — with
``match_plus_tags`` — is that player."""

from __future__ import annotations

import pytest

from pbem.demo.bots import text_of
from pbem.mail.address import without_tag
from tests.e2e.helpers import BOB, SERVICE_ADDRESS, Harness, about, plain_mail, reply

ALICE = ("alice@example.com", "Alice")
TAGGED = ("alice+games@example.com", "Alice")
B = BOB[0]
CONFIRM_SUBJECT = "[Cribbage] Please confirm your request"


@pytest.mark.parametrize(
    ("address", "bare"),
    [
        ("a+games@x.test", "a@x.test"),
        ("a+b+c@x.test", "a@x.test"),
        ("a@x.test", "a@x.test"),
        ("+only@x.test", "+only@x.test"),
        ("a+x", "a+x"),
    ],
)
def test_without_tag(address: str, bare: str) -> None:
    assert without_tag(address) == bare


def _discard(h: Harness, game: int) -> str:
    cards = sorted(h.game(game).holding(0))[:2]
    return "discard " + " ".join(c.ascii for c in cards)


def _setting(h: Harness, on: bool) -> None:
    h.restart()
    h.daemon.service.settings = h.settings.model_copy(update={"match_plus_tags": on})


# (registered as, replies from): both directions.
DIRECTIONS = [(ALICE, TAGGED), (TAGGED, ALICE)]


@pytest.mark.parametrize(("registered", "writer"), DIRECTIONS)
def test_another_tag_is_told_and_no_move_is_made(
    harness: Harness, registered: tuple[str, str], writer: tuple[str, str]
) -> None:
    h = harness
    _setting(h, False)
    game = h.new_game((registered, BOB), seed="tags-off")
    before = h.counts((registered[0], writer[0], B))
    h.deliver(reply(h.latest(registered[0]), writer[0], "Alice", _discard(h, game)))
    row = h.last_inbound()
    assert row.status == "rejected" and "+tags do not match" in (row.reason or "")
    assert h.log(game) == []
    after = h.counts((registered[0], writer[0], B))
    assert after[writer[0]] == before[writer[0]] + 1  # the sender is told
    assert after[registered[0]] == before[registered[0]]
    assert after[B] == before[B]
    told = h.latest(writer[0])
    assert "Not your game address" in about(told)
    assert registered[0] in " ".join(text_of(told).split())
    assert told["Reply-To"] is None  # no token in the explanation


@pytest.mark.parametrize(("registered", "writer"), DIRECTIONS)
def test_with_match_plus_tags_the_tagged_address_is_the_player(
    harness: Harness, registered: tuple[str, str], writer: tuple[str, str]
) -> None:
    h = harness
    _setting(h, True)
    game = h.new_game((registered, BOB), seed="tags-on")
    h.deliver(reply(h.latest(registered[0]), writer[0], "Alice", _discard(h, game)))
    row = h.last_inbound()
    assert row.status == "applied", row.reason
    assert len(h.log(game)) == 1
    assert h.latest(registered[0])["To"] is not None
    assert registered[0] in str(h.latest(registered[0])["To"])


def test_another_mailbox_is_still_not_the_player(harness: Harness) -> None:
    h = harness
    _setting(h, True)
    game = h.new_game((ALICE, BOB), seed="tags-other")
    before = h.counts((ALICE[0], "alicia+games@example.com"))
    h.deliver(reply(h.latest(ALICE[0]), "alicia+games@example.com", "A", _discard(h, game)))
    row = h.last_inbound()
    assert row.status == "ignored" and "unknown sender" in (row.reason or "")
    assert h.log(game) == []
    assert h.counts((ALICE[0], "alicia+games@example.com")) == before


def test_with_match_plus_tags_a_tagged_plain_mail_finds_the_player(harness: Harness) -> None:
    """A mail to the plain address from alice+games@ is alice@'s when +tags match: with one
    game it is taken as a reply to it; with tags not matching, the sender is a stranger."""
    h = harness
    _setting(h, False)
    game = h.new_game((ALICE, BOB), seed="tags-plain")
    h.deliver(plain_mail(TAGGED[0], SERVICE_ADDRESS, _discard(h, game)))
    assert h.last_inbound().status == "ignored"
    assert h.log(game) == []
    _setting(h, True)
    h.deliver(plain_mail(TAGGED[0], SERVICE_ADDRESS, _discard(h, game)))
    # Alice's game's move, but by a From alone: held until the writer confirms, with one
    # click on the one confirmation request mailed to the address that wrote.
    held = h.last_inbound()
    assert held.status == "applied" and "held until" in (held.reason or ""), held.reason
    assert held.game_id == game and h.log(game) == []
    assert [about(msg) for msg in h.received(TAGGED[0])] == [CONFIRM_SUBJECT]
    row = h.confirm(TAGGED[0])
    assert row.status == "applied", row.reason
    assert len(h.log(game)) == 1
