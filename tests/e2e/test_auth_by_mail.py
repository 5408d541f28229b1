"""Who may move: the reply token AND the From address must name the same seat.

Each attack is a real mail into the inbox Maildir; afterwards the action log must be
unchanged and exactly the expected people (often nobody) must have received mail.
"""

from __future__ import annotations

from datetime import timedelta

from pbem.demo.bots import text_of
from tests.e2e.helpers import (
    ALICE,
    BOB,
    CAROL,
    DAVE,
    DOMAIN,
    SERVICE_ADDRESS,
    STRANGER,
    Harness,
    about,
    plain_mail,
    reply,
)

A, B, C = ALICE[0], BOB[0], CAROL[0]
EVERYONE = (A, B, C, DAVE[0], STRANGER)
CONFIRM_SUBJECT = "[Cribbage] Please confirm your request"


def flat(text: str) -> str:
    return " ".join(text.split())


def setup_two_games(h: Harness) -> tuple[int, int]:
    """Alice v Bob (game 1) and Carol v Dave (game 2), each waiting for discards."""
    first = h.new_game((ALICE, BOB), seed="auth-1")
    second = h.new_game((CAROL, DAVE), seed="auth-2")
    return first, second


def discard_words(h: Harness, game_id: int, seat: int) -> str:
    cards = sorted(h.game(game_id).holding(seat))[:2]
    return "discard " + " ".join(c.ascii for c in cards)


def assert_only(h: Harness, before: dict[str, int], **expected: int) -> None:
    """Mail counts changed exactly by ``expected`` (keyword: a local part) and no more."""
    after = h.counts(EVERYONE)
    wanted = {
        address: before[address] + expected.get(address.split("@")[0], 0) for address in EVERYONE
    }
    assert after == wanted


def test_another_players_token_with_your_own_from_is_refused(harness: Harness) -> None:
    h = harness
    game, _ = setup_two_games(h)
    before = h.counts(EVERYONE)
    # Alice answers the mail Bob got (Bob's reply address and Message-IDs), as herself.
    raw = reply(h.latest(B), A, "Alice", discard_words(h, game, 1), style="gmail")
    h.deliver(raw)
    row = h.last_inbound()
    assert row.status == "rejected"
    assert "is not the player of the token's seat" in (row.reason or "")
    assert h.log(game) == []
    assert_only(h, before, alice=1)
    answer = h.latest(A)
    assert "Not your reply address" in about(answer)
    assert "addressed to another player" in flat(text_of(answer))
    assert answer["Reply-To"] is None  # the explanation carries no token
    assert h.token(game, 1) not in answer.as_string()  # nor Bob's token


def test_a_forged_from_with_a_valid_token(harness: Harness) -> None:
    h = harness
    game, _ = setup_two_games(h)
    move = discard_words(h, game, 0)

    # A stranger: no reply at all (no backscatter to a forged address).
    before = h.counts(EVERYONE)
    h.deliver(reply(h.latest(A), STRANGER, "Mallory", move))
    row = h.last_inbound()
    assert row.status == "ignored"
    assert "unknown sender" in (row.reason or "")
    assert h.log(game) == []
    assert_only(h, before)
    assert not (h.outbox_dir / STRANGER).exists()

    # A known player of another game: told why, nothing else.
    before = h.counts(EVERYONE)
    h.deliver(reply(h.latest(A), C, "Carol", move, style="outlook"))
    row = h.last_inbound()
    assert row.status == "rejected"
    assert h.log(game) == []
    assert_only(h, before, carol=1)
    assert "Not your reply address" in about(h.latest(C))

    # Alice herself, with her own token: the move goes through.
    h.deliver(reply(h.latest(A), A, "Alice", move))
    assert h.last_inbound().status == "applied"
    assert len(h.log(game)) == 1


