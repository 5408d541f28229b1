"""The run room: what keeps a running service going, in ``pbem serve`` and ``pbem demo``.

- :mod:`pbem.run.daemon`: the loop (receive → process → send, and the timers);
- :mod:`pbem.run.lock`: the lock file that lets one daemon run per SQLite database;
- :mod:`pbem.run.runtime`: the wiring, settings → database, transports, service, sender,
  daemon (`build_daemon`);
- :mod:`pbem.run.sender`: the outbox sender, which drains queued mail through a transport;
- :mod:`pbem.run.wakeup`: waking the loop at once (a FIFO on SQLite, ``NOTIFY`` on
  PostgreSQL) when the command line or a listener queued work for it;
- :mod:`pbem.run.renderer`: the mail-rendering helper process (``python -m
  pbem.run.renderer FD``), whose service side is `pbem.render.mailmaker`;
- :mod:`pbem.run.status`: ``pbem status``, whether a daemon runs and what waits.

What it may import: the service (`pbem.service`) and everything below it (`pbem.store`,
`pbem.render`, `pbem.mail`, `pbem.transport`, the basic modules at the root of `pbem`,
`engine`). Never `pbem.listen`, `pbem.demo` or `pbem.cli`, which sit above it; nothing
below imports it. This file imports nothing: a helper process and the command line's
lazy imports load only the module they name.
"""
