"""The daemon: ``pbem serve``, ``pbem status`` (its health) and ``pbem demo``."""

from __future__ import annotations

import gc
import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pbem.cli.base import app_group, database, examples, fail, out, service, settings, state
from pbem.cli.version import package_version
from pbem.logsetup import LogFormat, configure_logging

if TYPE_CHECKING:
    from pbem.listen.lmtp import LmtpListener
    from pbem.run.daemon import Daemon

commands = app_group()  # no name: its commands join the group it is added to (pbem.cli)


@commands.command(
    epilog=examples("pbem status", "pbem status --json", "pbem status || alert-admin")
)
def status(
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object instead of text.")
    ] = False,
) -> None:
    """The service's health on one screen: daemon, inbox, outbox, bounces, stalled games,
    the transports' last errors.

    Exit code 0 when healthy; 1 when something needs attention: no daemon running, a
    received message waiting over 5 minutes or failed in the last day, outgoing mail
    overdue by over 15 minutes or failed for good, or a transport whose last error came
    after its last success (each named on a line starting with "!").
    """
    from pbem.run.status import describe, gather

    svc = service()
    health = gather(svc.settings, svc.db, svc.clock())
    if as_json:
        sys.stdout.write(json.dumps(health.to_json(), ensure_ascii=False) + "\n")
    else:
        for line in describe(health):
            out.print(line, highlight=False)
    if not health.healthy:
        raise typer.Exit(1)


# -- the daemon and the demo ----------------------------------------------------------------

serve_log = logging.getLogger("pbem.serve")


class LogFormatChoice(StrEnum):
    text = "text"
    json = "json"


@commands.command(
    epilog=examples("pbem serve", "pbem serve --once", "pbem -v serve --log-format json")
)
def serve(
    once: Annotated[bool, typer.Option("--once", help="Drain everything due, then exit.")] = False,
    log_format: Annotated[
        LogFormatChoice,
        typer.Option(
            "--log-format",
            help="text, or json: one JSON object per line (ts, level, logger, msg and the "
            "line's fields) for log shippers.",
        ),
    ] = LogFormatChoice.text,
) -> None:
    """Run the daemon: watch the inbox, apply moves, send mail, run the clocks.

    With inbound_url = "lmtp://HOST:PORT" (or "lmtp:/abs/socket") it listens for the
    mail server's LMTP deliveries instead of reading a mailbox (not with --once).

    It logs to stderr what it serves, one line per message received (applied, rejected,
    ignored or failed, and why) and one per delivery (sent, deferred, failed or bounced),
    at the log_level setting (INFO unless set; -v: DEBUG). SIGTERM or Ctrl-C stops it
    after the step under way, with exit code 0.
    """
    # No cyclic garbage collection while the daemon starts: its imports make some
    # 100,000 objects that live as long as it does (frozen below, once it is wired).
    with _collector_paused():
        from pbem.config import mask_url
        from pbem.run.lock import DaemonError
        from pbem.run.runtime import build_daemon, freeze_startup_objects
        from pbem.run.wakeup import SERVE_NAME

        cfg = settings()
        level = logging.DEBUG if state.verbose else cfg.log_level
        fmt: LogFormat = log_format.value
        configure_logging(level, fmt)
        engine = database(cfg, name=SERVE_NAME)  # other workers know its own mail by it
        try:
            daemon = build_daemon(cfg, engine)
        except (ValueError, DaemonError) as exc:
            fail(str(exc))
        try:
            daemon.claim()
        except DaemonError as exc:
            daemon.close()
            fail(str(exc))
        listener = None
        if (cfg.unsubscribe_url or cfg.metrics) and not once:
            from pbem.listen.web import start_listener

            try:
                listener = start_listener(
                    daemon.service,
                    cfg.http_listen,
                    cfg.unsubscribe_url,
                    metrics=cfg.metrics,
                    metrics_token=cfg.metrics_token,
                )
            except OSError as exc:
                daemon.close()
                what = "the unsubscribe" if cfg.unsubscribe_url else "the metrics"
                fail(f"cannot listen on {cfg.http_listen} for {what}: {exc.strerror or exc}")
        lmtp = None
        if not once:
            try:
                lmtp = _start_lmtp(daemon)
            except OSError as exc:
                if listener is not None:
                    listener.stop()
                daemon.close()
                fail(f"cannot listen on {mask_url(cfg.inbound)} for LMTP: {exc.strerror or exc}")
        freeze_startup_objects(collect=False)
    restore = _stop_on_signals(daemon)
    serve_log.info(
        "pbem %s serving %s for %s: database %s, inbox %s, outbox %s",
        package_version(),
        cfg.address,
        cfg.domain,
        mask_url(cfg.db_url),
        mask_url(cfg.inbound),
        mask_url(cfg.outbound),
        extra={
            "version": package_version(),
            "address": cfg.address,
            "domain": cfg.domain,
            "database": mask_url(cfg.db_url),
            "inbox": mask_url(cfg.inbound),
            "outbox": mask_url(cfg.outbound),
            "once": once,
        },
    )
    interrupted = False
    try:
        daemon.run(once=once)
    except DaemonError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        restore()
        if lmtp is not None:
            lmtp.stop()
        if listener is not None:
            listener.stop()
    serve_log.info("stopped" if interrupted or daemon.stop_event.is_set() else "done")


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off inside, and on again after (however it ends)."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _start_lmtp(daemon: Daemon) -> LmtpListener | None:
    """The LMTP listener, when the inbox is fed over LMTP (``inbound_url = "lmtp:…"``).

    Started once the daemon holds the database: on SQLite a second ``pbem serve`` is
    refused before it could take a message. Raises OSError when it cannot bind.
    """
    from pbem.transport.woken import LmtpInbound

    if not isinstance(daemon.inbox, LmtpInbound):
        return None
    from pbem.listen.lmtp import start_listener

    lmtp = start_listener(daemon.service, daemon.inbox)
    serve_log.info("listening for LMTP on %s", lmtp.address, extra={"lmtp": lmtp.address})
    return lmtp


