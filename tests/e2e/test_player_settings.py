"""A player's own settings, by mail, through the Maildirs and the database (both backends):
``name``, ``mail text|html|both`` (beside ``mail all|turns``), ``stop`` / ``start`` —
in a game mail and to the plain address — and the refusals."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session

from engine import computer
from pbem.demo.bots import text_of
from pbem.service.policy import is_suppressed
from tests.e2e.helpers import ALICE, BOB, CAROL, DOMAIN, Harness, plain_mail

A, B = ALICE[0], BOB[0]
SERVICE = f"cribbage@{DOMAIN}"
CONFIRM_SUBJECT = "[Cribbage] Please confirm your request"


def flat(text: str) -> str:
    return " ".join(text.split())


def body_types(msg: EmailMessage) -> list[str]:
    """The content types of every leaf part, in order."""
    return [part.get_content_type() for part in msg.walk() if not part.is_multipart()]


def reply_text(msg: EmailMessage) -> str:
    """The readable text of a mail: its plain part, else its HTML part."""
    part = msg.get_body(("plain", "html"))
    assert part is not None
    return flat(str(part.get_content()))


def held(h: Harness, address: str) -> None:
    """The last mail, proven by its From alone, was held: one confirmation request went
    to ``address``, and nothing else."""
    row = h.last_inbound()
    assert row.status == "applied", row.reason
    assert f"held until {address.lower()} confirms" in (row.reason or ""), row.reason
    assert str(h.latest(address)["Subject"]) == CONFIRM_SUBJECT


def move_for(h: Harness, game_id: int, seat: int) -> None:
    """The player of ``seat`` makes a legal move by mail."""
    game = h.game(game_id)
    h.move(game_id, computer.choose_action(game, seat, random.Random(seat)))
    assert h.last_inbound().status == "applied", h.last_inbound().reason


def test_name_is_cleaned_confirmed_and_shown_to_the_opponent(harness: Harness) -> None:
    h = harness
    game_id = h.new_game((ALICE, BOB))
    h.answer(A, "name  Alice\x07 Smith")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    player = h.player(A)
    assert player is not None and player.display_name == "Alice Smith"
    assert "Your name is now Alice Smith." in reply_text(h.latest(A))
    # Bob's next mail names her so.
    before = h.count(B)
    move_for(h, game_id, 0)
    move_for(h, game_id, 1)
    news = h.new_mail(B, before)
    assert news and "Alice Smith" in text_of(news[-1])
    assert "Alice Smith" in str(news[-1]["Subject"]) + text_of(news[-1])


def test_a_long_name_is_cut_and_an_empty_one_refused(harness: Harness) -> None:
    h = harness
    h.new_game((ALICE, BOB))
    h.answer(A, "name " + "x" * 500)
    player = h.player(A)
    assert player is not None and player.display_name is not None
    assert len(player.display_name) == 60 and player.display_name.endswith("…")
    h.answer(A, "name")
    assert h.last_inbound().status == "rejected"
    assert "name what?" in reply_text(h.latest(A))
    player = h.player(A)
    assert player is not None and len(player.display_name or "") == 60


def test_mail_text_html_both_choose_the_parts(harness: Harness) -> None:
    h = harness
    h.new_game((ALICE, BOB))
    assert body_types(h.latest(A))[:2] == ["text/plain", "text/html"]

    h.answer(A, "mail text")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    player = h.player(A)
    assert player is not None and player.mail_parts == "text"
    mail = h.latest(A)
    assert body_types(mail) == ["text/plain"]  # a note: no board, no view.json
    assert "plain text only" in reply_text(mail)

    h.answer(A, "mail html")
    mail = h.latest(A)
    assert body_types(mail) == ["text/html"]
    assert "HTML only" in reply_text(mail)

    h.answer(A, "mail both")
    mail = h.latest(A)
    assert body_types(mail) == ["text/plain", "text/html"]
    # Bob set nothing: both parts, as before.
    assert body_types(h.latest(B))[:2] == ["text/plain", "text/html"]


def test_mail_frequency_and_parts_are_separate_choices(harness: Harness) -> None:
    h = harness
    h.new_game((ALICE, BOB))
    h.answer(A, "mail all")
    h.answer(A, "mail text")
    player = h.player(A)
    assert player is not None and (player.mail_all, player.mail_parts) == (True, "text")
    h.answer(A, "mail turns")
    player = h.player(A)
    assert player is not None and (player.mail_all, player.mail_parts) == (False, "text")
    h.answer(A, "mail html all")
    player = h.player(A)
    assert player is not None and (player.mail_all, player.mail_parts) == (True, "html")


def test_mail_with_two_parts_or_none_is_refused(harness: Harness) -> None:
    h = harness
    h.new_game((ALICE, BOB))
    h.answer(A, "mail text html")
    assert h.last_inbound().status == "rejected"
    assert "mail which parts?" in reply_text(h.latest(A))
    h.answer(A, "mail")
    assert h.last_inbound().status == "rejected"
    assert "mail how?" in reply_text(h.latest(A))
    player = h.player(A)
    assert player is not None and player.mail_parts == "both" and not player.mail_all


def test_stop_silences_all_but_answers_and_start_restores(harness: Harness) -> None:
    h = harness
    game_id = h.new_game((ALICE, BOB))
    h.answer(B, "stop")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    said = reply_text(h.latest(B))
    assert "no more mail" in said and "your clock still runs" in said
    player = h.player(B)
    assert player is not None and player.stopped

    # Alice's move would tell Bob: he is not mailed; the game goes on.
    before = h.count(B)
    move_for(h, game_id, 0)
    assert h.count(B) == before
    # His own move is answered.
    move_for(h, game_id, 1)
    assert h.count(B) == before + 1
    # So is a question.
    h.answer(B, "hand")
    assert h.count(B) == before + 2

    h.answer(B, "start")
    player = h.player(B)
    assert player is not None and not player.stopped
    assert "game mails again" in reply_text(h.latest(B))


def test_stop_skips_status_mails_and_reminders(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    h = Harness.build(tmp_path, db_url, db_engine, reminder_hours=24, timeout_days=7)
    try:
        game_id = h.new_game((ALICE, BOB))
        move_for(h, game_id, 0)
        h.answer(B, "stop")
        before = h.count(B)
        h.service.set_status(game_id, "paused", "a break")
        h.service.set_status(game_id, "active")
        h.step()
        h.clock.advance(timedelta(hours=25))
        h.step()
        assert h.count(B) == before
        assert not [r for r in h.outbox() if r.kind == "reminder" and r.recipient == B]
        # Bob's turn, but not Alice's: the reminder would have been his.
        assert h.game(game_id).to_act() == (1,)
        # The clock ran: after the timeout the computer moved for him.
        actions = len(h.log(game_id))
        h.clock.advance(timedelta(days=7))
        h.step()
        assert len(h.log(game_id)) > actions
        assert h.count(B) == before
    finally:
        h.close()


def test_settings_to_the_plain_address_need_no_game(harness: Harness) -> None:
    h = harness
    h.new_game((ALICE, BOB))
    h.new_game((ALICE, CAROL), seed="second")
    # Two games: a plain mail is not routed to one, but settings need none. A From
    # alone proves nothing: they are done once Alice confirms them.
    h.deliver(plain_mail(A, SERVICE, "mail text\nname Al"))
    held(h, A)
    player = h.player(A)
    assert player is not None and (player.mail_parts, player.display_name) == ("both", "Alice")
    done = h.confirm(A)
    assert done.status == "applied", done.reason
    player = h.player(A)
    assert player is not None and (player.mail_parts, player.display_name) == ("text", "Al")
    answer = h.latest(A)
    assert body_types(answer) == ["text/plain"]
    assert "Your name is now Al." in reply_text(answer)
    # A refused setting: rejected, and told why (once confirmed).
    h.deliver(plain_mail(A, SERVICE, "name"))
    held(h, A)
    assert h.confirm(A).status == "rejected"
    assert "name what?" in reply_text(h.latest(A))


def test_settings_from_a_stranger_change_nothing(harness: Harness) -> None:
    """A stranger's settings touch no player; their ``stop`` only keeps the service from
    mailing them unasked (the suppression list), once the mailbox confirms it (anyone
    can write any From): one confirmation request, and no answer to the stop itself."""
    h = harness
    h.new_game((ALICE, BOB))
    mallory = "mallory@evil.test"
    before = len(h.outbox())
    h.deliver(plain_mail(mallory, SERVICE, "name Mallory"))
    assert h.last_inbound().status == "ignored"
    assert h.player(mallory) is None
    assert len(h.outbox()) == before
    h.deliver(plain_mail(mallory, SERVICE, "stop"))
    held(h, mallory)
    with Session(h.db) as session:
        assert not is_suppressed(session, "Mallory+x@evil.test", h.clock())
    [request] = h.outbox()[before:]
    assert (request.recipient, request.kind) == (mallory, "confirm")
    done = h.confirm(mallory)
    assert done.status == "applied", done.reason
    assert "no reply" in (done.reason or "")
    assert h.player(mallory) is None
    with Session(h.db) as session:
        assert is_suppressed(session, "Mallory+x@evil.test", h.clock())
    assert len(h.outbox()) == before + 1  # the confirmation request alone


def unsubscribe_address(msg: EmailMessage) -> str:
    """The mailto address of a mail's List-Unsubscribe header (its subject: stop)."""
    header = str(msg["List-Unsubscribe"]).strip()
    assert header.startswith("<mailto:") and header.endswith("?subject=stop>"), header
    return header[len("<mailto:") : -len("?subject=stop>")]