def test_an_unknown_token(harness: Harness) -> None:
    h = harness
    game, _ = setup_two_games(h)
    fake = f"cribbage+{'q' * 20}@{DOMAIN}"
    move = discard_words(h, game, 0)

    before = h.counts(EVERYONE)
    h.deliver(reply(h.latest(A), STRANGER, "Mallory", move, to=fake, threading=False))
    assert h.last_inbound().status == "ignored"
    assert_only(h, before)

    before = h.counts(EVERYONE)
    h.deliver(reply(h.latest(A), A, "Alice", move, to=fake, threading=False))
    row = h.last_inbound()
    assert row.status == "rejected" and row.reason == "no valid game token"
    assert_only(h, before, alice=1)
    assert "Which game?" in about(h.latest(A))
    assert h.log(game) == []

    # A Message-ID of ours with a made-up token in In-Reply-To does not help either.
    before = h.counts(EVERYONE)
    raw = plain_mail(
        A,
        SERVICE_ADDRESS,
        move,
        extra=[("In-Reply-To", f"<g{game}.sa0.turn.{'z' * 20}@{DOMAIN}>")],
    )
    h.deliver(raw)
    assert h.last_inbound().status == "rejected"
    assert h.log(game) == []


def test_no_token_at_all(harness: Harness) -> None:
    h = harness
    game, other = setup_two_games(h)

    # An unknown sender gets nothing, whatever it asks (help included): no backscatter.
    for body in ("play 7c\nwhat is this?", "help"):
        before = h.counts(EVERYONE)
        h.deliver(plain_mail(STRANGER, SERVICE_ADDRESS, body))
        row = h.last_inbound()
        assert row.status == "ignored" and "unknown sender" in (row.reason or "")
        assert_only(h, before)

    # A player with exactly one game in progress: the mail is that game's. Its From
    # alone does not show who wrote: held, nothing done, one confirmation request to her.
    before = h.counts(EVERYONE)
    h.deliver(plain_mail(A, SERVICE_ADDRESS, discard_words(h, game, 0), subject="my move"))
    held = h.last_inbound()
    assert held.status == "applied" and "held until" in (held.reason or ""), held.reason
    assert held.game_id == game and h.log(game) == []
    assert_only(h, before, alice=1)
    assert about(h.latest(A)) == CONFIRM_SUBJECT
    # Confirmed, it is done as if it carried the seat's token.
    row = h.confirm(A)
    assert row.status == "applied", row.reason
    assert row.game_id == game
    assert len(h.log(game)) == 1 and h.log(other) == []
    assert_only(h, before, alice=1)  # no news: both were asked to discard already
    # Carol's plain mail goes to her own game, not Alice's.
    h.deliver(plain_mail(C, SERVICE_ADDRESS, discard_words(h, other, 0)))
    held = h.last_inbound()
    assert held.status == "applied" and held.game_id == other, held.reason
    assert h.confirm(C).status == "applied", h.last_inbound().reason
    assert len(h.log(other)) == 1 and len(h.log(game)) == 1


def test_resign_needs_a_reply_token(harness: Harness) -> None:
    """A plain-address mail proves its writer by the From alone, so it cannot resign the
    game (which cannot be undone): it is held, and only the player's click on the
    confirmation request (a reply with its token) gets it read — and then resigning
    still asks first. A trusted provider vouching for the From would do too."""
    h = harness
    game, _ = setup_two_games(h)
    before = h.counts(EVERYONE)
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "I resign"))
    row = h.last_inbound()
    assert row.status == "applied" and "held until" in (row.reason or ""), row.reason
    assert h.log(game) == []
    assert_only(h, before, alice=1)
    assert about(h.latest(A)) == CONFIRM_SUBJECT
    row = h.confirm(A)
    assert row.status == "applied" and "asked to confirm: resign" in (row.reason or "")
    assert h.log(game) == []
    assert "Nothing is done yet: to resign, confirm" in flat(text_of(h.latest(A)))
    # The same word in a reply to the game mail (with its token) resigns.
    h.deliver(reply(h.latest(A), A, "Alice", "I resign, yes"))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert [a["type"] for _, _, a, _ in h.log(game)][-1:] == ["resign"]


