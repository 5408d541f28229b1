"""A move sent again after it was made gets "already done", not a refusal: the same mail
delivered twice, a player repeating a discard, a card the service played for the player."""

from __future__ import annotations

from engine import PEGGING, Discard, Play, action_from_json
from pbem.demo.bots import text_of
from tests.e2e.helpers import ALICE, BOB, Harness, reply

A, B = ALICE[0], BOB[0]


def flat(text: str) -> str:
    return " ".join(text.split())


def discard_words(h: Harness, game_id: int, seat: int) -> tuple[str, str]:
    """The command laying away a seat's two lowest cards, and the cards as mails show them."""
    cards = sorted(h.game(game_id).holding(seat))[:2]
    return "discard " + " ".join(c.ascii.lower() for c in cards), " ".join(map(str, cards))


def test_the_same_discard_delivered_twice_is_already_done(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="twice")
    command, shown = discard_words(h, gid, 0)
    first = reply(h.latest(A), A, "Alice", command, message_id="<one@client.test>")
    again = reply(h.latest(A), A, "Alice", command, message_id="<two@client.test>")
    h.deliver(first)
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    before = h.counts((A, B))

    h.deliver(again)
    row = h.last_inbound()
    assert row.status == "rejected" and row.reason == f"already done: {command}"
    assert len(h.log(gid)) == 1
    text = flat(text_of(h.latest(A)))
    assert f"[already] {command} — already done: you laid away {shown}." in text
    assert "do not hold" not in text and "refused" not in text
    assert h.counts((A, B)) == {A: before[A] + 1, B: before[B]}


def test_both_copies_in_one_batch(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="twice")
    command, shown = discard_words(h, gid, 0)
    h.send(reply(h.latest(A), A, "Alice", command, message_id="<one@client.test>"))
    h.send(reply(h.latest(A), A, "Alice", command, message_id="<two@client.test>"))
    h.step()
    rows = h.inbound()[-2:]
    assert [r.status for r in rows] == ["applied", "rejected"], [r.reason for r in rows]
    assert len(h.log(gid)) == 1
    assert f"already done: you laid away {shown}." in flat(text_of(h.latest(A)))


def test_a_discard_sent_again_after_the_starter_is_already_done(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="twice")
    command, shown = discard_words(h, gid, 0)
    h.answer(A, command)
    h.answer(B, discard_words(h, gid, 1)[0])
    assert h.game(gid).phase == PEGGING
    moves = len(h.log(gid))

    h.answer(A, command.replace("discard", "I'll throw"), style="outlook")
    assert h.last_inbound().status == "rejected"
    assert len(h.log(gid)) == moves
    text = flat(text_of(h.latest(A)))
    assert f"already done: you laid away {shown}." in text
    assert "do not hold" not in text


def test_a_card_the_service_played_for_you(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="forced")

    def auto_played(_game: object) -> bool:
        return any(a["type"] == "play" and auto for _, _, a, auto in h.log(gid))

    h.play_until(gid, auto_played)
    _seq, seat, data, _ = next(
        entry for entry in h.log(gid) if entry[2]["type"] == "play" and entry[3]
    )
    played = action_from_json(data)
    assert isinstance(played, Play) and seat is not None
    address = h.address_of(gid, seat)
    moves = len(h.log(gid))

    h.answer(address, f"play {played.card.ascii.lower()}", style="iphone")
    row = h.last_inbound()
    assert row.status == "rejected" and (row.reason or "").startswith("already done")
    assert len(h.log(gid)) == moves
    text = flat(text_of(h.latest(address)))
    assert (
        f"that card was already played for you: {played.card} was the only card you could "
        "play, so it went automatically." in text
    )
    assert "do not hold" not in text


def test_a_repeat_beside_a_new_move_does_not_stop_it(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="twice")
    command, shown = discard_words(h, gid, 0)
    h.answer(A, command)
    bob = discard_words(h, gid, 1)[0]
    h.answer(B, bob)
    game = h.game(gid)
    lead = game.to_act()[0]
    lead_address = h.address_of(gid, lead)
    lead_discard = (command, shown) if lead == 0 else (bob, "")
    card = sorted(game.holding(lead))[0]

    h.answer(lead_address, f"{lead_discard[0]}\nplay {card.ascii}")
    row = h.last_inbound()
    assert row.status == "applied", row.reason
    log = [action_from_json(a) for _, _, a, _ in h.log(gid)]
    assert log[2] == Play(lead, card)
    assert sum(isinstance(a, Discard) for a in log) == 2
    assert "already done: you laid away" in flat(text_of(h.received(lead_address)[-1]))
