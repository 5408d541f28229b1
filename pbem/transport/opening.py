"""opening: a transport from its URL — the inbound source and the outbound sink.

The one place that knows every transport: `open_inbound` (Maildir, IMAP, or the inbox the
LMTP listener fills) and `open_outbound` (Maildir or SMTP) pick one by the URL's scheme.
The transports themselves know only `pbem.transport.base` and `pbem.transport.urls`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pbem.transport.base import CursorStore, MemoryCursorStore
from pbem.transport.woken import LmtpInbound

if TYPE_CHECKING:
    from pbem.transport.imap import ImapInbound
    from pbem.transport.maildir import MaildirInbound, MaildirOutbound
    from pbem.transport.smtp import SmtpOutbound


def open_inbound(
    url: str, cursor_store: CursorStore | None = None
) -> MaildirInbound | ImapInbound | LmtpInbound:
    """An inbound source for ``url``.

    Forms: ``maildir:/abs/path``, ``maildir:relative/path`` (created if missing),
    ``imap://user:pass@host:port/FOLDER?tls=none|starttls|implicit&processed=Folder&
    poll=60&max_size=1048576`` (``imaps://`` means ``tls=implicit``) and
    ``lmtp://host:port`` or ``lmtp:/abs/socket`` (the source the LMTP listener of
    :mod:`pbem.listen.lmtp` wakes; it listens on nothing itself). ``cursor_store`` keeps an
    IMAP folder's read position; without one it lives in memory only. Opening does not
    connect: the first fetch or wait does.

    Raises:
        TransportConfigError: the URL is malformed or names an unknown scheme.
    """
    from pbem.transport import urls

    config = urls.parse_inbound(url)
    if isinstance(config, urls.MaildirConfig):
        from pbem.transport.maildir import MaildirInbound

        return MaildirInbound(config.path, poll=config.poll, max_size=config.max_size)
    if isinstance(config, urls.LmtpConfig):
        return LmtpInbound(config)
    from pbem.transport.imap import ImapInbound

    return ImapInbound(config, cursor_store or MemoryCursorStore())


def open_outbound(url: str) -> MaildirOutbound | SmtpOutbound:
    """An outbound sink for ``url``.

    Forms: ``maildir:/root/path`` (one Maildir per recipient under it, e.g.
    ``ROOT/alice@example.com/new``) and ``smtp://user:pass@host:port?tls=none|starttls|
    implicit`` (``smtps://`` means ``tls=implicit``; no user means no AUTH).

    Raises:
        TransportConfigError: the URL is malformed or names an unknown scheme.
    """
    from pbem.transport import urls

    config = urls.parse_outbound(url)
    if isinstance(config, urls.MaildirConfig):
        from pbem.transport.maildir import MaildirOutbound

        return MaildirOutbound(config.path)
    from pbem.transport.smtp import SmtpOutbound

    return SmtpOutbound(config)
