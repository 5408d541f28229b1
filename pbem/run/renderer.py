"""The mail-rendering helper process: ``python -m pbem.run.renderer FD``.

A `pbem.render.mailmaker.MailMaker` with ``render_processes`` starts helpers of this
program, each with its end of a socket pair as FD. A helper says ``"ready"`` once its
imports are done, then makes each job it is sent, ``(seq, TurnMailJob)``, with the same
pure function the service would (`pbem.render.turnmail.make_turn_mail`), and sends back
``(seq, raw)`` (``None`` for a job that failed: the service makes it again itself and
meets the error there). It ends when the service's end of the pipe closes.
"""

from __future__ import annotations

import gc
import signal
import sys
from multiprocessing.connection import Connection

from pbem.render.turnmail import make_turn_mail


def _serve(conn: Connection) -> None:
    """A helper's loop: make each job sent and send it back (``None`` for a job that
    failed). Ends when the service's end of the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is for the daemon
    gc.collect()
    gc.freeze()  # what the imports made lives as long as the helper: no need to rescan it
    try:
        conn.send("ready")  # the imports are done: it makes mail without delay from now on
    except OSError:
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        seq, job = message
        try:
            raw: bytes | None = make_turn_mail(job)
        except Exception:  # the service makes it again itself and meets the error there
            raw = None
        try:
            conn.send((seq, raw))
        except OSError:
            return


def main(argv: list[str] | None = None) -> None:
    """A helper process: ``python -m pbem.run.renderer FD`` (FD: its end of the socket
    pair)."""
    args = sys.argv[1:] if argv is None else argv
    _serve(Connection(int(args[0])))


if __name__ == "__main__":
    main()
