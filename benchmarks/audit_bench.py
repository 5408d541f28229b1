"""What the computer audit (`engine.audit`) costs: every computer move of a whole game
re-derived from its seat's view, as ``pbem verify`` and the replay page run it.

    python benchmarks/audit_bench.py [--target 121] [--levels easy medium hard]

For each level and table size (2, 3, 4 players) it plays one game with every seat the
computer at that level (moved as the service moves it) and writes its archive; then, in
a fresh process for each archive (cold caches, as ``pbem verify`` starts), it times the
audit. Prints one line per game: moves, decisions re-derived, the time the computer
took to play the game, and the audit's wall and CPU time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import new_game, to_archive
from engine.audit import audit_archive, computer_entries
from engine.computer import computer_move, computer_view


def play(players: int, level: str, target: int, seed: str) -> tuple[dict[str, object], float]:
    game = new_game(players, seed=seed, target=target)
    start = time.process_time()
    while not game.is_over:
        action = game.forced_action()
        if action is None:
            seat = game.to_act()[0]
            action = computer_move(computer_view(game, seat), level)
        game.apply(action)
    spent = time.process_time() - start
    robots = computer_entries({seat: level for seat in range(players)}, "bench")
    return to_archive(game, computer=robots), spent


def audit_file(path: str) -> None:
    """The child: audit one archive and print decisions, wall and CPU seconds."""
    data = json.loads(Path(path).read_text())
    wall, cpu = time.perf_counter(), time.process_time()
    audit = audit_archive(data)
    assert audit.ok, audit.message
    print(json.dumps([audit.decisions, time.perf_counter() - wall, time.process_time() - cpu]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=int, default=121, choices=(61, 121))
    parser.add_argument("--levels", nargs="+", default=["easy", "medium", "hard"])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        audit_file(args.child)
        return
    print("level   players  moves  decisions  play CPU s  audit wall s  audit CPU s")
    with tempfile.TemporaryDirectory() as folder:
        for level in args.levels:
            for players in (2, 3, 4):
                archive, spent = play(players, level, args.target, f"bench-{players}-{level}")
                path = Path(folder) / f"{level}-{players}.json"
                path.write_text(json.dumps(archive))
                child = subprocess.run(
                    [sys.executable, __file__, "--child", str(path)],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                decisions, wall, cpu = json.loads(child.stdout)
                moves = len(archive["actions"])  # type: ignore[arg-type]
                print(
                    f"{level:7} {players:7}  {moves:5}  {decisions:9}  {spent:10.2f}"
                    f"  {wall:12.2f}  {cpu:11.2f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
