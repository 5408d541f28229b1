"""Digest mode on a test clock, through the daemon, Maildirs and both databases: a
simulated week of play gives exactly seven digests (one a day, at ``digest_hour``), each
listing the games waiting on the player with their reply addresses, and no mail for
moves while it is not the player's turn; ``digest off``; and exactly one digest a day
with two workers at once on PostgreSQL."""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from engine import Action, Resign, computer
from pbem.demo.bots import command_for, text_of, view_of
from pbem.service import Service
from tests.e2e.helpers import ALICE, BOB, CAROL, DOMAIN, PEOPLE, Harness, about, plain_mail, reply

A, B, C = ALICE[0], BOB[0], CAROL[0]
SERVICE = f"cribbage@{DOMAIN}"
HOUR = timedelta(hours=1)
CONFIRM_SUBJECT = "[Cribbage] Please confirm your request"


@pytest.fixture
def slow_clocks(tmp_path: Path, db_url: str, db_engine: Engine) -> Iterator[Harness]:
    """Digests at 07:00 UTC; reminders and timeouts far away (not what is tested)."""
    harness = Harness.build(
        tmp_path, db_url, db_engine, digest_hour=7, reminder_hours=10_000, timeout_days=1_000
    )
    yield harness
    harness.close()


def flat(text: str) -> str:
    return " ".join(text.split())


def is_digest(msg: EmailMessage) -> bool:
    return "Daily digest" in about(msg)


def move(h: Harness, game_id: int, action: Action) -> None:
    """The player of ``action.seat`` replies with it to their latest mail of that game
    (not to a digest, which answers to the plain address)."""
    address = h.address_of(game_id, action.seat)
    token = h.token(game_id, action.seat)
    latest = next(msg for msg in reversed(h.received(address)) if token in str(msg["Reply-To"]))
    name = next(n for a, n in PEOPLE if a == address)
    h.deliver(reply(latest, address, name, command_for(action)))


def by_plain_mail(h: Harness, address: str, body: str, **options: Any) -> None:
    """``address`` writes ``body`` to the plain address: a From alone proves nothing, so
    it is held and one confirmation request goes to ``address``, who answers it."""
    h.deliver(plain_mail(address, SERVICE, body, **options))
    held = h.last_inbound()
    assert held.status == "applied" and "held until" in (held.reason or ""), held.reason
    assert str(h.latest(address)["Subject"]) == CONFIRM_SUBJECT
    done = h.confirm(address)
    assert done.status == "applied", done.reason


def at(h: Harness, day: int, hour: int) -> None:
    """Move the test clock to ``hour``:00 UTC of the week's ``day`` (0-based)."""
    start = h.clock.now.replace(hour=0, minute=0, second=0, microsecond=0)
    target = datetime(2024, 3, 2 + day, hour, tzinfo=start.tzinfo)
    assert target >= h.clock.now
    h.clock.advance(target - h.clock.now)


def test_a_week_in_digest_mode(slow_clocks: Harness) -> None:
    h = slow_clocks
    games = [h.new_game([ALICE, BOB], target=121), h.new_game([ALICE, CAROL], target=121)]
    before = h.count(A)
    h.deliver(plain_mail(A, SERVICE, "digest"))
    assert h.player(A).digest is False  # type: ignore[union-attr]  # not before she confirms
    h.confirm(A)
    assert h.player(A).digest is True  # type: ignore[union-attr]
    # The confirmation request, then the answer alone: past 07:00 on the day it was sent,
    # the first digest is the next day's, not one at once on top of the answer.
    (request, answer) = h.new_mail(A, before)
    assert str(request["Subject"]) == CONFIRM_SUBJECT
    assert "Digest mode" in flat(text_of(answer)) and not is_digest(answer)
    assert "from tomorrow" in flat(text_of(answer))
    seen = h.count(A)
    rng = random.Random(5)
    digests: list[EmailMessage] = []
    for day in range(7):
        for hour in (6, 9, 18):  # before the digest hour, then through the day
            at(h, day, hour)
            h.step()
            for game_id in games:
                game = h.game(game_id)
                if game.is_over:
                    continue
                seat = game.to_act()[0]
                move(h, game_id, computer.choose_action(game, seat, rng, "random"))
                assert h.last_inbound().status == "applied", h.last_inbound().reason
            for msg in h.new_mail(A, seen):
                if is_digest(msg):
                    digests.append(msg)
                    continue
                view = view_of(msg)
                assert view is not None, about(msg)
                # Only the mail of her own turn (or the end): no news of others' moves.
                assert view.my_turn or view.outcome is not None, about(msg)
            seen = h.count(A)
        today = [d for d in digests if f"2024-03-{2 + day:02d}" in text_of(d)]
        assert len(today) == 1, f"day {day}: {len(today)} digests"
    assert len(digests) == 7
    last = flat(text_of(digests[-1]))
    for game_id in games:
        if not h.game(game_id).is_over:
            assert f"Game {game_id}, you v" in last
            assert f"cribbage+{h.token(game_id, 0)}@{DOMAIN}" in last  # her reply address
    assert str(digests[-1]["Reply-To"]).endswith(f"{SERVICE}>")
    # Bob is not in digest mode: he got news mails while it was not his turn.
    bob_views = [view_of(msg) for msg in h.received(B)]
    assert any(v is not None and not v.my_turn for v in bob_views)
    assert not any(is_digest(msg) for msg in h.received(B))


