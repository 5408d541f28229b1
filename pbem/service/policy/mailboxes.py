"""mailboxes: how the policy names a mailbox, and which are the service's own.

`mailbox_of` folds an address as consent is kept (lowercased, no ``+tag``); a forgotten
player's mailbox is kept only as a keyed hash (`forgotten_key`). `is_service_mailbox`
(its own address and its computer seats: never a person) and `takes_mail_for` (which
envelope recipients are the service's to take at all) answer for the listeners and
for intake.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re

from sqlmodel import Session

from pbem.config import Settings
from pbem.service.context import Context
from pbem.store import models as m
from pbem.store.consent import find_consent, locked_consent


def mailbox_of(address: str) -> str:
    """The mailbox ``address`` reaches: lowercase, without a ``+tag`` ("V+2@Victim.test"
    → "v@victim.test"). Consent, caps and quiet periods are kept per mailbox."""
    local, at, domain = address.strip().lower().rpartition("@")
    if not at:
        return address.strip().lower()
    base = local.split("+", 1)[0]
    return (base or local) + at + domain


FORGOTTEN_DOMAIN = "forgotten.invalid"
"""The domain of the pseudonyms of forgotten players (``pbem player forget``): a
reserved name (RFC 2606) that no mail reaches, and that the service never mails."""


def forgotten_key(mailbox: str) -> str:
    """The key under which the consent row of a forgotten player's mailbox is kept when
    it must stay on the suppression list (it said ``never``): a one-way hash, so the
    address itself is no longer stored, yet its later mail still finds the row."""
    return "sha256:" + hashlib.sha256(mailbox.encode("utf-8")).hexdigest()


def _find(session: Session, mailbox: str) -> m.Consent | None:
    """The consent row of ``mailbox``: the one kept for it when it was forgotten first
    (its suppression holds), else its own."""
    return find_consent(session, forgotten_key(mailbox)) or find_consent(session, mailbox)


def _locked(session: Session, mailbox: str) -> m.Consent:
    """`_find`'s row, created if new, locked for the transaction."""
    kept = find_consent(session, forgotten_key(mailbox))
    return locked_consent(session, kept.mailbox if kept is not None else mailbox)


def is_service_mailbox(ctx: Context, address: str) -> bool:
    """Whether ``address`` is the service's own (its address with any tag) or one of its
    computer seats: mail to it would loop."""
    local, _, domain = mailbox_of(address).rpartition("@")
    if domain != ctx.settings.domain.lower():
        return False
    own = ctx.settings.local_part.lower()
    return local == own or re.fullmatch(r"computer\d*", local) is not None


def takes_mail_for(settings: Settings, recipient: str) -> bool:
    """Whether mail to the envelope recipient ``recipient`` is the service's to take: its
    own address ``local_part@domain`` or ``local_part+anything@domain``, in any case.
    Anything else (another mailbox, another domain, a computer seat's name, a quoted or
    routed address) is not: it is refused before a byte of the mail is read."""
    local, at, domain = recipient.strip().rpartition("@")
    if not at or domain.lower() != settings.domain.lower():
        return False
    base, _plus, _tag = local.partition("+")
    return base.lower() == settings.local_part.lower() and not re.search(r'[\s"<>@,:;]', local)


LOOPBACK = ("127.0.0.0/8", "::1/128")
"""Who may hand mail to the LMTP listener when no ``lmtp_peers`` are named."""


def may_hand_over(settings: Settings, peer: str | None) -> bool:
    """Whether a client at ``peer`` (its IP; None: over a Unix socket, whose folder and
    mode decide who reaches it) may hand mail to the LMTP listener.

    With a trusted server named (``trusted_authserv_id``), the service believes the
    Authentication-Results header on top of each mail, which the mail server writes: a
    client that hands mail over LMTP directly, past the mail server, could write its
    own. So only the mail server may: the ``lmtp_peers``, loopback by default. Without
    one, LMTP proves nothing that SMTP does not, and anyone who reaches it may."""
    if not settings.trusted_authserv_id or peer is None:
        return True
    try:
        address = ipaddress.ip_address(peer.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    networks = (ipaddress.ip_network(n, strict=False) for n in settings.lmtp_peers or LOOPBACK)
    return any(address in network for network in networks)
