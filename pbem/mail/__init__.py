"""Message content, no I/O: everything about what is inside a mail.

- :mod:`pbem.mail.reading` — raw bytes in, :class:`~pbem.mail.reading.IncomingMail` out
  (never raises); :func:`~pbem.mail.reading.clean_subject`.
- :mod:`pbem.mail.quotes` — the text a player wrote, without quoted history.
- :mod:`pbem.mail.autoreply` — bounces, auto-replies, lists and loops; bounce details.
- :mod:`pbem.mail.tokens` — reply keys in reply addresses and Message-IDs.
- :mod:`pbem.mail.compose` — outgoing MIME as SMTP-ready bytes.
- :mod:`pbem.mail.address` and :mod:`pbem.mail.decoding` — the helpers they share.

Nothing here opens a socket, a file or a database; transports move the bytes.
"""