def test_digest_off_and_stop(slow_clocks: Harness) -> None:
    h = slow_clocks
    h.new_game([ALICE, BOB])
    by_plain_mail(h, A, "digest")  # at noon: no digest at once
    assert sum(is_digest(m) for m in h.received(A)) == 0
    at(h, 0, 8)
    h.step()  # the next day's at 07:00
    assert sum(is_digest(m) for m in h.received(A)) == 1
    by_plain_mail(h, A, "digest off")
    assert h.player(A).digest is False  # type: ignore[union-attr]
    at(h, 1, 8)
    h.step()
    assert sum(is_digest(m) for m in h.received(A)) == 1
    by_plain_mail(h, A, "digest")  # on again past 07:00: none at once
    h.step()
    assert sum(is_digest(m) for m in h.received(A)) == 1
    by_plain_mail(h, A, "stop")
    at(h, 2, 8)
    h.step()
    assert sum(is_digest(m) for m in h.received(A)) == 1  # "stop": no digest either


# Several workers at once: PostgreSQL only (SQLite runs one daemon at a time).
@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_two_workers_send_one_digest_a_day(slow_clocks: Harness) -> None:
    h = slow_clocks
    h.new_game([ALICE, BOB])
    by_plain_mail(h, A, "digest")
    at(h, 0, 8)
    workers = [Service(h.settings, h.db, clock=h.clock) for _ in range(4)]
    start = threading.Barrier(len(workers))
    errors: list[BaseException] = []

    def run(service: Service) -> None:
        try:
            start.wait()
            service.run_timers()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    today = [r for r in h.outbox() if r.kind == "digest" and "2024-03-02" in r.message_id]
    assert len(today) == 1


def test_no_digest_without_a_game_in_progress(slow_clocks: Harness) -> None:
    h = slow_clocks
    game_id = h.new_game([ALICE, BOB])
    h.answer(A, "digest")
    move(h, game_id, Resign(0))  # replying to her game mail, not to the digest
    assert h.game_row(game_id).status == "finished"
    before = sum(is_digest(m) for m in h.received(A))
    at(h, 0, 8)
    h.step()
    at(h, 1, 8)
    h.step()
    assert sum(is_digest(m) for m in h.received(A)) == before


def test_digest_takes_effect_from_the_next_days_digest(slow_clocks: Harness) -> None:
    """``digest`` in a game mail, past the digest hour: the answer (where the game
    stands) and nothing more that day; the first digest comes the next morning. Asked
    before the hour, it is still the next day's."""
    h = slow_clocks
    h.new_game([ALICE, BOB])
    h.new_game([CAROL, BOB])
    before = h.count(A)
    h.answer(A, "digest")  # at about noon
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    h.step()
    h.clock.advance(3 * HOUR)
    h.step()
    mails = h.new_mail(A, before)
    assert len(mails) == 1 and not is_digest(mails[0])
    at(h, 0, 6)
    h.step()
    assert not any(is_digest(m) for m in h.received(A))
    at(h, 0, 8)
    h.step()
    assert sum(is_digest(m) for m in h.received(A)) == 1
    # Carol, before the digest hour: not today's either, the next day's.
    at(h, 1, 5)
    by_plain_mail(h, C, "digest")
    at(h, 1, 8)
    h.step()
    assert not any(is_digest(m) for m in h.received(C))
    at(h, 2, 8)
    h.step()
    assert sum(is_digest(m) for m in h.received(C)) == 1


def test_a_digests_unsubscribe_means_stop(slow_clocks: Harness) -> None:
    """The digest's ``List-Unsubscribe`` sends ``stop`` — less mail — never ``digest
    off`` (a mail after every move again)."""
    h = slow_clocks
    h.new_game([ALICE, BOB])
    h.new_game([ALICE, CAROL])
    by_plain_mail(h, A, "digest")
    at(h, 0, 8)
    h.step()
    digest = next(m for m in h.received(A) if is_digest(m))
    header = " ".join(str(digest["List-Unsubscribe"]).split())  # (folded when long)
    # A mailto to the service (with her own token: one click needs no confirmation).
    assert re.fullmatch(rf"<mailto:cribbage(\+[^@]+)?@{DOMAIN}\?subject=stop>", header), header
    # What a mail client sends for it: an empty mail with that subject.
    address, _, query = header.strip("<>").removeprefix("mailto:").partition("?subject=")
    before = h.count(A)
    h.deliver(plain_mail(A, address, "", subject=query))
    assert h.last_inbound().status == "applied", h.last_inbound().reason
    assert "held until" not in (h.last_inbound().reason or ""), h.last_inbound().reason
    assert not any(str(m["Subject"]) == CONFIRM_SUBJECT for m in h.new_mail(A, before))
    player = h.player(A)
    assert player is not None and player.stopped and player.digest
    at(h, 1, 8)
    h.step()
    assert sum(is_digest(m) for m in h.received(A)) == 1
