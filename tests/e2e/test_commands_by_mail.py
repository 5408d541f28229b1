"""Every command and every refusal, through real mail: replies written by mail clients go
into the inbox Maildir, the daemon processes them, and what each player received is read
back from their outbox Maildir."""

from __future__ import annotations

from collections.abc import Callable

from engine import (
    DISCARD,
    PEGGING,
    SHOW,
    Card,
    Claim,
    Discard,
    Game,
    Go,
    Play,
    action_from_json,
    score_show,
)
from engine import Settings as GameSettings
from pbem.demo.bots import text_of, view_of
from tests.e2e.helpers import ALICE, BOB, CAROL, Harness, about, find_seed

A, B = ALICE[0], BOB[0]


def flat(text: str) -> str:
    """Mail text with its wrapping undone, for phrase searches."""
    return " ".join(text.split())


def kinds_sent(h: Harness, address: str, before: int) -> list[str]:
    rows = [r for r in h.outbox() if r.recipient == address]
    return [r.kind for r in rows[before:]]


def discard_for(game: Game, seat: int, n: int = 2) -> tuple[Card, ...]:
    return tuple(sorted(game.holding(seat))[:n])


def test_discard_aliases_then_pegging_by_bare_card_and_play_alias(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="e2e")
    game = h.game(gid)
    assert game.phase == DISCARD and game.dealer == 0
    alice_cards = discard_for(game, 0)
    bob_cards = discard_for(game, 1)

    h.answer(A, "crib " + " ".join(c.ascii for c in alice_cards), style="apple")
    assert h.last_inbound().status == "applied"
    h.answer(B, "Throw " + " ".join(str(c) for c in bob_cards) + " please", style="outlook_block")
    assert h.last_inbound().status == "applied", h.last_inbound().reason

    log = h.log(gid)
    assert [action_from_json(a) for _, _, a, _ in log[:2]] == [
        Discard(0, alice_cards),
        Discard(1, bob_cards),
    ]
    game = h.game(gid)
    assert game.phase == PEGGING
    # Both players got the news with the starter turned; Bob leads.
    for address, seat in ((A, 0), (B, 1)):
        view = h.view(address)
        assert view.phase == PEGGING and view.starter == game.starter
        assert view.my_turn == (seat in game.to_act())

    lead = sorted(game.holding(1))[0]
    h.answer(B, lead.ascii.upper(), style="iphone")  # a bare card: "7C"
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert action_from_json(h.log(gid)[2][2]) == Play(1, lead)
    answer = next(c for c in h.game(gid).holding(0) if c.rank != 11)
    h.answer(A, f"p {answer}", style="thunderbird")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert Play(0, answer) in [action_from_json(a) for _, _, a, _ in h.log(gid)]


def test_play_by_rank_with_two_of_that_rank_asks_which(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="e2e")  # Alice, the dealer, holds J♥ and J♠
    game = h.game(gid)
    jacks = [c for c in game.holding(0) if c.rank == 11]
    assert len(jacks) == 2
    others = sorted(c for c in game.holding(0) if c.rank != 11)[:2]
    h.answer(A, "discard " + " ".join(c.ascii for c in others))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    h.answer(B, "discard " + " ".join(c.ascii for c in discard_for(game, 1)))
    low = min(h.game(gid).holding(1), key=lambda c: c.value)
    h.answer(B, f"play {low.ascii}")
    moves = len(h.log(gid))
    before_bob = h.count(B)

    h.answer(A, "play J", style="gmail_html_only")
    row = h.last_inbound()
    assert row.status == "rejected"
    assert len(h.log(gid)) == moves
    text = flat(text_of(h.latest(A)))
    assert "ambiguous" in text
    for jack in jacks:
        assert str(jack) in text
    assert "play J♥ or J♠" in text or "play J♠ or J♥" in text
    assert h.count(B) == before_bob, "the other player hears nothing of a refused move"

    h.answer(A, "play J♠")
    assert h.last_inbound().status == "applied", h.last_inbound().reason


def stuck_with_a_big_card(game: Game) -> bool:
    """Pegging, and the seat to play holds a card that would pass 31 and one that would not."""
    if game.phase != PEGGING:
        return False
    held = game.holding(game.to_act()[0])
    return any(game.count + c.value > 31 for c in held) and any(
        game.count + c.value <= 31 for c in held
    )