def test_every_game_mail_has_a_mailto_list_unsubscribe(harness: Harness) -> None:
    h = harness
    game_id = h.new_game((ALICE, BOB))
    move_for(h, game_id, 0)
    h.answer(A, "history")
    mails = h.received(A) + h.received(B)
    assert len(mails) >= 3
    for msg in mails:
        assert unsubscribe_address(msg) == str(msg["Reply-To"]).split("<")[-1].strip(">")
        # No one-click POST: it needs an HTTPS URI (RFC 8058), and unsubscribe_url is unset.
        assert msg["List-Unsubscribe-Post"] is None


def test_stop_sent_to_the_unsubscribe_address_by_the_player_works(harness: Harness) -> None:
    h = harness
    h.new_game((ALICE, BOB))
    address = unsubscribe_address(h.latest(B))
    h.deliver(plain_mail(B, address, "", subject="stop"))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    player = h.player(B)
    assert player is not None and player.stopped
    assert "no more mail" in reply_text(h.latest(B))


def test_stop_sent_to_the_unsubscribe_address_by_anyone_else_changes_nothing(
    harness: Harness,
) -> None:
    h = harness
    h.new_game((ALICE, BOB))
    address = unsubscribe_address(h.latest(B))
    before = len(h.outbox())
    h.deliver(plain_mail("mallory@evil.test", address, "", subject="stop"))
    assert h.last_inbound().status == "ignored"
    assert len(h.outbox()) == before
    # Another player, with Bob's address: refused, and Bob still gets his mail.
    h.deliver(plain_mail(A, address, "stop", subject="stop"))
    assert h.last_inbound().status == "rejected"
    player = h.player(B)
    assert player is not None and not player.stopped
    other = h.player(A)
    assert other is not None and not other.stopped


