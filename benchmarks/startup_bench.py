"""How long the command line takes to start: the median wall time of several runs, each
a fresh process, as a user (or a service manager restarting the daemon) sees it.

    python benchmarks/startup_bench.py              # 7 runs of each
    python benchmarks/startup_bench.py --runs 15 --tree /work/main   # another checkout

Figures, each ``python -m pbem.cli …`` run by this interpreter (not a version manager's
shim, which adds its own start-up) with ``PYTHONPATH`` set to the tree measured; the
CPU time (user + system) beside each is steadier than the wall time on a busy machine:

``python -c pass``
    The interpreter alone: the floor under every other figure.
``import pbem.cli``
    Importing the command line's package.
``pbem --version``, ``pbem --help``
    The whole process, output to a pipe.
``pbem ingest MISSING``
    A command's own work starting: the app built, the command line parsed and the
    command's first line run (it fails at once: the file does not exist).
``pbem config``
    A small command from start to end: the settings loaded and printed.
``pbem serve``
    A daemon restarted on an initialised SQLite database (Maildir in and out): from the
    process start to its first log line ("pbem … serving …"), after which it is stopped
    with SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _env(tree: Path, data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env["PYTHONPATH"] = str(tree)
    env["PBEM_DATA_DIR"] = str(data)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


Timing = tuple[float, float]
"""Wall seconds and CPU seconds (user + system) of one run."""

_TICK = os.sysconf("SC_CLK_TCK")


def _timed_run(argv: list[str], env: dict[str, str], cwd: Path) -> Timing:
    """Seconds from starting ``argv`` until it exits (its output read and dropped)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _cpu_so_far(pid: int) -> float:
    """The CPU seconds (user + system) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _timed_serve(argv: list[str], env: dict[str, str], cwd: Path) -> Timing:
    """Seconds from starting the daemon until its first log line; then it is stopped."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        elapsed = time.perf_counter() - start
        cpu = _cpu_so_far(proc.pid)
        if "serving" not in line:
            raise SystemExit(f"pbem serve did not start: {line}{proc.stderr.read()}")
        return elapsed, cpu
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def median_of(runs: int, once: Callable[[], Timing]) -> tuple[float, float, float, float]:
    """The median, lowest and highest wall time of ``runs`` runs (one warm-up run
    first), and their median CPU time."""
    once()
    timings = [once() for _ in range(runs)]
    walls = [wall for wall, _ in timings]
    cpus = [cpu for _, cpu in timings]
    return statistics.median(walls), min(walls), max(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="runs of each (default 7)")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("--only", nargs="*", help="only the figures naming one of these words")
    args = parser.parse_args()
    tree = args.tree.resolve()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="pbem-startup-") as tmp:
        work = Path(tmp)
        data = work / "data"
        env = _env(tree, data)
        pbem = [py, "-m", "pbem.cli"]
        subprocess.run([*pbem, "init"], env=env, cwd=work, check=True, capture_output=True)
        missing = str(work / "missing.eml")
        figures: list[tuple[str, Callable[[], Timing]]] = [
            ("python -c pass", lambda: _timed_run([py, "-c", "pass"], env, work)),
            ("import pbem.cli", lambda: _timed_run([py, "-c", "import pbem.cli"], env, work)),
            ("pbem --version", lambda: _timed_run([*pbem, "--version"], env, work)),
            ("pbem --help", lambda: _timed_run([*pbem, "--help"], env, work)),
            ("pbem ingest MISSING", lambda: _timed_run([*pbem, "ingest", missing], env, work)),
            ("pbem config", lambda: _timed_run([*pbem, "config"], env, work)),
            ("pbem serve", lambda: _timed_serve([*pbem, "serve"], env, work)),
        ]
        print(f"tree {tree}; python {sys.version.split()[0]}; {os.cpu_count()} cores; "
              f"load {os.getloadavg()[0]:.2f}; {args.runs} runs each")  # fmt: skip
        print(f"  {'':22} {'wall median':>11}  {'(min-max)':13} {'CPU median':>10}")
        for name, once in figures:
            if args.only and not any(word in name for word in args.only):
                continue
            median, low, high, cpu = median_of(args.runs, once)
            spread = f"({low * 1000:.0f}-{high * 1000:.0f})"
            print(f"  {name:22} {median * 1000:8.0f} ms  {spread:13} {cpu * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
