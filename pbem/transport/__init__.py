"""Moving mail bytes in and out; nothing here knows about games.

- :mod:`pbem.transport.base`: the protocols (``InboundSource``, ``OutboundSink``,
  ``CursorStore``), the message and result types, the errors.
- :mod:`pbem.transport.opening`: ``open_inbound(url)`` / ``open_outbound(url)``, which
  pick a transport by URL scheme (the one module that knows them all).
- :mod:`pbem.transport.woken`: ``LmtpInbound``, LMTP in as the loop sees it: an inbox
  only woken (the listener itself, which speaks LMTP and stores, is
  :mod:`pbem.listen.lmtp`, above this layer).
- :mod:`pbem.transport.urls`: URL forms and their parameters; passwords masked.
- :mod:`pbem.transport.maildir`: Maildir in (one folder) and out (one folder per recipient).
- :mod:`pbem.transport.imap`: IMAP in, with IDLE, a persisted cursor and reconnection
  (:mod:`pbem.transport.imap_link`: opening the link, reading off it, waiting on it).
- :mod:`pbem.transport.smtp`: SMTP out, one connection per batch, results per recipient.
"""

from pbem.transport.base import (
    CursorStore,
    DeliveryResult,
    InboundMessage,
    InboundSource,
    MemoryCursorStore,
    OutboundSink,
    OutgoingMail,
    TransportConfigError,
    TransportError,
)
from pbem.transport.opening import open_inbound, open_outbound

__all__ = [
    "CursorStore",
    "DeliveryResult",
    "InboundMessage",
    "InboundSource",
    "MemoryCursorStore",
    "OutboundSink",
    "OutgoingMail",
    "TransportConfigError",
    "TransportError",
    "open_inbound",
    "open_outbound",
]
