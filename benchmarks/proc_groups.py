"""CPU time by process group, read from ``/proc``: the service (its ``pbem serve``
processes and their children, the rendering helper), Postfix, Dovecot, the database
server's backends of one database, and the benchmark itself (the simulated players).

A process's CPU is its user and system time plus that of its children it has reaped
(``cutime``/``cstime``), so the short-lived processes Postfix's and Dovecot's masters
start and reap are counted with their master. A group's CPU over a window is the
difference of two :func:`snapshot` calls (a process started in the window counts from
zero; one that ended in it is lost unless its parent in the group reaped it).
Postfix, Dovecot and PostgreSQL are shared with anything else on the machine: their
figures include others' work, the database's only its backends of the named database.
"""

from __future__ import annotations

import os
from pathlib import Path

GROUPS = ("service", "postfix", "dovecot", "database", "players")
_TICK = os.sysconf("SC_CLK_TCK")


def _processes() -> dict[int, tuple[int, float, str, str]]:
    """pid → (parent pid, CPU seconds incl. reaped children, executable, command line)."""
    found: dict[int, tuple[int, float, str, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            try:
                exe = os.readlink(entry / "exe")
            except OSError:
                exe = ""
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))
        found[int(entry.name)] = (int(fields[1]), ticks / _TICK, exe, cmdline)
    return found


def snapshot(service_pids: list[int], database: str | None) -> dict[int, tuple[str, float]]:
    """pid → (group, CPU seconds so far) of every process in a group."""
    processes = _processes()
    service = set(service_pids)
    changed = True
    while changed:  # the service's descendants (its helper)
        changed = False
        for pid, (parent, *_rest) in processes.items():
            if parent in service and pid not in service:
                service.add(pid)
                changed = True
    me = os.getpid()
    groups: dict[int, tuple[str, float]] = {}
    for pid, (_parent, cpu, exe, cmdline) in processes.items():
        if pid in service:
            group = "service"
        elif pid == me:
            group = "players"
        elif "postfix" in exe:
            group = "postfix"
        elif "dovecot" in exe:
            group = "dovecot"
        elif "postgres" in exe and database and f" {database} " in f" {cmdline} ":
            group = "database"
        else:
            continue
        groups[pid] = (group, cpu)
    return groups


def spent(
    before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]
) -> dict[str, float]:
    """CPU seconds by group between two snapshots."""
    totals = dict.fromkeys(GROUPS, 0.0)
    for pid, (group, cpu) in after.items():
        start = before.get(pid)
        totals[group] += cpu - (start[1] if start is not None and start[0] == group else 0.0)
    return totals
