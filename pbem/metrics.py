"""What the daemon counts for the operator's monitoring (``/metrics``, see
`pbem.listen.metrics`).

Plain counters in this process, thread-safe, with no dependency: the daemon and the
outbox count here as they work, and the listener turns them (with the gauges it reads
from the database) into Prometheus text with ``prometheus_client`` — imported only
there, so the command line does not pay for it. Each worker process counts its own
(Prometheus sums them over the scraped targets).

- ``messages``: inbound messages processed, by outcome (applied, rejected, ignored,
  failed);
- ``moves``: the players' commands applied to games;
- ``deliveries``: delivery attempts, by result (sent, deferred, failed, bounced);
- ``transport_errors``: failures of the inbox or the outbox transport;
- ``wait``: seconds from a message's arrival to the end of its processing, as a
  histogram over `WAIT_BUCKETS`;
- ``start_time``: when this process started serving (`Metrics.started`), and the
  package's `version`.

What must survive a restart (failed delivery attempts, reminders, timeouts, aborts) is
counted in the database instead (`pbem.store.counts`).
"""

from __future__ import annotations

import bisect
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

WAIT_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)
"""The upper bounds (seconds) of the message wait histogram's buckets (then +Inf)."""


@dataclass
class Snapshot:
    """The counters at one moment."""

    messages: dict[str, int]
    moves: int
    deliveries: dict[str, int]
    transport_errors: dict[str, int]
    wait_buckets: list[int]  # per bound of WAIT_BUCKETS, then +Inf (not cumulative)
    wait_sum: float
    start_time: float = 0.0  # seconds since the epoch


@dataclass
class Metrics:
    """The process's counters."""

    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _messages: Counter[str] = field(default_factory=Counter)
    _moves: int = 0
    _deliveries: Counter[str] = field(default_factory=Counter)
    _errors: Counter[str] = field(default_factory=Counter)
    _wait: list[int] = field(default_factory=lambda: [0] * (len(WAIT_BUCKETS) + 1))
    _wait_sum: float = 0.0
    _start_time: float = field(default_factory=time.time)

    def started(self, when: float) -> None:
        """This process started serving at ``when`` (seconds since the epoch)."""
        with self._lock:
            self._start_time = when

    def message(self, outcome: str, moves: int, wait: float | None) -> None:
        """One inbound message processed: its outcome, the commands it applied, and how
        long it waited from its arrival (None: not known)."""
        with self._lock:
            self._messages[outcome] += 1
            self._moves += moves
            if wait is not None:
                wait = max(0.0, wait)
                self._wait[bisect.bisect_left(WAIT_BUCKETS, wait)] += 1
                self._wait_sum += wait

    def delivery(self, result: str) -> None:
        """One delivery attempt and its result."""
        with self._lock:
            self._deliveries[result] += 1

    def transport_error(self, transport: str) -> None:
        """One failure of a mail transport ("inbox" or "outbox")."""
        with self._lock:
            self._errors[transport] += 1

    def snapshot(self) -> Snapshot:
        with self._lock:
            return Snapshot(
                dict(self._messages),
                self._moves,
                dict(self._deliveries),
                dict(self._errors),
                list(self._wait),
                self._wait_sum,
                self._start_time,
            )


METRICS = Metrics()
"""The counters of this process."""


def version() -> str:
    """The installed package's version (``unknown`` when it is not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("pbem-cribbage")
    except PackageNotFoundError:
        return "unknown"
