"""Waiting until descriptors are readable, whatever their numbers.

``select.select`` refuses descriptors numbered 1024 or more (FD_SETSIZE), which a
long-running daemon with many connections, or a process with many files open, can
reach; ``poll`` has no such limit.
"""

from __future__ import annotations

import select
from collections.abc import Sequence
from typing import Any


def _fileno(item: Any) -> int:
    return item if isinstance(item, int) else int(item.fileno())


def readable(items: Sequence[Any], timeout: float) -> list[Any]:
    """The readable ones of ``items`` (descriptors, or objects with ``fileno()``, such as
    sockets) within ``timeout`` seconds, in the order given; [] when none is."""
    poller = select.poll()
    by_fd: dict[int, list[Any]] = {}
    for item in items:
        fd = _fileno(item)
        if fd not in by_fd:
            poller.register(fd, select.POLLIN | select.POLLPRI)
        by_fd.setdefault(fd, []).append(item)
    events = poller.poll(max(0.0, timeout) * 1000.0)
    ready = {fd for fd, _ in events}
    return [item for item in items if _fileno(item) in ready]