def test_illegal_play_is_refused_with_the_legal_choices(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed=find_seed("over-31", stuck_with_a_big_card))
    game = h.play_until(gid, stuck_with_a_big_card)
    seat = game.to_act()[0]
    address = h.address_of(gid, seat)
    other = h.address_of(gid, 1 - seat)
    big = next(c for c in game.holding(seat) if game.count + c.value > 31)
    playable = sorted(c for c in game.holding(seat) if game.count + c.value <= 31)
    moves = len(h.log(gid))
    before_other = h.count(other)

    h.answer(address, f"play {big}", style="outlook")
    row = h.last_inbound()
    assert row.status == "rejected"
    assert f"the count would be {game.count + big.value}" in (row.reason or "")
    assert len(h.log(gid)) == moves
    text = flat(text_of(h.latest(address)))
    assert f"cannot play {big}: the count would be {game.count + big.value}" in text
    assert "You could: play " + " or ".join(str(c) for c in playable) in text
    assert h.count(other) == before_other

    # "go" while a card can be played is refused too, naming the playable cards.
    h.answer(address, "go")
    assert h.last_inbound().status == "rejected"
    assert "cannot say go" in flat(text_of(h.latest(address)))
    assert len(h.log(gid)) == moves


def test_a_move_out_of_turn_says_whose_turn_it_is(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="e2e")
    game = h.play_until(gid, lambda g: g.phase == PEGGING)
    waiting = game.to_act()[0]
    idle = 1 - waiting
    idle_address = h.address_of(gid, idle)
    waiting_name = ("Alice", "Bob")[waiting]
    card = sorted(game.holding(idle))[0]
    moves = len(h.log(gid))

    h.answer(idle_address, f"play {card.ascii}", style="base64")
    assert h.last_inbound().status == "rejected"
    assert len(h.log(gid)) == moves
    text = flat(text_of(h.latest(idle_address)))
    assert "not your turn" in text
    assert f"it is {waiting_name}'s turn" in text
    assert f"waiting for {waiting_name}" in text  # names, never "seat 1"
    assert "seat 0" not in text and "seat 1" not in text


def test_forced_moves_and_the_show_are_automatic_without_muggins(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="forced")
    game = h.play_until(gid, lambda g: g.hand_no >= 3)

    log = h.log(gid)
    replay = Game(GameSettings.from_json(h.game_row(gid).settings), game.seed)
    auto_kinds: set[str] = set()
    for _seq, seat, data, auto in log:
        action = action_from_json(data)
        if auto:
            assert replay.legal_actions() == [action], f"{action} was not forced"
            auto_kinds.add(type(action).__name__)
        else:
            assert seat is not None
        replay.apply(action)
    assert {"Go", "Play"} <= auto_kinds
    assert not any(isinstance(action_from_json(a), Go) and not auto for _, _, a, auto in log)
    assert not any(isinstance(action_from_json(a), Claim) for _, _, a, _ in log)
    shows = [e for e in game.events if e.kind == "show" and e.hand == 1]
    assert len(shows) == 3  # pone's hand, dealer's hand, crib: counted by the service
    # Everyone was told the show of hand 1 by mail.
    for address in (A, B):
        told = [e for msg in h.received(address) if (v := view_of(msg)) for e in v.events]
        assert any(e.kind == "show" and e.hand == 1 for e in told)