# -- away / back -------------------------------------------------------------------------

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
MINUTE = timedelta(minutes=1)


@pytest.fixture
def timed(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    """The production clocks: a reminder after 24 h, the timeout (autoplay) after 7 days."""
    h = Harness.build(
        tmp_path, db_url, db_engine, reminder_hours=24, timeout_days=7, timeout_action="autoplay"
    )
    yield h
    h.close()


def waiting_on_bob(h: Harness) -> int:
    """A game where Alice has discarded: it waits on Bob alone."""
    game_id = h.new_game((ALICE, BOB), seed="timers")
    move_for(h, game_id, 0)
    assert h.game(game_id).to_act() == (1,)
    return game_id


def reminders_to(h: Harness, address: str) -> int:
    return sum(r.kind == "reminder" and r.recipient == address for r in h.outbox())


def test_away_stops_the_clocks_and_tells_the_opponent(timed: Harness) -> None:
    h = timed
    game_id = waiting_on_bob(h)
    deadline = h.game_row(game_id).deadline_at
    assert deadline is not None
    before = h.count(A)
    start = h.clock()
    h.answer(B, "away 5 days")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert "clocks stand still" in reply_text(h.latest(B))
    player = h.player(B)
    assert player is not None and player.away_until is not None
    assert start + 5 * DAY < player.away_until < h.clock() + 5 * DAY
    # Alice is told, in a short mail.
    told = h.new_mail(A, before)
    assert len(told) == 1
    assert "Bob is away until" in reply_text(told[0])
    assert h.game_row(game_id).deadline_at == deadline + 5 * DAY

    # No reminder a day later, nor at the old deadline; the reminder comes a day after
    # the away time, the timeout seven days after it.
    h.clock.advance(25 * HOUR)
    h.step()
    assert reminders_to(h, B) == 0
    h.clock.advance(6 * DAY)  # 7 days and 1 hour since Alice's move
    h.step()
    assert reminders_to(h, B) == 1  # 24 h after the 5 days
    actions = len(h.log(game_id))
    h.clock.advance(4 * DAY)  # 11 days and 1 hour: still within 5 + 7
    h.step()
    assert len(h.log(game_id)) == actions
    h.clock.advance(DAY)  # 12 days and 1 hour: the timeout applies
    h.step()
    assert len(h.log(game_id)) > actions


def test_back_ends_it_early_and_gives_the_days_back(timed: Harness) -> None:
    h = timed
    game_id = waiting_on_bob(h)
    deadline = h.game_row(game_id).deadline_at
    h.answer(B, "away 10 days")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    before = h.count(A)
    h.answer(B, "back")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert "Welcome back" in reply_text(h.latest(B))
    assert "Bob is back" in reply_text(h.new_mail(A, before)[-1])
    player = h.player(B)
    assert player is not None and player.away_until is None
    # The clocks stood still only while Bob was away (a few test-clock ticks).
    now_deadline = h.game_row(game_id).deadline_at
    assert deadline is not None and now_deadline is not None
    assert deadline <= now_deadline < deadline + MINUTE
    # The ten days were given back: the whole allowance is there again.
    h.answer(B, "away 14 days")
    assert h.last_inbound().status == "applied", h.last_inbound().reason


def test_away_refusals_and_the_allowance(timed: Harness) -> None:
    h = timed
    game_id = waiting_on_bob(h)

    def left_after(command: str, status: str) -> str:
        h.answer(B, command)
        assert h.last_inbound().status == status, h.last_inbound().reason
        return reply_text(h.latest(B))

    assert "You are not away." in left_after("back", "rejected")
    assert "away for how long?" in left_after("away 0 days", "rejected")
    assert "at most 14 days away" in left_after("away 15 days", "rejected")
    assert "at most 14 days away" in left_after("away 99999999999999999999 days", "rejected")
    left_after("away 1 week", "applied")
    assert "already away" in left_after("away 1 day", "rejected")
    left_after("back", "applied")  # at once: the 7 days are given back
    left_after("away 10 days", "applied")
    h.clock.advance(4 * DAY)
    h.step()
    left_after("back", "applied")  # 4 days used, 6 given back: 10 left
    said = left_after("away 11 days", "rejected")
    assert f"Each game allows 14 days away; you have 10 in game {game_id}." in said
    left_after("away 10 days", "applied")
    h.clock.advance(11 * DAY)  # all 10 used; away no more
    h.step()
    said = left_after("away 1 day", "rejected")
    assert f"you have 0 in game {game_id}" in said
    player = h.player(B)
    assert player is not None and player.away_until is not None
    assert player.away_until < h.clock()


def test_a_turn_that_comes_while_away_starts_its_clock_on_return(timed: Harness) -> None:
    h = timed
    game_id = waiting_on_bob(h)
    h.answer(A, "away 3 days")
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    # Alice is not to move: her game's clocks are Bob's, and stay as they were.
    player = h.player(A)
    assert player is not None and player.away_until is not None
    for _ in range(4):  # Bob discards, then leads: then it is Alice's turn
        move_for(h, game_id, 1)
        if 0 in h.game(game_id).to_act():
            break
    assert 0 in h.game(game_id).to_act()
    row = h.game_row(game_id)
    assert row.next_reminder_at == player.away_until + 24 * HOUR
    assert row.deadline_at == player.away_until + 7 * DAY


def test_away_by_plain_mail_tells_every_opponent(timed: Harness) -> None:
    h = timed
    h.new_game((ALICE, BOB))
    h.new_game((ALICE, CAROL), seed="second")
    b, c = h.count(B), h.count(CAROL[0])
    h.deliver(plain_mail(A, SERVICE, "away 2 days"))
    held(h, A)
    assert (h.count(B), h.count(CAROL[0])) == (b, c)  # nothing before Alice confirms
    done = h.confirm(A)
    assert done.status == "applied", done.reason
    assert "Alice is away until" in reply_text(h.new_mail(B, b)[-1])
    assert "Alice is away until" in reply_text(h.new_mail(CAROL[0], c)[-1])


def test_help_lists_the_settings(harness: Harness) -> None:
    h = harness
    h.new_game((ALICE, BOB))
    h.answer(A, "help")
    mail = h.latest(A)
    text = reply_text(mail)
    for phrase in ("Your settings", "name Alice Smith", "mail text", "stop", "away 5 days"):
        assert phrase in text
    html = mail.get_body(("html",))
    assert html is not None and "away 5 days" in str(html.get_content())


def test_the_timers_wait_for_a_player_away_when_the_game_began(timed: Harness) -> None:
    h = timed
    h.new_game((ALICE, CAROL))
    h.new_game((ALICE, CAROL), seed="second")
    h.deliver(plain_mail(A, SERVICE, "away 3 days"))
    held(h, A)
    done = h.confirm(A)
    assert done.status == "applied", done.reason
    # A game begun while Alice is away: both must discard, she among them.
    game_id = h.new_game((ALICE, BOB), seed="timers")
    h.clock.advance(25 * HOUR)
    h.step()
    assert reminders_to(h, A) == 0
    row = h.game_row(game_id)
    player = h.player(A)
    assert player is not None and player.away_until is not None
    assert row.next_reminder_at == player.away_until + 24 * HOUR
    assert row.deadline_at == player.away_until + 7 * DAY
    h.clock.advance(3 * DAY)  # back, and a day on
    h.step()
    assert reminders_to(h, A) >= 1
