"""The client TLS context shared by the IMAP and SMTP transports."""

from __future__ import annotations

import ssl


def client_tls_context(verify: bool) -> ssl.SSLContext:
    """A client TLS context; ``verify=False`` accepts any certificate (test servers)."""
    context = ssl.create_default_context()
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context
