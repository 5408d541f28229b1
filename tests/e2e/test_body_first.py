"""Commands come from the body, through the daemon and Maildirs on both databases: the
Subject is read only when the body holds no command, and never when it is one of the
service's own subjects (or a reply to one) — so a reply to a hint mail plays its move
and asks no new hint, a reply to the standings mail saying ``games`` gets the games, and
a "challenge" Subject does not stand in front of the body's ``challenge``."""

from __future__ import annotations

import random
from urllib.parse import unquote

from engine import computer
from pbem.demo.bots import command_for, text_of
from pbem.mail.reading import is_own_subject, reply_subject
from pbem.render.invite import SUBJECT as INVITE_SUBJECT
from tests.e2e.helpers import (
    ALICE,
    BOB,
    DOMAIN,
    SERVICE_ADDRESS,
    Harness,
    about,
    parse,
    plain_mail,
    reply,
)

A = ALICE[0]
DAVE = "dave@z.test"
COMPUTER = (f"computer@{DOMAIN}", "Computer")


def hint_rows(h: Harness) -> int:
    return sum(1 for row in h.outbox() if row.kind == "hint")


def test_a_reply_to_a_hint_mail_plays_its_move_and_asks_no_new_hint(harness: Harness) -> None:
    h = harness
    game_id = h.service.new_game([ALICE, COMPUTER], target=61, seed="body-hint", computer=[1])
    h.step()
    rng = random.Random(3)
    for _ in range(3):  # no loop: each reply to a hint mail is one move, and no hint
        h.answer(A, "hint")
        assert h.last_inbound().status == "applied", h.last_inbound().reason
        hint = h.latest(A)
        assert "Hint: your" in about(hint)
        hints, moves = hint_rows(h), len(h.log(game_id))
        game = h.game(game_id)
        move = command_for(computer.choose_action(game, 0, rng, "random"))
        # The reply quotes the hint's Subject ("Re: [Cribbage N] Hint: your …").
        h.deliver(reply(hint, A, "Alice", move))
        row = h.last_inbound()
        assert row.status == "applied", row.reason
        assert "hint" not in (row.reason or "")
        assert len(h.log(game_id)) > moves and h.log(game_id)[moves][1] == 0
        assert hint_rows(h) == hints  # no new hint
        if h.game(game_id).is_over or 0 not in h.game(game_id).to_act():
            break


def test_games_in_reply_to_the_standings_gets_the_games(harness: Harness) -> None:
    h = harness
    game_id = h.new_game()
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "standings"))
    standings = h.latest(A)
    assert about(standings) == "[Cribbage] Standings"
    before = h.count(A)
    h.deliver(reply(standings, A, "Alice", "games"))
    row = h.last_inbound()
    assert row.status == "applied", row.reason
    (answer,) = h.new_mail(A, before)
    assert about(answer) == "[Cribbage] Your games"
    assert f"Game {game_id}" in text_of(answer) and h.token(game_id, 0) in text_of(answer)


def test_a_challenge_subject_leaves_the_body_s_challenge_standing(harness: Harness) -> None:
    h = harness
    h.new_game()  # Alice plays already: she may challenge (the lobby is invite-only)
    before = h.count(A)
    raw = plain_mail(A, SERVICE_ADDRESS, "challenge dave@z.test to 61", subject="challenge")
    h.deliver(raw)
    # Her From alone proves nothing: the challenge waits for her one click.
    assert "held until" in (h.last_inbound().reason or "")
    assert h.count(DAVE) == 0
    row = h.confirm(A)
    assert row.status == "applied", row.reason
    (invite,) = h.received(DAVE)
    assert about(invite) == INVITE_SUBJECT
    assert "61" in text_of(invite)
    (asking, told) = h.new_mail(A, before)
    assert asking["Subject"] == "[Cribbage] Please confirm your request"
    assert "Invitations sent" in about(told)
    assert "whom" not in text_of(told)
    assert str(told["In-Reply-To"]) == str(parse(raw)["Message-ID"])


def test_a_subject_is_still_read_when_the_body_holds_no_command(harness: Harness) -> None:
    h = harness
    h.new_game()
    # A List-Unsubscribe mailto: an empty mail whose subject is "stop".
    header = str(h.latest(A)["List-Unsubscribe"])
    address = header[len("<mailto:") : header.index("?")]
    h.deliver(plain_mail(A, address, "", subject="stop"))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert h.player(A).stopped  # type: ignore[union-attr]
    # A friendly line and the command in a fresh Subject.
    h.deliver(plain_mail(A, address, "Thanks for the games!", subject="start"))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert not h.player(A).stopped  # type: ignore[union-attr]


def test_every_subject_the_service_writes_is_its_own(harness: Harness) -> None:
    """Whatever the service mailed in these flows, a reply to it reads no command from
    its Subject."""
    h = harness
    game_id = h.new_game((ALICE, BOB))
    h.answer(A, "history")
    h.answer(A, "help")
    h.answer(A, "hint")  # refused between people: its answer has a subject too
    h.answer(A, "no such command")
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "games"))
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "standings"))
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "challenge dave@z.test"))
    h.deliver(plain_mail(A, SERVICE_ADDRESS, "new"))
    h.answer(BOB[0], "say good luck")
    h.answer(A, "resign confirm")
    assert h.game(game_id).is_over
    mails = [parse(row.raw) for row in h.outbox() if row.raw]
    subjects = {about(msg) for msg in mails}
    assert len(subjects) >= 8, subjects
    for subject in subjects:
        assert is_own_subject(subject), subject
        for prefix in ("Re: ", "RE: AW: ", "Fwd: ", ""):
            assert reply_subject(prefix + subject) == "", prefix + subject
    # And every List-Unsubscribe's subject is not ours: it is read, and means less mail.
    for msg in mails:
        header = str(msg["List-Unsubscribe"] or "")
        if not header:
            continue  # an answer to the player's own mail
        said = unquote(header.rpartition("?subject=")[2].rstrip(">"))
        assert said in ("stop", "never") or said.startswith("unwatch "), header
        assert reply_subject(said) == said