def test_muggins_game_count_muggins_and_accept(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="muggins-e2e", muggins=True)
    mugged = accepted = False
    for _ in range(6):
        game = h.play_until(gid, lambda g: g.phase == SHOW and not g.awaiting_muggins)
        while not game.is_over and game.phase == SHOW:
            entry = game.show_entry()
            assert entry is not None
            claimant, what = entry
            cards = game.showing()
            assert game.starter is not None
            actual = sum(i.points for i in score_show(cards, game.starter, crib=what == "crib"))
            address = h.address_of(gid, claimant)
            opponent = h.address_of(gid, 1 - claimant)
            if actual > 0 and not mugged:
                h.answer(address, "count 0", style="gmail")
                assert h.last_inbound().status == "applied"
                assert view_of(h.latest(opponent)).awaiting_muggins  # type: ignore[union-attr]
                scores = h.game(gid).scores
                h.answer(opponent, "Muggins!", style="iphone")
                assert h.last_inbound().status == "applied", h.last_inbound().reason
                side = h.game(gid).side_of(1 - claimant)
                assert h.game(gid).scores[side] == scores[side] + actual
                mugged = True
            else:
                h.answer(address, f"claim {actual}")
                assert h.last_inbound().status == "applied", h.last_inbound().reason
                if h.game(gid).is_over:
                    break
                h.answer(opponent, "accept")
                assert h.last_inbound().status == "applied", h.last_inbound().reason
                accepted = True
            game = h.game(gid)
        if (mugged and accepted) or game.is_over:
            break
    assert mugged and accepted
    log = [action_from_json(a) for _, _, a, _ in h.log(gid)]
    kinds = {type(a).__name__ for a in log}
    assert {"Claim", "Muggins", "Accept"} <= kinds


def test_hand_history_and_help_go_to_the_sender_only(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="info", people=(ALICE, BOB, CAROL))
    h.play_until(gid, lambda g: g.phase == PEGGING)
    moves = len(h.log(gid))
    before = h.counts((A, B, CAROL[0]))
    sent_before = len([r for r in h.outbox() if r.recipient == A])

    h.answer(A, "status", style="outlook")
    assert h.last_inbound().status == "applied"
    assert h.last_inbound().reason == "sent: hand"
    status = h.latest(A)
    view = view_of(status)
    assert view is not None and view.seat == 0 and view.phase == PEGGING
    assert sorted(view.holding) == sorted(h.game(gid).holding(0))

    h.answer(A, "history")
    history = h.latest(A)
    assert "history" in about(history).lower() or "so far" in text_of(history)

    h.answer(A, "help")
    assert "discard" in text_of(h.latest(A)) and "muggins" in text_of(h.latest(A))

    h.answer(A, "hand\nhistory\nhelp", style="thunderbird")
    assert kinds_sent(h, A, sent_before) == ["status", "history", "help"] * 2
    assert h.counts((B, CAROL[0])) == {B: before[B], CAROL[0]: before[CAROL[0]]}
    assert h.count(A) == before[A] + 6
    assert len(h.log(gid)) == moves


def test_several_commands_in_one_mail_are_applied_in_order(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="e2e")
    game = h.game(gid)
    h.answer(A, "discard " + " ".join(c.ascii for c in discard_for(game, 0)))
    bob_discard = discard_for(game, 1)
    lead = sorted(set(game.holding(1)) - set(bob_discard))[-1]
    body = f"discard {' '.join(c.ascii for c in bob_discard)}\nwhat a deal\nplay {lead.ascii}"
    h.answer(B, body, style="outlook_block")
    row = h.last_inbound()
    assert row.status == "applied", row.reason
    assert [action_from_json(a) for _, _, a, _ in h.log(gid)[1:3]] == [
        Discard(1, bob_discard),
        Play(1, lead),
    ]
    text = flat(text_of(h.latest(B)))
    assert "what a deal" in text and "not a command" in text

    # In the wrong order the play is refused (still discarding) and the rest applied.
    gid2 = h.new_game(seed="e2e-2")
    game2 = h.game(gid2)
    h.answer(A, "discard " + " ".join(c.ascii for c in discard_for(game2, 0)))
    keep = sorted(set(game2.holding(1)) - set(discard_for(game2, 1)))
    body = f"play {keep[0].ascii}; discard {' '.join(c.ascii for c in discard_for(game2, 1))}"
    h.answer(B, body)
    row = h.last_inbound()
    assert row.status == "applied"
    assert "refused" in (row.reason or "")
    assert [action_from_json(a) for _, _, a, _ in h.log(gid2)][1] == Discard(
        1, discard_for(game2, 1)
    )


