"""The demo room: ``pbem demo`` and the built-in players it plays with.

- :mod:`pbem.demo.game`: a complete game played by email on SQLite and Maildir, the
  daemon in a thread (`run_demo`);
- :mod:`pbem.demo.bots`: the built-in players, who read their mail and answer it as a
  person's mail client would (the tests and benchmarks play with them too).

What it may import: the run room (`pbem.run`, to wire a daemon) and everything below it.
Never `pbem.listen` or `pbem.cli`; nothing in `pbem` but the command line imports it.
"""
