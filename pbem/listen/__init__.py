"""The listen room: the servers ``pbem serve`` runs beside its loop, each in threads of
its own, answering what comes in from outside.

- :mod:`pbem.listen.lmtp`: the LMTP listener (RFC 2033), the one module of the LMTP
  protocol: the mail server delivers to it, it stores each message and wakes the loop;
- :mod:`pbem.listen.web`: the HTTP listener (its connections, limits and threads), with
  its handlers :mod:`pbem.listen.unsubscribe` (the one-click unsubscribe of RFC 8058)
  and :mod:`pbem.listen.metrics` (``/metrics`` for Prometheus), and
  :mod:`pbem.listen.wire` (a request read and an answer written, by h11).

What it may import: the service (`pbem.service`) and everything below it, and
:mod:`pbem.run.wakeup` to wake the loop (the listeners sit above the run room: nothing
in `pbem.run` imports them). Never `pbem.demo` or `pbem.cli`; nothing below imports
it. This file imports nothing: ``pbem serve`` loads each listener only when it is
configured.
"""
