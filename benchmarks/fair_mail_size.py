"""The size of the turn mails of fair games (dealt by the verifiable-deal protocol),
whose every mail carries the deal lines: the commitment and each seat's cut hash.

    PYTHONPATH=. python benchmarks/fair_mail_size.py --games 1

Plays ``--games`` whole fair games to 121 for 2, 3 and 4 players (every human cuts,
then the test harness's random moves, by mail) on a temporary SQLite file, and reports
the turn mails' median, 95th percentile and largest size as queued, and the largest
game-over mail. Uses the end-to-end test harness (``tests.e2e.helpers``), so it runs
from a checkout.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from pbem.store import make_engine, migrate
from tests.e2e.helpers import ALICE, BOB, CAROL, Harness

DAVE = ("dave@example.com", "Dave")


def sizes(players: int, games: int) -> tuple[list[int], list[int]]:
    """The turn mails' and game-over mails' sizes of ``games`` fair games."""
    turns: list[int] = []
    overs: list[int] = []
    for _ in range(games):
        folder = Path(tempfile.mkdtemp(prefix="fair-mail-"))
        url = f"sqlite:///{folder / 'pbem.db'}"
        engine = make_engine(url)
        migrate(engine)
        harness = Harness.build(folder, url, engine, fair_deals=True)
        try:
            people = [ALICE, BOB, CAROL, DAVE][:players]
            game_id = harness.service.new_game(people, target=121)
            harness.step()
            for address, _ in people:
                harness.answer(address, "cut")
            harness.play_until(game_id, lambda game: game.is_over)
            for row in harness.outbox():
                if row.kind == "gameover":
                    overs.append(len(row.raw))
                elif row.kind != "cut":
                    turns.append(len(row.raw))
        finally:
            harness.close()
            engine.dispose()
    return turns, overs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1, help="games per table")
    args = parser.parse_args()
    print("| table | turn mails | median | p95 | largest | game-over mail, largest |")
    print("| --- | --- | --- | --- | --- | --- |")
    for players in (2, 3, 4):
        turns, overs = sizes(players, args.games)
        ordered = sorted(turns)
        p95 = ordered[int(len(ordered) * 0.95)]
        print(
            f"| {players} players | {len(turns)} | {statistics.median(turns):,.0f} B | "
            f"{p95:,} B | {max(turns):,} B | {max(overs):,} B |"
        )


if __name__ == "__main__":
    main()
