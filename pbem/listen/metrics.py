"""``/metrics`` on the HTTP listener (`pbem.listen.web`), when the ``metrics`` setting is
on: the Prometheus text of this process's counters (`pbem.metrics`), of the counters
kept in the database across restarts (`pbem.store.counts`) and of the queues read from
the database at each scrape (`pbem.store.gauges`).

Who is answered: the ``metrics_token`` as a bearer token, or (without one) a loopback
client whose request no proxy forwarded; anyone else 403. A ``POST`` is 405. The
Prometheus client and the queries are imported at the first scrape, not before.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
from collections.abc import Iterator
from http import HTTPStatus

from pbem.listen.wire import NOT_ALLOWED, SERVER_ERROR, Answer, Blocking, Request
from pbem.service import Service

log = logging.getLogger("pbem.web")  # the listener's name, which operators filter on

METRICS_PATH = "/metrics"
METRICS_TYPE = "text/plain; version=0.0.4"
FORBIDDEN = Answer(HTTPStatus.FORBIDDEN, "Forbidden\n")
_FORWARD_HEADERS = {"forwarded", "x-forwarded-for", "x-real-ip"}


async def metrics_answer(
    request: Request, service: Service, token: str, blocking: Blocking
) -> Answer:
    """The answer to a request for `METRICS_PATH` (``metrics_text`` made in the
    database threads); a failure is logged and answered 500."""
    if request.method == "POST":
        return NOT_ALLOWED
    if not metrics_allowed(request, token):
        return FORBIDDEN
    try:
        text = await blocking(metrics_text, service)
    except Exception:
        log.exception("metrics request failed")
        return SERVER_ERROR
    return Answer(HTTPStatus.OK, text, METRICS_TYPE)


def metrics_allowed(request: Request, token: str) -> bool:
    """Whether ``/metrics`` is answered: to the ``metrics_token`` as a bearer token, or
    (without one) to a loopback client whose request no proxy forwarded (a reverse proxy
    on this host would make any client look local)."""
    given = request.header("authorization") or ""
    if token and given.startswith("Bearer "):
        return hmac.compare_digest(given[len("Bearer ") :].strip().encode(), token.encode())
    forwarded = any(name in _FORWARD_HEADERS for name, _ in request.headers)
    try:
        local = ipaddress.ip_address(request.peer.removeprefix("::ffff:")).is_loopback
    except ValueError:
        local = False
    return local and not forwarded and not given


def metrics_text(service: Service) -> str:
    """The Prometheus text of ``/metrics``: this process's counters (`pbem.metrics`) and
    the queues read from the database now."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.core import (
        CounterMetricFamily,
        GaugeMetricFamily,
        HistogramMetricFamily,
        Metric,
    )
    from prometheus_client.registry import Collector
    from sqlmodel import Session

    from pbem.metrics import METRICS, WAIT_BUCKETS, version
    from pbem.store import counts
    from pbem.store.gauges import queues

    snap = METRICS.snapshot()
    with Session(service.db) as session:
        queue = queues(session, service.clock())
        counted = counts.event_counts(session)

    def labelled(
        name: str, doc: str, label: str, values: dict[str, int], known: tuple[str, ...]
    ) -> CounterMetricFamily:
        family = CounterMetricFamily(name, doc, labels=[label])
        for key in sorted({*known, *values}):
            family.add_metric([key], values.get(key, 0))
        return family

    class Families(Collector):
        def collect(self) -> Iterator[Metric]:
            yield labelled(
                "pbem_messages",
                "Inbound messages processed, by outcome.",
                "outcome",
                snap.messages,
                ("applied", "rejected", "ignored", "failed"),
            )
            yield CounterMetricFamily(
                "pbem_moves", "The players' commands applied to games.", value=snap.moves
            )
            yield labelled(
                "pbem_deliveries",
                "Delivery attempts of outgoing mail, by result.",
                "result",
                snap.deliveries,
                ("sent", "deferred", "failed", "bounced"),
            )
            yield labelled(
                "pbem_transport_errors",
                "Failures of a mail transport (the inbox or the outbox).",
                "transport",
                snap.transport_errors,
                ("inbox", "outbox"),
            )
            cumulative: list[tuple[str, float]] = []
            total = 0
            bounds = (*map(str, WAIT_BUCKETS), "+Inf")
            for bound, count in zip(bounds, snap.wait_buckets, strict=True):
                total += count
                cumulative.append((bound, total))
            yield HistogramMetricFamily(
                "pbem_message_wait_seconds",
                "Seconds from a message's arrival to the end of its processing.",
                buckets=cumulative,
                sum_value=snap.wait_sum,
            )
            yield GaugeMetricFamily(
                "pbem_outbox_queue_depth",
                "Outgoing mails waiting to go (pending, deferred or being sent).",
                value=queue.outbox_depth,
            )
            yield GaugeMetricFamily(
                "pbem_outbox_oldest_due_seconds",
                "How long the oldest outgoing mail that is due has been due (0: none is).",
                value=queue.oldest_due_seconds,
            )
            yield GaugeMetricFamily(
                "pbem_outbox_oldest_queued_seconds",
                "Seconds since the oldest undelivered outgoing mail was queued (0: none waits).",
                value=queue.oldest_queued_seconds,
            )
            yield GaugeMetricFamily(
                "pbem_inbound_pending",
                "Inbound messages stored and not yet processed.",
                value=queue.inbound_pending,
            )
            failing = GaugeMetricFamily(
                "pbem_transport_failing",
                "1 while a mail transport's last error is later than its last success.",
                labels=["transport"],
            )
            for name in sorted({"inbox", "outbox", *queue.failing}):
                failing.add_metric([name], int(queue.failing.get(name, False)))
            yield failing
            # Counted in the database: the installation's, across restarts and workers.
            yield labelled(
                "pbem_delivery_failures",
                "Failed delivery attempts of outgoing mail, by result (the installation's).",
                "result",
                {
                    "deferred": counted[counts.DEFERRED],
                    "failed": counted[counts.FAILED],
                    "bounced": counted[counts.BOUNCED],
                },
                (),
            )
            for name, counter, doc in (
                ("pbem_reminders", counts.REMINDERS, "Reminder rounds sent, one per game."),
                ("pbem_timeouts", counts.TIMEOUTS, "Deadlines passed: the timeout rule applied."),
                ("pbem_games_aborted", counts.ABORTS, "Games aborted, by anyone or anything."),
            ):
                yield CounterMetricFamily(
                    name, doc + " (the installation's)", value=counted[counter]
                )
            info = GaugeMetricFamily(
                "pbem_build_info", "The running pbem's version (always 1).", labels=["version"]
            )
            info.add_metric([version()], 1)
            yield info
            yield GaugeMetricFamily(
                "pbem_start_time_seconds",
                "When this process started serving, in seconds since the epoch.",
                value=snap.start_time,
            )

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Families())
    return generate_latest(registry).decode("utf-8")
