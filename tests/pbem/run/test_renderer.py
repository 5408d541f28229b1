"""Turn mails made in helper processes (`pbem.render.mailmaker`, the helpers running
`pbem.run.renderer`): byte for byte the mail this process would make, and nothing lost
when a helper fails, dies or hangs."""

from __future__ import annotations

import logging
import os
import random
import re
import signal
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from engine import new_game, player_view
from engine.computer import choose_action
from pbem.render import MailContext, mailmaker
from pbem.render.mailmaker import MailMaker, start_helpers
from pbem.render.turnmail import TurnMailJob, make_turn_mail
from pbem.service import transaction as service_module
from tests.e2e.helpers import ALICE, BOB, Harness, parse, reply
from tests.e2e.test_exactly_once import discard

NAMES = ("Alice", "Bob")
_BOUNDARY = re.compile(rb"=_[0-9a-f]{16}")


def same(raw: bytes | None) -> bytes:
    """A composed mail without its MIME boundaries (random in every mail made)."""
    assert raw is not None
    return _BOUNDARY.sub(b"BOUNDARY", raw)


def made_here(job: TurnMailJob) -> bytes:
    return same(make_turn_mail(job))


def _jobs(count: int, seed: str = "helper") -> list[TurnMailJob]:
    """Turn-mail jobs of a real game, as the service makes them (both seats, every move)."""
    rng = random.Random(seed)
    game = new_game(2, seed=seed)
    jobs: list[TurnMailJob] = []
    since = [0, 0]
    while len(jobs) < count and not game.is_over:
        game.apply(choose_action(game, game.to_act()[0], rng, "random"))
        for seat in (0, 1):
            view = player_view(game, seat, since[seat])
            ctx = MailContext(
                game_id=7,
                names=NAMES,
                recipient_seat=seat,
                reply_hint="Reply to this email with your move.",
                since_event=since[seat],
                ending=('Reply "rematch" for another game.',),
            )
            since[seat] = len(game.events)
            envelope: dict[str, Any] = {
                "sender": "cribbage@pbem.test",
                "sender_name": "Cribbage by mail",
                "to": f"{NAMES[seat].lower()}@example.com",
                "to_name": NAMES[seat],
                "message_id": f"<tok{seat}.7.a{len(jobs)}.turn@pbem.test>",
                "in_reply_to": None,
                "references": [],
                "reply_to": f"cribbage+tok{seat}@pbem.test",
                "loop_value": "cribbage@pbem.test",
                "date": datetime(2026, 11, 23, 12, 0, tzinfo=UTC),
                "attachments": [],
            }
            jobs.append(TurnMailJob(view, ctx, envelope))
    return jobs[:count]


@pytest.fixture
def helper() -> Iterator[None]:
    """One helper, started and ready; stopped afterwards (the next test starts afresh)."""
    mailmaker.shutdown_helpers()
    mailmaker._POOL.disabled = False
    mailmaker._POOL.stillborn = 0
    assert start_helpers(1, timeout=60) == 1
    yield
    mailmaker.shutdown_helpers()
    mailmaker._POOL.disabled = False
    mailmaker._POOL.stillborn = 0


def _the_helper() -> mailmaker._Helper:
    [only] = mailmaker._POOL.helpers
    return only


def test_a_helper_makes_the_same_bytes_as_this_process(helper: None) -> None:
    jobs = _jobs(40)
    with MailMaker(1) as maker:
        assert maker.uses_helpers
        pending = [maker.submit(job) for job in jobs]
        maker.finish()
    assert [same(p.raw) for p in pending] == [made_here(job) for job in jobs]
    assert maker.made_by_helpers > 0
    assert maker.made_by_helpers + maker.made_here == len(jobs)


def test_without_helpers_every_mail_is_made_at_once() -> None:
    job = _jobs(1)[0]
    with MailMaker(0) as maker:
        assert not maker.uses_helpers
        pending = maker.submit(job)
        assert same(pending.raw) == made_here(job)
    assert maker.made_here == 1 and maker.made_by_helpers == 0


def test_a_helper_killed_mid_batch_loses_no_mail(
    helper: None, caplog: pytest.LogCaptureFixture
) -> None:
    jobs = _jobs(12)
    victim = _the_helper()
    with MailMaker(1) as maker:
        pending = [maker.submit(job) for job in jobs[:6]]
        os.kill(victim.process.pid, signal.SIGKILL)
        victim.process.wait(timeout=10)
        pending += [maker.submit(job) for job in jobs[6:]]
        with caplog.at_level(logging.WARNING, logger="pbem.renderer"):
            maker.finish()
    assert [same(p.raw) for p in pending] == [made_here(job) for job in jobs]
    assert "making its mail here" in caplog.text
    # The next batch starts another helper.
    assert start_helpers(1, timeout=60) == 1
    assert _the_helper() is not victim


