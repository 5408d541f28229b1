"""What the review after a game costs: `engine.review.review_game` for one seat of a
whole game to 121 against the ``hard`` computer, beside the rest of that seat's
game-over mail (its replay page — the game replayed, the computer's moves audited — and
the mail rendered) made without and with the review; then what the service's own
process spends on that game-over mail, made there or by a helper process
(`pbem.render.mailmaker`, which makes the review and the page with the mail).

    PYTHONPATH=. python benchmarks/review_bench.py [--games 10] [--players 2] [--helper]

The reviewed seat is played by ``medium`` (a careful player who still gives points
away), the others by ``hard``; each game is dealt from its own seed (``review-N``).
Times are CPU seconds of this process (``time.process_time``), so other work on the
machine does not count; the first review of the process, which loads the hard player's
tables, is reported apart and left out of the figures per game. With ``--helper`` the
game-over mail (review, replay page, mail) is also made as the service makes it, as a
`TurnMailJob`: here (no helper) and by one helper process — the service's CPU for the
mail and the wall time until it is made; the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from engine import Game, Settings, player_view
from engine.archive import to_archive
from engine.audit import computer_entries
from engine.computer import computer_move, computer_view
from engine.review import GameReview, review_game
from engine.strategy import multi, pegsearch
from pbem import engine_version
from pbem.render import MailContext
from pbem.render.mail import render_turn
from pbem.render.replay import render_page, replay_data
from pbem.render.turnmail import GameOver, ReplayPage, TurnMailJob, make_turn_mail

NAMES = ("Nia", "Computer", "Otto", "Pia")


def play(seed: str, players: int) -> Game:
    """A whole game to 121: seat 0 ``medium``, the other seats ``hard``."""
    game = Game(Settings(players=players, target=121), seed)
    while not game.is_over:
        seat = game.to_act()[0]
        game.apply(computer_move(computer_view(game, seat), "medium" if seat == 0 else "hard"))
    return game


def cpu(work: Callable[[], Any]) -> tuple[float, Any]:
    """``work``'s CPU time and result, the pegging searches' memories emptied first (a
    review and an audit each start from the game's first hand)."""
    pegsearch.forget()
    multi.forget()
    start = time.process_time()
    out = work()
    return time.process_time() - start, out


def archive_of(game: Game) -> dict[str, Any]:
    levels = {seat: "hard" for seat in range(1, game.players)}
    return to_archive(
        game,
        game_id=1,
        players=[{"email": f"p{s}@example.org", "name": NAMES[s]} for s in range(game.players)],
        status="finished",
        computer=computer_entries(levels, engine_version()),
    )


def game_over_mail(game: Game) -> dict[str, Any]:
    """What seat 0's game-over mail costs now: its replay page's data (the game replayed,
    the computer's moves audited), the page and the mail rendered."""
    data = replay_data(archive_of(game))
    render(game, data, None)
    return data


def render(game: Game, data: dict[str, Any], review: GameReview | None) -> tuple[int, int]:
    """Seat 0's replay page and game-over mail rendered (with ``review``, if any): the
    bytes of the page and of the mail's text and HTML parts."""
    page = render_page({**data, "seat": 0}, review=review)
    ctx = MailContext(
        game_id=1, names=NAMES[: game.players], recipient_seat=0, reply_hint="", review=review
    )
    mail = render_turn(player_view(game, 0, len(game.events) - 3), ctx)
    return len(page.encode()), len(mail.text.encode()) + len(mail.html.encode())


def rendering(game: Game, data: dict[str, Any], review: GameReview | None) -> float:
    """The CPU of `render`, the best of 5."""
    return min(cpu(partial(render, game, data, review))[0] for _ in range(5))


def game_over_job(game: Game) -> TurnMailJob:
    """Seat 0's game-over mail as the service hands it on: the view, the context, the
    envelope, and the part made with the mail (the review, the replay page)."""
    ctx = MailContext(game_id=1, names=NAMES[: game.players], recipient_seat=0, reply_hint="")
    envelope: dict[str, Any] = {
        "sender": "cribbage@pbem.test",
        "sender_name": "Cribbage by mail",
        "to": "p0@example.org",
        "to_name": NAMES[0],
        "message_id": "<tok.1.over@pbem.test>",
        "in_reply_to": None,
        "references": [],
        "reply_to": "cribbage+tok@pbem.test",
        "loop_value": "cribbage@pbem.test",
        "attachments": [],
    }
    page = ReplayPage("cribbage-1.html", archive_of(game))
    return TurnMailJob(
        player_view(game, 0, len(game.events) - 3), ctx, envelope, GameOver(game, 0, True, page)
    )


def with_helper(games: list[Game]) -> None:
    """The game-over mail made here and by one helper: this process's CPU, and the wall
    time until the mail is made."""
    from pbem.render.mailmaker import MailMaker, shutdown_helpers, start_helpers

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    here: list[float] = []
    for game in games:
        job = game_over_job(game)
        here.append(cpu(partial(make_turn_mail, job))[0])
    assert start_helpers(1, timeout=120) == 1
    # Each helper's first game-over mail also loads the hard player's tables: one
    # untimed mail first, as a running service's helper has made one before.
    with MailMaker(1, only_game_over=True) as maker:
        maker.submit(game_over_job(games[0]))
        maker.finish()
    service_cpu: list[float] = []
    wall: list[float] = []
    for game in games:
        job = game_over_job(game)
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        with MailMaker(1, only_game_over=True) as maker:
            pending = maker.submit(job)
            maker.finish()
        service_cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start_wall)
        assert pending.raw is not None and maker.made_by_helpers == 1
    shutdown_helpers()
    for label, times in (
        ("game-over mail made in the service's process: its CPU", here),
        ("game-over mail made by a helper: the service's CPU", service_cpu),
        ("game-over mail made by a helper: wall time until made", wall),
    ):
        print(
            f"{label}: median {statistics.median(times) * 1000:.0f} ms, "
            f"mean {statistics.mean(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms"
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--helper", action="store_true", help="the game-over mail by a helper")
    args = parser.parse_args()
    games = [play(f"review-{i}", args.players) for i in range(args.games + 1)]
    first, _ = cpu(partial(review_game, games[0], 0))
    game_over_mail(games[0])  # the audit's and the templates' first use, not timed
    reviews: list[float] = []
    mails: list[float] = []
    words: list[float] = []
    decisions: list[int] = []
    given: list[float] = []
    sizes: list[tuple[int, int]] = []  # what the review adds to the page and to the mail
    for game in games[1:]:
        spent, data = cpu(partial(game_over_mail, game))
        mails.append(spent)
        spent, review = cpu(partial(review_game, game, 0))
        reviews.append(spent)
        decisions.append(len(review.decisions))
        given.append(review.total)
        words.append(rendering(game, data, review) - rendering(game, data, None))
        (page, mail), (bare_page, bare_mail) = render(game, data, review), render(game, data, None)
        sizes.append((page - bare_page, mail - bare_mail))
    print(f"machine: {platform.machine()}, Python {platform.python_version()}")
    print(
        f"{args.games} games to 121, {args.players} players, seat 0 medium vs hard; "
        f"{statistics.mean(len(g.actions) for g in games[1:]):.0f} actions a game, "
        f"{statistics.mean(decisions):.1f} decisions reviewed a game, "
        f"{statistics.mean(given):.1f} points given away on average"
    )
    print(f"first review of the process (the hard tables loaded): {first * 1000:.0f} ms")
    for label, times in (
        ("the game-over mail without a review (replay data, page, mail)", mails),
        ("review_game, per game", reviews),
        ("the review's words in the page and the mail (rendering)", words),
    ):
        print(
            f"{label}: median {statistics.median(times) * 1000:.0f} ms, "
            f"mean {statistics.mean(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms"
        )
    for label, column in (("the replay page", 0), ("the mail's text and HTML parts", 1)):
        added = [s[column] for s in sizes]
        print(
            f"bytes the review adds to {label}: median {statistics.median(added):,.0f}, "
            f"max {max(added):,}"
        )
    if args.helper:
        # Games not seen yet by this process: no cache of its holds their positions.
        with_helper([play(f"review-helper-{i}", args.players) for i in range(args.games)])


if __name__ == "__main__":
    main()