def test_a_mail_with_no_command_gets_help_and_moves_nothing(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="e2e")
    before = h.counts((A, B))
    h.answer(A, "Good luck, Bob!\nSee you at the club on Thursday.", style="apple")
    row = h.last_inbound()
    assert row.status == "rejected" and row.reason == "no command found"
    assert h.log(gid) == []
    assert h.count(A) == before[A] + 1 and h.count(B) == before[B]
    assert "no command" in flat(text_of(h.latest(A)))


def test_resign_then_moves_in_a_finished_game_are_refused(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="e2e")
    before = h.counts((A, B))
    h.answer(A, "Resign, confirm. Well played, Bob!", style="gmail")
    row = h.last_inbound()
    assert row.status == "applied", row.reason
    game_row = h.game_row(gid)
    assert game_row.status == "finished"
    assert game_row.outcome is not None and game_row.outcome["winner_seats"] == [1]
    for address in (A, B):
        assert h.count(address) == before[address] + 1
        assert view_of(h.latest(address)).outcome is not None  # type: ignore[union-attr]

    moves = len(h.log(gid))
    h.answer(B, "discard " + " ".join(c.ascii for c in discard_for(h.game(gid), 1)))
    row = h.last_inbound()
    assert row.status == "rejected" and row.reason == "game is finished"
    assert "This game is over; no move was made." in flat(text_of(h.latest(B)))
    assert len(h.log(gid)) == moves


def test_moves_in_paused_and_aborted_games_are_refused(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed="e2e")
    cards = " ".join(c.ascii for c in discard_for(h.game(gid), 0))
    h.service.set_status(gid, "paused")

    h.answer(A, f"discard {cards}")
    row = h.last_inbound()
    assert row.status == "rejected" and row.reason == "game is paused"
    assert "paused by the admin" in flat(text_of(h.latest(A)))
    h.answer(A, "hand")  # looking is still allowed
    assert h.last_inbound().status == "applied"
    assert h.log(gid) == []

    h.service.set_status(gid, "active")
    h.answer(A, f"discard {cards}")
    assert h.last_inbound().status == "applied"

    h.service.set_status(gid, "aborted")
    h.answer(B, "discard " + " ".join(c.ascii for c in discard_for(h.game(gid), 1)))
    row = h.last_inbound()
    assert row.status == "rejected" and row.reason == "game is aborted"
    assert "This game is aborted" in flat(text_of(h.latest(B)))
    assert len(h.log(gid)) == 1


def aces_to_play(count: int) -> Callable[[Game], bool]:
    """Pegging, and the seat to play holds ``count`` aces and has a choice to make."""

    def done(game: Game) -> bool:
        if game.phase != PEGGING or game.is_over:
            return False
        seat = game.to_act()[0]
        aces = [c for c in game.holding(seat) if c.rank == 1]
        return len(aces) == count and len(game.legal_actions(seat)) > 1

    return done


def test_play_a_plays_the_ace(harness: Harness) -> None:
    h = harness
    gid = h.new_game(seed=find_seed("one-ace", aces_to_play(1)))
    game = h.play_until(gid, aces_to_play(1))
    seat = game.to_act()[0]
    ace = next(c for c in game.holding(seat) if c.rank == 1)
    h.answer(h.address_of(gid, seat), "play a")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert Play(seat, ace) in [action_from_json(a) for _, _, a, _ in h.log(gid)]


def test_play_a_holding_two_aces_asks_which_and_play_a_card_asks_which_card(
    harness: Harness,
) -> None:
    h = harness
    gid = h.new_game(seed=find_seed("two-aces", aces_to_play(2)))
    game = h.play_until(gid, aces_to_play(2))
    seat = game.to_act()[0]
    address = h.address_of(gid, seat)
    aces = sorted(c for c in game.holding(seat) if c.rank == 1)
    moves = len(h.log(gid))

    h.answer(address, "play a")
    assert h.last_inbound().status == "rejected"
    text = flat(text_of(h.latest(address)))
    assert f"play {aces[0]} or {aces[1]}" in text
    h.answer(address, "I'll play a card")
    assert h.last_inbound().status == "rejected"
    assert "play which card?" in flat(text_of(h.latest(address)))
    assert len(h.log(gid)) == moves

    h.answer(address, f"I play a {aces[1].ascii}")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert action_from_json(h.log(gid)[moves][2]) == Play(seat, aces[1])
