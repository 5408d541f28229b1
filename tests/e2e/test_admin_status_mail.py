"""Pause, resume and abort tell every player, with the admin's reason; after an abort no
mail offers a move (not the timers, not a resend, not mail queued before it); a resend of
a finished or aborted game says so. Through the real command line (typer's CliRunner) and
the service, on Maildir transports and both databases."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from functools import partial
from pathlib import Path
from unittest import mock

import pytest
from sqlalchemy import Engine

import pbem.service
from pbem.demo.bots import text_of, view_of
from pbem.service import Service
from tests.e2e.helpers import ALICE, BOB, CliResult, Harness, about, cli_env, reply, run_cli

A, B = ALICE[0], BOB[0]


@pytest.fixture
def timed(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    """The service with reminders (24 h) and the timeout (7 days, autoplay) on."""
    harness = Harness.build(
        tmp_path, db_url, db_engine, reminder_hours=24, timeout_days=7, timeout_action="autoplay"
    )
    yield harness
    harness.close()


def cli(h: Harness, *args: str, code: int = 0) -> CliResult:
    """``pbem ARGS`` on the harness's database and clock."""
    env = cli_env(h.settings.data_dir, h.settings.db_url)
    with mock.patch.object(pbem.service, "Service", partial(Service, clock=h.clock)):
        result = run_cli(env, *args)
    assert result.exit_code == code, result.output
    return result


def flat(msg: EmailMessage) -> str:
    return " ".join(text_of(msg).split())


def new_mail(h: Harness, before: dict[str, int]) -> dict[str, list[EmailMessage]]:
    return {address: h.new_mail(address, before[address]) for address in (A, B)}


def offers_a_move(msg: EmailMessage) -> bool:
    text = flat(msg)
    return "your turn" in (text + about(msg)).lower() or "Reply to this email" in text


def test_pause_resume_and_abort_tell_every_player_why(timed: Harness) -> None:
    h = timed
    gid = h.new_game(seed="status")
    before = h.counts((A, B))

    out = cli(h, "game", "pause", str(gid), "--reason", "Bob is travelling until Monday")
    assert f"game {gid} is now paused; every player was told: Bob is travelling" in out.stdout
    h.step()
    for address, mails in new_mail(h, before).items():
        [paused] = mails
        assert about(paused) == f"[Cribbage {gid}] Game paused", address
        text = flat(paused)
        assert "The admin paused this game. Reason: Bob is travelling until Monday." in text
        assert "moves wait until it is resumed" in text
        assert ">>>" not in text  # nothing to reply while paused
    # A move while paused is refused with the reason.
    before = h.counts((A, B))
    h.answer(A, "discard " + " ".join(c.ascii for c in sorted(h.game(gid).holding(0))[:2]))
    assert h.last_inbound().reason == "game is paused"
    assert "paused by the admin (Bob is travelling until Monday)" in flat(h.latest(A))

    before = h.counts((A, B))
    out = cli(h, "game", "resume", str(gid))  # no reason: a default one
    assert "every player was told: the game can go on" in out.stdout
    h.step()
    for address, mails in new_mail(h, before).items():
        [resumed] = mails
        assert about(resumed).startswith(f"[Cribbage {gid}] Game resumed — Hand 1")
        assert "your turn: discard" in about(resumed)  # both lay away now
        assert "The admin resumed this game. Reason: the game can go on." in flat(resumed)
        assert view_of(resumed) is not None, address

    h.answer(A, "discard " + " ".join(c.ascii for c in sorted(h.game(gid).holding(0))[:2]))
    assert h.last_inbound().status == "applied"
    before = h.counts((A, B))
    out = cli(h, "game", "abort", str(gid), "--reason", "the club closed")
    assert f"game {gid} is now aborted; every player was told: the club closed" in out.stdout
    h.step()
    for address, mails in new_mail(h, before).items():
        [aborted] = mails
        assert about(aborted) == f"[Cribbage {gid}] Game aborted", address
        text = flat(aborted)
        assert "The admin aborted this game. Reason: the club closed." in text
        assert "No more moves will be made." in text
        assert "The score when it stopped: You 0" in text
        assert not offers_a_move(aborted), text
        assert view_of(aborted) is None  # no view.json a bot could move from


