"""``/metrics`` an operator can alert on, on both databases: the README's alert rule,
read from the README and evaluated minute by minute through an hour of outage on the
test clock (nothing listens on the relay's port, mail is queued before and during it) —
it fires, stays firing to the end, and clears once the mail is delivered; the counters
kept in the database (failed attempts, reminders, timeouts, aborts), read again by a
real ``pbem serve`` started afterwards, with its version and start time; and the
scrape's queries, explained on a long history, read no whole big table."""

from __future__ import annotations

import operator
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import Engine, event

from pbem.listen.metrics import metrics_text
from pbem.metrics import version
from tests.cli_process import start_pbem
from tests.e2e.helpers import ALICE, BOB, CAROL, DAVE, Harness, fresh_env
from tests.e2e.test_cut_clocks import LONGEST_WAIT, Relay
from tests.e2e.test_metrics import Samples, delta, free_port, parse, request, scrape
from tests.pbem.store.bulk import Sizes, fill
from tests.pbem.store.test_query_plans import full_scans_postgresql, full_scans_sqlite, planned

README = Path(__file__).resolve().parents[2] / "README.md"
MINUTE = timedelta(minutes=1)
HOUR = timedelta(hours=1)


@pytest.fixture
def relay() -> Iterator[Relay]:
    relay = Relay()
    try:
        yield relay
    finally:
        relay.down()


# -- the README's rule, and what Prometheus would make of it -----------------------------


@dataclass(frozen=True)
class Rule:
    expr: str
    hold: timedelta  # its ``for``


def readme_rule() -> Rule:
    """The one alert rule in the README's metrics section."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Metrics") : text.index("## Commands")]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    [rule] = yaml.safe_load(block)["groups"][0]["rules"]
    amount, unit = re.fullmatch(r"(\d+)([smh])", rule["for"]).groups()  # type: ignore[union-attr]
    seconds = int(amount) * {"s": 1, "m": 60, "h": 3600}[unit]
    return Rule(" ".join(str(rule["expr"]).split()), timedelta(seconds=seconds))


OPS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
}
TERM = re.compile(
    r"(?P<name>[a-z_]+)(?:\{(?P<labels>[^}]*)\})?\s*(?P<op>>=|<=|==|!=|>|<)\s*(?P<value>[0-9.]+)"
)


def holds(expr: str, samples: Samples) -> bool:
    """Whether PromQL ``expr`` — comparisons of a series with a number, joined by ``or``
    (what the README's rule is made of; anything else fails the test) — selects any
    series of ``samples``."""
    for term in expr.split(" or "):
        found = TERM.fullmatch(term.strip())
        assert found, f"the rule uses more PromQL than this test reads: {term!r}"
        wanted = dict(re.findall(r'(\w+)="([^"]*)"', found["labels"] or ""))
        compare, bound = OPS[found["op"]], float(found["value"])
        for (name, labels), value in samples.items():
            matches = all(dict(labels).get(k) == v for k, v in wanted.items())
            if name == found["name"] and matches and compare(value, bound):
                return True
    return False


class Alert:
    """The rule's state at each evaluation: ``inactive``, ``pending`` (its expression
    holds, not yet for ``for``) or ``firing``."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self.since: datetime | None = None

    def evaluate(self, samples: Samples, now: datetime) -> str:
        if not holds(self.rule.expr, samples):
            self.since = None
            return "inactive"
        self.since = self.since or now
        return "firing" if now - self.since >= self.rule.hold else "pending"


def test_the_rule_reads_what_the_test_reads() -> None:
    rule = readme_rule()
    assert rule.hold == timedelta(minutes=10)
    quiet: Samples = {("pbem_outbox_oldest_queued_seconds", ()): 12.0}
    failing: Samples = {("pbem_transport_failing", (("transport", "outbox"),)): 1.0}
    late: Samples = {("pbem_outbox_oldest_queued_seconds", ()): 901.0}
    assert not holds(rule.expr, quiet)
    assert holds(rule.expr, quiet | failing) and holds(rule.expr, late)
    assert holds('pbem_transport_failing{transport="outbox"} == 1', failing)
    assert not holds('pbem_transport_failing{transport="inbox"} == 1', failing)


# -- an hour of outage -----------------------------------------------------------------------


def test_the_readme_alert_fires_and_holds_through_an_hour_of_outage(
    tmp_path: Path, db_url: str, db_engine: Engine, relay: Relay
) -> None:
    alert = Alert(readme_rule())
    h = Harness.build(tmp_path, db_url, db_engine, outbound_url=relay.url)
    try:
        before = scrape(h.service)
        h.new_game([ALICE, BOB], seed="outage-1")  # two mails, their first try refused
        states, ages, due = [], [], []
        for minute in range(1, 61):
            h.clock.advance(MINUTE)
            if minute == 30:  # more mail queued in the middle of the outage
                h.new_game([CAROL, DAVE], seed="outage-2", deliver=False)
            if minute == 45:  # the daemon restarted while the relay is down
                h.restart()
            h.step()
            samples = scrape(h.service)
            states.append(alert.evaluate(samples, h.clock.now))
            ages.append(samples[("pbem_outbox_oldest_queued_seconds", ())])
            due.append(samples[("pbem_outbox_oldest_due_seconds", ())])
            assert samples[("pbem_outbox_queue_depth", ())] == (2 if minute < 30 else 4)
        assert relay.taken == []  # nothing left all hour

        # Pending for its "for" (the outbox transport failing from the first try), then
        # firing from the eleventh minute to the end of the hour, never clearing.
        assert states[:10] == ["pending"] * 10
        assert states[10:] == ["firing"] * 50
        # The age of the oldest undelivered mail alone would hold from minute 15 on: it
        # only grows while the relay is down (the second game's mail changes nothing).
        assert ages == sorted(ages) and ages[13] < 900 < ages[14] and ages[-1] >= 3600
        # What the old rule read: deferred mail is never due for long.
        assert max(due) < 120

        # Every refused attempt counted, in the database.
        after = scrape(h.service)
        attempts = sum(r.attempts for r in h.outbox())
        assert attempts >= 20
        assert delta(after, before, "pbem_delivery_failures_total", result="deferred") == attempts
        assert delta(after, before, "pbem_deliveries_total", result="deferred") == attempts

        relay.up()  # the relay is back: the mail goes, the alert clears
        h.restart()  # by a daemon that never saw the relay fail (it was restarted)
        h.clock.advance(LONGEST_WAIT)
        h.step()
        assert {r.status for r in h.outbox()} == {"sent"} and len(relay.taken) == 4
        samples = scrape(h.service)
        assert samples[("pbem_outbox_oldest_queued_seconds", ())] == 0
        assert samples[("pbem_transport_failing", (("transport", "outbox"),))] == 0
        assert alert.evaluate(samples, h.clock.now) == "inactive"
    finally:
        h.close()