def _stop_on_signals(daemon: Daemon) -> Callable[[], None]:
    """Let SIGTERM and SIGINT stop ``daemon`` cleanly; returns a function that puts the
    previous handlers back.

    The first signal asks the loop to stop: the step under way finishes (a message being
    processed is committed or rolled back, never half done) and a wait for mail ends at
    once. A second signal stops at once, even in the middle of a step.
    """
    import signal
    import threading

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return restore  # signals reach the main thread only

    def handler(signum: int, frame: Any) -> None:
        if daemon.stop_event.is_set():
            raise KeyboardInterrupt
        name = signal.Signals(signum).name
        serve_log.info("%s: stopping after the current step", name, extra={"signal": name})
        daemon.stop()

    for sig in (signal.SIGTERM, signal.SIGINT):
        previous[sig] = signal.signal(sig, handler)
    return restore


@commands.command(
    epilog=examples("pbem demo", "pbem demo --to 61 --quiet", "pbem demo --lobby --to 61")
)
def demo(
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir", help="Where to keep the demo's files (default: a fresh temporary folder)."
        ),
    ] = None,
    target: Annotated[int, typer.Option("--to", help="61 or 121.")] = 121,
    seed: Annotated[
        str | None,
        typer.Option(
            "--seed",
            help="A chosen deal (not verifiable); default: fair deals, each player cuts.",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the summary.")] = False,
    lobby: Annotated[
        bool,
        typer.Option(
            "--lobby",
            help="Start the game by mail: Alice challenges Bob, Bob accepts (the deal is "
            "then the service's own).",
        ),
    ] = False,
) -> None:
    """Play a complete game by email on SQLite and Maildir between two built-in players;
    with --lobby, the game is first started by mail through the lobby."""
    from pbem.config import ConfigError
    from pbem.demo.game import run_demo
    from pbem.service import ServiceError
    from pbem.store.errors import StoreError

    try:
        run_demo(directory, target=target, seed=seed, console=out, quiet=quiet, lobby=lobby)
    except (ServiceError, ConfigError, StoreError) as exc:
        fail(str(exc))