def test_a_plain_mail_passes_the_same_from_checks(harness: Harness) -> None:
    """With a trusted provider set, a plain-address mail whose From it does not vouch for
    moves nothing and is not answered, as a reply with a token would be."""
    h = harness
    h.restart()
    trusted = "mx.pbem.test"
    h.daemon.service.settings = h.settings.model_copy(update={"trusted_authserv_id": trusted})
    game, _ = setup_two_games(h)
    move = discard_words(h, game, 0)
    before = h.counts(EVERYONE)
    forged = b"Authentication-Results: mx.pbem.test; dmarc=fail\r\n" + plain_mail(
        A, SERVICE_ADDRESS, move
    )
    h.deliver(forged)
    row = h.last_inbound()
    assert row.status == "rejected" and "DMARC" in (row.reason or ""), row.reason
    assert h.log(game) == []
    assert_only(h, before)
    vouched = (
        b"Authentication-Results: mx.pbem.test; dmarc=pass header.from=example.com\r\n"
        + plain_mail(A, SERVICE_ADDRESS, move)
    )
    h.deliver(vouched)
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert len(h.log(game)) == 1


def test_which_game_lists_the_players_games_with_their_own_reply_addresses(
    harness: Harness,
) -> None:
    h = harness
    first, _ = setup_two_games(h)
    third = h.new_game((CAROL, ALICE), seed="auth-3")
    h.deliver(reply(h.latest(A), A, "Alice", discard_words(h, third, 1)))  # Alice, game 3
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    h.deliver(reply(h.latest(B), B, "Bob", discard_words(h, first, 1)))  # Bob has moved
    move = discard_words(h, first, 0)

    before = h.counts(EVERYONE)
    h.deliver(plain_mail(A, SERVICE_ADDRESS, move, subject="my move"))
    row = h.last_inbound()
    assert row.status == "rejected" and row.reason == "no valid game token"
    assert_only(h, before, alice=1)
    answer = h.latest(A)
    assert about(answer) == "[Cribbage] Which game?"
    text = flat(text_of(answer))
    own_first = f"cribbage+{h.token(first, 0)}@{DOMAIN}"
    own_third = f"cribbage+{h.token(third, 1)}@{DOMAIN}"
    assert f"Game {first}, you v Bob: your turn (hand 1) Reply to: {own_first}" in text
    assert f"Game {third}, you v Carol: waiting for Carol (hand 1) Reply to: {own_third}" in text
    for seat_of_someone_else in (h.token(first, 1), h.token(third, 0)):
        assert seat_of_someone_else not in text and seat_of_someone_else not in str(answer)
    assert len(h.log(first)) == 1  # only Bob's move

    # The follow-up "help" is answered at once (a different answer is not throttled), with
    # the command language and the games.
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "help"))
    row = h.last_inbound()
    assert row.status == "applied" and row.reason == "sent: help (no game named)"
    assert_only(h, before, alice=2)
    helped = h.latest(A)
    assert "How to play by mail" in about(helped)
    text = flat(text_of(helped))
    assert "discard 5h jd" in text and "You have 2 games in progress" in text
    assert f"Game {first}, you v Bob: your turn (hand 1). Reply to: {own_first}" in text

    # Writing to the address the answer gave applies the move.
    h.deliver(reply(answer, A, "Alice", move, to=own_first, threading=False))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert len(h.log(first)) == 2


def test_help_from_a_player_with_no_game_in_progress(harness: Harness) -> None:
    h = harness
    game, _ = setup_two_games(h)
    h.service.set_status(game, "aborted")
    h.step()  # the players hear of the abort
    before = h.counts(EVERYONE)
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "help please"))
    assert h.last_inbound().status == "applied"
    assert_only(h, before, alice=1)
    assert "You have no game in progress." in flat(text_of(h.latest(A)))
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "discard 5h jd"))
    assert h.last_inbound().status == "rejected"
    assert_only(h, before, alice=2)
    assert "Which game?" in about(h.latest(A))