# -- counted in the database, read again after a restart ----------------------------------


def counters(samples: Samples) -> dict[str, float]:
    return {
        name: samples[(f"pbem_{name}_total", ())]
        for name in ("reminders", "timeouts", "games_aborted")
    }


def test_reminders_timeouts_and_aborts_are_counted_and_survive_a_restart(
    tmp_path: Path, db_url: str, db_engine: Engine
) -> None:
    h = Harness.build(
        tmp_path, db_url, db_engine, reminder_hours=1, timeout_days=1, timeout_action="forfeit"
    )
    try:
        assert counters(scrape(h.service)) == {"reminders": 0, "timeouts": 0, "games_aborted": 0}
        forfeit = h.new_game([ALICE, BOB], seed="counted-1")
        h.clock.advance(2 * HOUR)
        h.step()  # a reminder round (both players to discard: one round)
        h.clock.advance(timedelta(days=1))
        h.step()  # the deadline: the forfeit
        assert h.game_row(forfeit).status == "finished"
        assert counters(scrape(h.service)) == {"reminders": 1, "timeouts": 1, "games_aborted": 0}

        aborted = h.new_game([CAROL, DAVE], seed="counted-2")
        h.service.set_status(aborted, "aborted", "a test")  # the admin's abort
        h.service.settings.fair_deals = True
        cutting = h.service.new_game([CAROL, DAVE], target=61)
        h.step()
        h.clock.advance(2 * HOUR)
        h.step()  # the cut reminder
        h.clock.advance(timedelta(days=1))
        h.step()  # nobody cut: aborted at the cut deadline
        assert h.game_row(cutting).status == "aborted"
        counted = {"reminders": 2, "timeouts": 2, "games_aborted": 2}
        assert counters(scrape(h.service)) == counted
        settings = h.settings
    finally:
        h.close()

    # A real pbem serve started afterwards reads the same counts: they are the database's.
    port = free_port()
    env = fresh_env()
    for key in ("data_dir", "database_url", "inbound_url", "outbound_url", "domain"):
        env[f"PBEM_{key.upper()}"] = str(getattr(settings, key))
    env.update(PBEM_METRICS="true", PBEM_HTTP_LISTEN=f"127.0.0.1:{port}", PBEM_POLL_SECONDS="0.2")
    started = time.time()
    proc = start_pbem("serve", env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.communicate()
            try:
                status, _kind, text = request(port)
                break
            except OSError:
                assert time.monotonic() < deadline, "pbem serve never answered"
                time.sleep(0.2)
        samples = parse(text)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    assert status == 200
    assert counters(samples) == counted
    assert samples[("pbem_build_info", (("version", version()),))] == 1
    assert version() != "unknown"
    assert started - 1 <= samples[("pbem_start_time_seconds", ())] <= time.time()
    assert samples[("pbem_messages_total", (("outcome", "applied"),))] == 0  # its own, from 0


# -- a scrape reads the live rows only ----------------------------------------------------


def test_a_scrape_reads_no_whole_big_table(
    tmp_path: Path, db_url: str, db_engine: Engine, relay: Relay
) -> None:
    h = Harness.build(tmp_path, db_url, db_engine, outbound_url=relay.url)
    try:
        h.new_game([ALICE, BOB], seed="plans")  # mail waiting, the outbox failing
        seen: dict[str, Any] = {}

        def listen(conn: Any, cursor: Any, statement: str, params: Any, *_: Any) -> None:
            seen.setdefault(statement, params)

        event.listen(db_engine, "before_cursor_execute", listen)
        try:
            metrics_text(h.service)
        finally:
            event.remove(db_engine, "before_cursor_execute", listen)
    finally:
        h.close()
    with db_engine.begin() as connection:
        fill(connection, Sizes(games=10_000, players=5_000, actions_per_game=5, mails=10_000))
    if db_engine.dialect.name == "postgresql":  # its planner weighs the rows it knows of
        with db_engine.connect() as connection:
            connection.exec_driver_sql("ANALYZE")
            connection.commit()
    explain = full_scans_postgresql if db_engine.dialect.name == "postgresql" else full_scans_sqlite
    statements = [(s, p) for s, p in seen.items() if planned(s)]
    assert len(statements) >= 5  # the queues, the transports, the counts
    for statement, params in statements:
        assert explain(db_engine, statement, params) == [], statement