def test_a_mail_that_fails_in_the_helper_fails_here_with_its_own_error(helper: None) -> None:
    good = _jobs(3)
    bad = TurnMailJob(good[0].view, good[0].ctx, {**good[0].envelope, "to": None})
    try:
        make_turn_mail(bad)
    except Exception as exc:  # what the batch meets without helpers
        expected = type(exc)
    else:
        pytest.fail("the broken job should not compose")
    with MailMaker(1) as maker:
        pending = [maker.submit(job) for job in good]
        maker.submit(bad)
        with pytest.raises(expected):
            maker.finish()
    # The helper is still there and still right.
    assert _the_helper().alive()
    with MailMaker(1) as maker:
        again = maker.submit(good[1])
        maker.finish()
    assert same(again.raw) == made_here(good[1])
    assert all(p.raw is None or same(p.raw) == made_here(p.job) for p in pending)


def test_a_helper_that_stops_answering_is_replaced_by_this_process(
    helper: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mailmaker, "ANSWER_TIMEOUT", 0.5)
    jobs = _jobs(6)
    stuck = _the_helper()
    os.kill(stuck.process.pid, signal.SIGSTOP)
    try:
        with MailMaker(1) as maker:
            pending = [maker.submit(job) for job in jobs]
            maker.finish()
    finally:
        if stuck.alive():
            os.kill(stuck.process.pid, signal.SIGCONT)
    assert [same(p.raw) for p in pending] == [made_here(job) for job in jobs]
    assert not stuck.alive()  # stopped for good
    assert stuck not in mailmaker._POOL.helpers


def test_a_second_batch_at_the_same_time_makes_its_own_mail(helper: None) -> None:
    jobs = _jobs(4)
    seen: list[bool] = []
    with MailMaker(1) as first:
        assert first.uses_helpers

        def other() -> None:
            with MailMaker(1) as second:
                seen.append(second.uses_helpers)
                made = second.submit(jobs[3])
                assert same(made.raw) == made_here(jobs[3])

        thread = threading.Thread(target=other)
        thread.start()
        thread.join(timeout=60)
        pending = first.submit(jobs[0])
        first.finish()
    assert seen == [False]
    assert same(pending.raw) == made_here(jobs[0])