def test_after_an_abort_no_mail_offers_a_move(timed: Harness) -> None:
    h = timed
    gid = h.new_game(seed="status")
    for address in (A, B):  # a mail after every move: Alice's discard queues two
        h.mail_all(address)
    # Alice's move is processed, but its mail is not sent yet when the game is aborted.
    cards = " ".join(c.ascii for c in sorted(h.game(gid).holding(0))[:2])
    h.service.receive(reply(h.latest(A), A, "Alice", f"discard {cards}"), "test")
    before = h.counts((A, B))
    [outcome] = h.service.process_pending()
    assert outcome.status == "applied"
    queued = [r for r in h.outbox() if r.status == "pending"]
    assert {r.kind for r in queued} == {"turn"} and len(queued) == 2

    h.service.set_status(gid, "aborted")
    rows = {r.id: r for r in h.outbox()}
    for row in queued:
        assert rows[row.id].status == "cancelled"
        assert rows[row.id].last_error == f"cancelled: game {gid} was aborted"
    game_row = h.game_row(gid)
    assert game_row.next_reminder_at is None and game_row.deadline_at is None
    assert game_row.status_reason == "the game will not be finished"
    h.step()
    for address, mails in new_mail(h, before).items():
        assert [about(m) for m in mails] == [f"[Cribbage {gid}] Game aborted"], address
        assert "Reason: the game will not be finished." in flat(mails[0])

    # The clocks: weeks later, no reminder and no timeout.
    before = h.counts((A, B))
    for _ in range(3):
        h.clock.advance(timedelta(days=8))
        assert h.service.run_timers() == 0
        h.step()
    assert h.counts((A, B)) == before
    assert len(h.log(gid)) == 1

    # A resend says the game was aborted, and why.
    out = cli(h, "game", "resend", str(gid))
    assert f"game {gid} was aborted: 2 emails queued saying so, no moves offered" in out.stdout
    h.step()
    for address, mails in new_mail(h, before).items():
        [again] = mails
        assert about(again) == f"[Cribbage {gid}] Game aborted", address
        assert "Reason: the game will not be finished." in flat(again)
        assert not offers_a_move(again)
    # A reply to it moves nothing, and says why.
    h.answer(B, "discard " + " ".join(c.ascii for c in sorted(h.game(gid).holding(1))[:2]))
    assert h.last_inbound().reason == "game is aborted"
    assert "This game is aborted (the game will not be finished)" in flat(h.latest(B))


def test_resend_of_a_finished_game_gives_the_result(timed: Harness) -> None:
    h = timed
    gid = h.new_game(seed="status")
    h.answer(A, "resign confirm")
    assert h.game_row(gid).status == "finished"
    before = h.counts((A, B))
    out = cli(h, "game", "resend", str(gid))
    assert f"game {gid} is over: 2 emails queued with the result, no moves offered" in out.stdout
    h.step()
    for address, mails in new_mail(h, before).items():
        [over] = mails
        assert "Game over" in about(over), address
        result = "GAME OVER: You win" if address == B else "GAME OVER: Bob wins"
        assert result in flat(over)
        assert not offers_a_move(over)


def test_status_changes_that_cannot_be(timed: Harness) -> None:
    h = timed
    gid = h.new_game(seed="status")
    before = h.counts((A, B))
    out = cli(h, "game", "resume", str(gid), code=1)
    assert f"game {gid} is active; cannot make it active" in out.output
    cli(h, "game", "abort", str(gid), "--reason", "  spaces\nand a new line  ")
    assert h.game_row(gid).status_reason == "spaces and a new line"
    out = cli(h, "game", "pause", str(gid), code=1)
    assert f"game {gid} is aborted; cannot make it paused" in out.output
    out = cli(h, "game", "pause", "999", code=1)
    assert "no game 999" in out.output
    out = cli(h, "game", "resend", "999", code=1)
    assert "no game 999" in out.output
    h.step()
    assert h.counts((A, B)) == {A: before[A] + 1, B: before[B] + 1}  # the abort, once
    assert "Traceback" not in out.output
