"""Nobody is dropped or locked out by the rules that stop forgers.

A keen player's proven mail is never ignored for volume: 300 replies with her token in
one hour are all read; over ``max_proven_per_hour`` they wait for the hour to allow
them, she is told once, and every one is then read. A mailbox silenced for good (its
own confirmed ``never``) comes back by its own mail — a "start" it confirms with one
click, or a reply to a game mail — and by the admin's ``pbem player unsuppress``."""

from __future__ import annotations

from datetime import timedelta
from email.message import EmailMessage

from pbem.store import models as m
from tests.abuse.conftest import Build, Record
from tests.abuse.helpers import (
    confirm_latest,
    drain,
    forged,
    kinds_to,
    last_inbound_id,
    reasons,
)
from tests.e2e.helpers import ALICE, BOB, Harness, cli_env, reply, run_cli

A, B = ALICE[0], BOB[0]


def game_mail(h: Harness, game: int) -> EmailMessage:
    """Alice's newest mail of ``game`` (its Reply-To carries her seat's token)."""
    return next(msg for msg in reversed(h.received(A)) if h.token(game, 0) in str(msg["Reply-To"]))


def burst(h: Harness, game: int, n: int) -> list[int]:
    """``n`` replies of Alice to her game mail asking for her hand, all arriving at
    once and taken by the daemon's steps; their inbound ids."""
    mail = game_mail(h, game)
    before = last_inbound_id(h)
    for _ in range(n):
        h.send(reply(mail, A, "Alice", "hand"))
    for _ in range(20):  # each step reads a hundred at most
        h.step()
        ids = [row.id or 0 for row in h.inbound() if (row.id or 0) > before]
        if len(ids) == n and not h.service.pending_ids(1):
            return ids
    raise AssertionError(f"{len(ids)} of {n} read")


def statuses(h: Harness, ids: list[int]) -> dict[str, int]:
    found: dict[str, int] = {}
    for row in h.inbound():
        if row.id in ids:
            found[row.status] = found.get(row.status, 0) + 1
    return found


def test_three_hundred_proven_mails_in_an_hour_are_all_read(
    build: Build, record_property: Record
) -> None:
    h = build(reminder_hours=0, timeout_days=0)
    game = h.new_game((ALICE, BOB))
    ids = burst(h, game, 300)
    got = statuses(h, ids)
    record_property("applied", got.get("applied", 0))
    assert got == {"applied": 300}, (got, reasons(h))


def test_proven_mail_over_the_limit_waits_and_is_told_once(
    build: Build, record_property: Record
) -> None:
    h = build(reminder_hours=0, timeout_days=0, max_proven_per_hour=20)
    game = h.new_game((ALICE, BOB))
    ids = burst(h, game, 30)
    got = statuses(h, ids)
    assert got == {"applied": 20, "pending": 10}, (got, reasons(h))
    waiting = [row for row in h.inbound() if row.status == m.InboundStatus.PENDING.value]
    assert all(row.not_before is not None and row.rule == "volume" for row in waiting)
    assert kinds_to(h, A).count("error") == 1  # told once, not ten times
    assert "wait" in str(h.latest(A)["Subject"]).lower()
    assert h.service.pending_ids() == []  # none taken before its time
    # An hour later every one is read, in turn, and she is not told again.
    h.clock.advance(timedelta(hours=1, minutes=1))
    drain(h)
    assert statuses(h, ids) == {"applied": 30}, reasons(h)
    assert kinds_to(h, A).count("error") == 1
    record_property("told", kinds_to(h, A).count("error"))


def test_a_silenced_mailbox_comes_back(build: Build) -> None:
    h = build(reminder_hours=0, timeout_days=0)
    game = h.new_game((ALICE, BOB))
    # Alice really says never: her mailbox confirms it.
    h.deliver(forged(A, "never"))
    confirm_latest(h, A)
    assert "until it says start" in dict(h.service.mailbox(A))["suppressed"]
    # Her own plain "start": one click, and she is back.
    h.deliver(forged(A, "start"))
    confirm_latest(h, A)
    assert dict(h.service.mailbox(A))["suppressed"] == "no"
    # Silenced again; a reply to her game mail (her token) with "start" lifts it too.
    h.deliver(forged(A, "never"))
    confirm_latest(h, A)
    assert dict(h.service.mailbox(A))["suppressed"] != "no"
    h.deliver(reply(game_mail(h, game), A, "Alice", "start"))
    assert dict(h.service.mailbox(A))["suppressed"] == "no", reasons(h)
    # And the admin lifts it, by the real command line, whoever put it there. (A day
    # on: three answers to a From alone today already.)
    h.clock.advance(timedelta(days=1))
    h.deliver(forged(A, "never"))
    confirm_latest(h, A)
    env = cli_env(h.settings.data_dir, h.settings.db_url)
    shown = run_cli(env, "player", "show", A)
    assert shown.exit_code == 0 and "until it says start" in shown.output, shown.output
    lifted = run_cli(env, "player", "unsuppress", A)
    assert lifted.exit_code == 0 and "off the suppression list" in lifted.output
    assert dict(h.service.mailbox(A))["suppressed"] == "no"
    again = run_cli(env, "player", "unsuppress", A)
    assert again.exit_code == 0 and "was not on" in again.output
    bad = run_cli(env, "player", "show", "not an address")
    assert bad.exit_code == 1 and "not an email address" in bad.output