def test_help_from_a_player_with_one_game_lists_it(harness: Harness) -> None:
    h = harness
    game, _ = setup_two_games(h)
    before = h.counts(EVERYONE)
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "help"))
    row = h.last_inbound()
    assert row.status == "applied" and row.reason == "sent: help (no game named)"
    assert_only(h, before, alice=1)
    text = flat(text_of(h.latest(A)))
    own = f"cribbage+{h.token(game, 0)}@{DOMAIN}"
    assert "You have one game in progress." in text
    assert f"Game {game}, you v Bob: your turn (hand 1). Reply to: {own}" in text
    assert "discard 5h jd" in text
    # "hand" (a question about the game) is that game's, like a move: by a From alone,
    # held until Alice confirms; then answered from the game's reply address.
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "hand"))
    held = h.last_inbound()
    assert held.status == "applied" and "held until" in (held.reason or ""), held.reason
    assert held.game_id == game
    row = h.confirm(A)
    assert (row.status, row.game_id) == ("applied", game), row.reason
    assert str(h.latest(A)["Reply-To"]).endswith(f"{own}>")


def test_error_replies_are_throttled_per_address(harness: Harness) -> None:
    h = harness
    game, _ = setup_two_games(h)
    h.new_game((ALICE, CAROL), seed="auth-3")  # two games: a plain mail names neither
    move = discard_words(h, game, 0)
    before = h.counts(EVERYONE)
    for _ in range(3):
        h.deliver(plain_mail(A, SERVICE_ADDRESS, move))
        assert h.last_inbound().status == "rejected"
    assert_only(h, before, alice=1)  # one identical "which game?" an hour, however many mails
    h.clock.advance(timedelta(hours=2))
    h.deliver(plain_mail(A, SERVICE_ADDRESS, move))
    assert_only(h, before, alice=2)
    assert h.log(game) == []


def test_a_reply_that_lost_its_reply_to_still_finds_its_game(harness: Harness) -> None:
    h = harness
    game, _ = setup_two_games(h)
    before = h.counts(EVERYONE)
    # The client answered the From address, but kept In-Reply-To and References.
    raw = reply(h.latest(A), A, "Alice", discard_words(h, game, 0), to=SERVICE_ADDRESS)
    assert b"cribbage+" not in raw.split(b"\r\n\r\n", 1)[0].split(b"In-Reply-To")[0]
    h.deliver(raw)
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert len(h.log(game)) == 1
    assert_only(h, before)  # Bob was asked to discard already: no news for anyone

    # Only References survived (some clients drop In-Reply-To).
    original = h.latest(B)
    raw = reply(original, B, "Bob", discard_words(h, game, 1), to=SERVICE_ADDRESS)
    head, body = raw.split(b"\r\n\r\n", 1)
    head = b"\r\n".join(line for line in head.split(b"\r\n") if not line.startswith(b"In-Reply"))
    h.deliver(head + b"\r\n\r\n" + body)
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert len(h.log(game)) == 2


def test_addresses_are_case_insensitive(harness: Harness) -> None:
    h = harness
    game, _ = setup_two_games(h)
    token = h.token(game, 0)
    shouting_to = f"Cribbage <CRIBBAGE+{token.upper()}@PBEM.TEST>"
    raw = reply(
        h.latest(A),
        "ALICE@Example.COM",
        "Alice",
        discard_words(h, game, 0).upper(),
        to=shouting_to,
        threading=False,
    )
    h.deliver(raw)
    row = h.last_inbound()
    assert row.status == "applied", row.reason
    assert len(h.log(game)) == 1
    assert h.latest(A) is not None and (h.outbox_dir / A).is_dir()
    assert not any(p.name != p.name.lower() for p in h.outbox_dir.iterdir())