def test_helpers_that_cannot_start_are_not_started_again(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """A helper that ends before it is ready (here: its Python cannot import the service)
    is replaced a few times, then mail is made in-process without further attempts."""
    mailmaker.shutdown_helpers()
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setattr(mailmaker.sys, "executable", str(broken))
    job = _jobs(1)[0]
    try:
        with caplog.at_level(logging.WARNING, logger="pbem.renderer"):
            for _ in range(mailmaker.STILLBORN_LIMIT + 3):
                for helper in list(mailmaker._POOL.helpers):
                    helper.process.wait(timeout=10)
                with MailMaker(1) as maker:
                    pending = maker.submit(job)
                    maker.finish()
                assert maker.made_here == 1 and same(pending.raw) == made_here(job)
        assert mailmaker._POOL.disabled
        assert "rendered in-process from now on" in caplog.text
        assert mailmaker._POOL.helpers == []
    finally:
        mailmaker._POOL.disabled = False
        mailmaker._POOL.stillborn = 0
        mailmaker.shutdown_helpers()


def test_the_default_is_a_helper_on_sqlite_and_none_on_postgresql(
    tmp_path: Path, db_url: str, db_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = Harness.build(tmp_path, db_url, db_engine)
    try:
        sqlite = db_url.startswith("sqlite")
        monkeypatch.setattr(service_module.os, "cpu_count", lambda: 2)
        assert h.service.render_processes == (1 if sqlite else 0)
        monkeypatch.setattr(service_module.os, "cpu_count", lambda: 1)
        assert h.service.render_processes == 0
    finally:
        h.close()
    h = Harness.build(tmp_path / "set", db_url, db_engine, render_processes=2)
    try:
        assert h.service.render_processes == 2
    finally:
        h.close()


def test_a_batch_queues_the_mail_its_helper_made(
    tmp_path: Path,
    db_url: str,
    db_engine: Engine,
    helper: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through the service: the outbox holds exactly the bytes this process would have
    made for each mail, most of them made by the helper."""
    makers: list[MailMaker] = []
    jobs: list[TurnMailJob] = []

    class Watched(MailMaker):
        def __init__(self, processes: int) -> None:
            super().__init__(processes)
            makers.append(self)

        def submit(self, job: TurnMailJob) -> mailmaker.PendingMail:
            jobs.append(job)
            return super().submit(job)

    monkeypatch.setattr(service_module, "MailMaker", Watched)
    h = Harness.build(tmp_path, db_url, db_engine, render_processes=1)
    try:
        game = h.new_game((ALICE, BOB), seed="helper-batch")
        h.mail_all(ALICE[0])  # a mail to each player after each move: four to make
        h.mail_all(BOB[0])
        ids = [
            inbound_id
            for inbound_id, _ in h.service.receive_many(
                [
                    (reply(h.latest(ALICE[0]), ALICE[0], "Alice", discard(h, game, 0)), False),
                    (reply(h.latest(BOB[0]), BOB[0], "Bob", discard(h, game, 1)), False),
                ],
                "t",
            )
        ]
        outcomes = h.service.process_many(ids)
        assert [o.status for o in outcomes] == ["applied", "applied"]
        [maker] = makers
        assert maker.uses_helpers is False  # done: it let go of the helper
        assert maker.made_by_helpers + maker.made_here == len(jobs) >= 4
        assert maker.made_by_helpers > 0
        by_id = {row.message_id: row.raw for row in h.outbox()}
        for job in jobs:
            assert same(by_id[job.envelope["message_id"]]) == made_here(job)
        h.step()
        assert parse(by_id[jobs[-1].envelope["message_id"]])["Auto-Submitted"]
        assert h.view(ALICE[0]).phase == "pegging"
    finally:
        h.close()


def _game_over_job(seed: str = "over-helper") -> TurnMailJob:
    """The game-over mail of seat 0 of a finished game against ``hard``, with its review
    and its replay page, as the service hands it on."""
    from engine import Game, Settings
    from engine.archive import to_archive
    from engine.audit import computer_entries
    from engine.computer import computer_move, computer_view
    from pbem import engine_version
    from pbem.render.turnmail import GameOver, ReplayPage

    game = Game(Settings(players=2, target=61), seed)
    while not game.is_over:
        seat = game.to_act()[0]
        game.apply(computer_move(computer_view(game, seat), "medium" if seat == 0 else "hard"))
    archive = to_archive(
        game,
        game_id=7,
        players=[{"email": "alice@example.com", "name": "Alice"}, {"email": "c@x", "name": "C"}],
        status="finished",
        computer=computer_entries({1: "hard"}, engine_version()),
    )
    [job] = _jobs(1)
    view = player_view(game, 0, len(game.events) - 3)
    page = ReplayPage("cribbage-7.html", archive)
    return TurnMailJob(view, job.ctx, job.envelope, GameOver(game, 0, True, page))


def test_a_game_over_mail_is_made_with_its_review_and_page_by_the_helper(helper: None) -> None:
    """The review (about 0.4 s of CPU a player at 121) and the replay page are made where
    the mail is made: by the helper, byte for byte as here."""
    job = _game_over_job()
    with MailMaker(1) as maker:
        pending = maker.submit(job)
        maker.finish()
    assert maker.made_by_helpers == 1 and maker.made_here == 0
    assert same(pending.raw) == made_here(job)
    msg = parse(pending.raw or b"")
    text = str(msg.get_body(("plain",)).get_content())  # type: ignore[union-attr]
    assert "Your game, reviewed" in text
    pages = [p for p in msg.iter_attachments() if p.get_filename() == "cribbage-7.html"]
    assert len(pages) == 1
    html = pages[0].get_payload(decode=True).decode()  # type: ignore[union-attr]
    assert 'id="review"' in html


def test_the_service_hands_the_review_to_the_helper(
    tmp_path: Path,
    db_url: str,
    db_engine: Engine,
    helper: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through the service: the move that ends a game against the computer is answered
    by a game-over mail with its review, and the service's own process computes no
    review (the helper does): the step is not held by it."""
    import engine.review

    calls: list[int] = []
    real = engine.review.review_game

    def counted(game: Any, seat: int, *args: Any) -> Any:
        calls.append(seat)
        return real(game, seat, *args)

    h = Harness.build(tmp_path, db_url, db_engine, render_processes=1)
    try:
        computer = ("computer@pbem.test", "Computer")
        game_id = h.service.new_game(
            [ALICE, computer], target=61, seed="review-helper", computer=[1], level="hard"
        )
        h.step()
        h.play_until(game_id, lambda g: g.is_over or g.hand_no > 2)
        monkeypatch.setattr(engine.review, "review_game", counted)
        h.answer(ALICE[0], "resign confirm")
        assert h.game(game_id).is_over
        last = h.latest(ALICE[0])
        assert "gameover" in str(last["Message-ID"])
        assert "Your game, reviewed" in str(last.get_body(("plain",)).get_content())  # type: ignore[union-attr]
        assert calls == []  # made by the helper, not in the service's process
    finally:
        h.close()
