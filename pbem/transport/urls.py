"""Transport URLs → validated settings, with the password kept out of every repr and message.

Forms::

    maildir:/abs/path   maildir:relative/path   maildir:///abs/path     (?poll=1&max_size=N)
    imap://user:pass@host:port/FOLDER?tls=none|starttls|implicit&processed=Folder
          &poll=60&max_size=1048576&timeout=30&batch=100&idle=yes&verify=yes
    imaps://…           same as imap:// with tls=implicit
    smtp://[user:pass@]host:port?tls=none|starttls|implicit&timeout=30&helo=NAME&verify=yes
    smtps://…           same as smtp:// with tls=implicit
    lmtp://host:port    LMTP in: the service listens there, the mail server delivers to it
    lmtp:/abs/path      the same on a Unix socket (``lmtp:///abs/path`` too)

User and password are percent-decoded (write ``%40`` for ``@``, ``%2F`` for ``/``).
``max_size=0`` means no size cap. ``verify=no`` accepts any TLS certificate (a test server's
self-signed one); the default checks it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from pbem.transport.base import TransportConfigError

TlsMode = Literal["none", "starttls", "implicit"]
TLS_MODES: tuple[TlsMode, ...] = ("none", "starttls", "implicit")

DEFAULT_MAX_SIZE = 10 * 1024 * 1024
"""Inbound messages above this many bytes are returned as headers only (``oversize``)."""

DEFAULT_LMTP_PORT = 8024
"""Where ``lmtp://host`` listens without a port (Mailman's LMTP port, by custom)."""

_IMAP_PORTS: dict[TlsMode, int] = {"none": 143, "starttls": 143, "implicit": 993}
_SMTP_PORTS: dict[TlsMode, int] = {"none": 25, "starttls": 587, "implicit": 465}
_TRUE = {"1", "yes", "true", "on"}
_FALSE = {"0", "no", "false", "off"}


def mask_url(url: str) -> str:
    """``url`` with its password replaced by ``***``; safe on malformed input too.

    Masks generously: everything between the user name and the last ``@`` of the part
    before the query, so that a password with an unescaped ``/`` or ``@`` never shows.
    """
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^?#]*)(.*)$", url, re.DOTALL)
    if match is None:
        return url
    prefix, rest, tail = match.groups()
    userinfo, at, hostpart = rest.rpartition("@")
    if not at:
        return url
    user, colon, _password = userinfo.partition(":")
    if not colon:
        return url
    return f"{prefix}{user}:***@{hostpart}{tail}"


@dataclass(frozen=True, slots=True)
class MaildirConfig:
    """A Maildir folder (inbound) or a root of per-recipient Maildirs (outbound)."""

    path: Path
    poll: float = 1.0
    max_size: int | None = DEFAULT_MAX_SIZE


@dataclass(frozen=True, slots=True)
class ImapConfig:
    """An IMAP folder to read. ``repr``/``str`` show the URL with the password masked."""

    host: str
    port: int
    username: str
    password: str = field(repr=False)
    folder: str = "INBOX"
    tls: TlsMode = "starttls"
    verify: bool = True
    processed: str | None = None
    poll: float = 60.0
    max_size: int | None = DEFAULT_MAX_SIZE
    timeout: float = 30.0
    batch: int = 100
    idle: bool = True

    @property
    def mailbox_name(self) -> str:
        """The name under which the folder's cursor is stored: no password, stable."""
        user = quote(self.username, safe="@")
        return f"imap://{user}@{self.host}:{self.port}/{self.folder}"

    def masked_url(self) -> str:
        """The URL with the password as ``***``: for logs and messages."""
        user = quote(self.username, safe="@")
        query = f"tls={self.tls}"
        if self.processed:
            query += f"&processed={quote(self.processed)}"
        return f"imap://{user}:***@{self.host}:{self.port}/{quote(self.folder)}?{query}"

    def __repr__(self) -> str:
        return f"ImapConfig({self.masked_url()!r})"

    def __str__(self) -> str:
        return self.masked_url()


@dataclass(frozen=True, slots=True)
class LmtpConfig:
    """Where the service listens for LMTP: a TCP ``host`` and ``port``, or a Unix socket
    ``path`` (exactly one of the two)."""

    host: str | None = None
    port: int = DEFAULT_LMTP_PORT
    path: Path | None = None

    def masked_url(self) -> str:
        """The URL (an LMTP URL holds no secret)."""
        if self.path is not None:
            return f"lmtp:{self.path}"
        host = f"[{self.host}]" if self.host and ":" in self.host else self.host
        return f"lmtp://{host}:{self.port}"

    def __str__(self) -> str:
        return self.masked_url()


@dataclass(frozen=True, slots=True)
class SmtpConfig:
    """An SMTP server to send through. ``repr``/``str`` mask the password."""

    host: str
    port: int
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    tls: TlsMode = "starttls"
    verify: bool = True
    timeout: float = 30.0
    helo: str | None = None

    def masked_url(self) -> str:
        """The URL with the password as ``***``: for logs and messages."""
        auth = ""
        if self.username is not None:
            auth = quote(self.username, safe="@") + (":***" if self.password else "") + "@"
        return f"smtp://{auth}{self.host}:{self.port}?tls={self.tls}"

    def __repr__(self) -> str:
        return f"SmtpConfig({self.masked_url()!r})"

    def __str__(self) -> str:
        return self.masked_url()


def parse_inbound(url: str) -> MaildirConfig | ImapConfig | LmtpConfig:
    """Settings for an inbound URL (``maildir:``, ``imap[s]://`` or ``lmtp:``).

    Raises:
        TransportConfigError: malformed URL, unknown scheme or parameter, bad value.
    """
    scheme = _scheme(url)
    if scheme == "maildir":
        return _parse_maildir(url, inbound=True)
    if scheme in ("imap", "imaps"):
        return _parse_imap(url)
    if scheme == "lmtp":
        return _parse_lmtp(url)
    if scheme in ("smtp", "smtps"):
        raise TransportConfigError(
            f"{mask_url(url)!r}: SMTP only sends; inbound mail comes from maildir:, imap:// "
            "or lmtp://"
        )
    raise TransportConfigError(
        f"{mask_url(url)!r}: unknown inbound scheme {scheme!r} (use maildir:PATH, imap:// "
        "or lmtp://HOST:PORT)"
    )


def parse_outbound(url: str) -> MaildirConfig | SmtpConfig:
    """Settings for an outbound URL (``maildir:`` or ``smtp[s]://``).

    Raises:
        TransportConfigError: malformed URL, unknown scheme or parameter, bad value.
    """
    scheme = _scheme(url)
    if scheme == "maildir":
        return _parse_maildir(url, inbound=False)
    if scheme in ("smtp", "smtps"):
        return _parse_smtp(url)
    if scheme in ("imap", "imaps", "lmtp"):
        raise TransportConfigError(
            f"{mask_url(url)!r}: {scheme.upper().rstrip('S')} only receives; outbound mail "
            "goes to maildir: or smtp://"
        )
    raise TransportConfigError(
        f"{mask_url(url)!r}: unknown outbound scheme {scheme!r} (use maildir:PATH or smtp://)"
    )


# ---------------------------------------------------------------- helpers


def _scheme(url: str) -> str:
    if not isinstance(url, str) or not url.strip():
        raise TransportConfigError("empty transport URL (use maildir:PATH, imap:// or smtp://)")
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", url)
    if match is None:
        raise TransportConfigError(
            f"{mask_url(url)!r} has no scheme (use maildir:PATH, imap:// or smtp://)"
        )
    return match.group(1).lower()


def _params(url: str, query: str, allowed: set[str]) -> dict[str, str]:
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as exc:
        raise TransportConfigError(f"{mask_url(url)!r}: malformed query ({exc})") from None
    params: dict[str, str] = {}
    for name, value in pairs:
        if name not in allowed:
            known = ", ".join(sorted(allowed)) or "none"
            raise TransportConfigError(
                f"{mask_url(url)!r}: unknown parameter {name!r} (known: {known})"
            )
        if name in params:
            raise TransportConfigError(f"{mask_url(url)!r}: parameter {name!r} given twice")
        params[name] = value
    return params


def _positive_float(url: str, params: dict[str, str], name: str, default: float) -> float:
    if name not in params:
        return default
    try:
        value = float(params[name])
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise TransportConfigError(
            f"{mask_url(url)!r}: {name} must be a positive number of seconds, not {params[name]!r}"
        )
    return value


def _int(url: str, params: dict[str, str], name: str, default: int, minimum: int) -> int:
    if name not in params:
        return default
    try:
        value = int(params[name])
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise TransportConfigError(
            f"{mask_url(url)!r}: {name} must be an integer ≥ {minimum}, not {params[name]!r}"
        )
    return value


def _bool(url: str, params: dict[str, str], name: str, default: bool) -> bool:
    if name not in params:
        return default
    value = params[name].strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise TransportConfigError(f"{mask_url(url)!r}: {name} must be yes or no, not {value!r}")


def _max_size(url: str, params: dict[str, str]) -> int | None:
    size = _int(url, params, "max_size", DEFAULT_MAX_SIZE, 0)
    return size or None


def _tls(url: str, params: dict[str, str], scheme: str) -> TlsMode:
    implicit_scheme = scheme.endswith("s")
    raw = params.get("tls")
    if raw is None:
        return "implicit" if implicit_scheme else "starttls"
    for mode in TLS_MODES:
        if raw.lower() == mode:
            if implicit_scheme and mode != "implicit":
                raise TransportConfigError(
                    f"{mask_url(url)!r}: {scheme}:// always uses implicit TLS, not tls={raw}"
                )
            return mode
    raise TransportConfigError(
        f"{mask_url(url)!r}: tls must be none, starttls or implicit, not {raw!r}"
    )


def _host_port(url: str, default_port: int) -> tuple[str, int, str | None, str | None]:
    parts = urlsplit(url)
    if parts.fragment:
        raise TransportConfigError(f"{mask_url(url)!r}: a fragment (#…) has no meaning here")
    try:
        port = parts.port
    except ValueError:
        raise TransportConfigError(f"{mask_url(url)!r}: the port is not a number 1-65535") from None
    host = parts.hostname
    if not host:
        raise TransportConfigError(f"{mask_url(url)!r}: no host")
    if port == 0:
        raise TransportConfigError(f"{mask_url(url)!r}: port 0")
    username = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else None
    return host, port or default_port, username, password


def _parse_maildir(url: str, *, inbound: bool) -> MaildirConfig:
    parts = urlsplit(url)
    if parts.netloc:
        raise TransportConfigError(
            f"{mask_url(url)!r}: a Maildir is a local path: maildir:/abs/path or "
            "maildir:relative/path"
        )
    if parts.fragment:
        raise TransportConfigError(f"{mask_url(url)!r}: a fragment (#…) has no meaning here")
    raw_path = unquote(parts.path)
    if not raw_path or "\x00" in raw_path:
        raise TransportConfigError(f"{mask_url(url)!r}: no Maildir path")
    if inbound:
        params = _params(url, parts.query, {"poll", "max_size"})
        return MaildirConfig(
            path=Path(raw_path),
            poll=_positive_float(url, params, "poll", 1.0),
            max_size=_max_size(url, params),
        )
    _params(url, parts.query, set())
    return MaildirConfig(path=Path(raw_path))


def _parse_imap(url: str) -> ImapConfig:
    scheme = _scheme(url)
    parts = urlsplit(url)
    params = _params(
        url,
        parts.query,
        {"tls", "processed", "poll", "max_size", "timeout", "batch", "idle", "verify"},
    )
    tls = _tls(url, params, scheme)
    host, port, username, password = _host_port(url, _IMAP_PORTS[tls])
    if not username:
        raise TransportConfigError(f"{mask_url(url)!r}: IMAP needs a user (imap://user:pass@…)")
    if password is None:
        raise TransportConfigError(f"{mask_url(url)!r}: IMAP needs a password (imap://user:pass@…)")
    folder = unquote(parts.path.lstrip("/")) or "INBOX"
    processed = params.get("processed")
    if processed is not None:
        processed = processed.strip()
        if not processed:
            raise TransportConfigError(f"{mask_url(url)!r}: processed= needs a folder name")
        if processed == folder:
            raise TransportConfigError(
                f"{mask_url(url)!r}: the processed folder cannot be the folder read"
            )
    return ImapConfig(
        host=host,
        port=port,
        username=username,
        password=password,
        folder=folder,
        tls=tls,
        verify=_bool(url, params, "verify", True),
        processed=processed,
        poll=_positive_float(url, params, "poll", 60.0),
        max_size=_max_size(url, params),
        timeout=_positive_float(url, params, "timeout", 30.0),
        batch=_int(url, params, "batch", 100, 1),
        idle=_bool(url, params, "idle", True),
    )


def _parse_lmtp(url: str) -> LmtpConfig:
    parts = urlsplit(url)
    if parts.fragment:
        raise TransportConfigError(f"{mask_url(url)!r}: a fragment (#…) has no meaning here")
    _params(url, parts.query, set())
    if not parts.netloc:
        raw_path = unquote(parts.path)
        if not raw_path.startswith("/") or raw_path == "/" or "\x00" in raw_path:
            raise TransportConfigError(
                f"{mask_url(url)!r}: an LMTP socket is lmtp://HOST:PORT or lmtp:/abs/path"
            )
        return LmtpConfig(path=Path(raw_path))
    if parts.path not in ("", "/"):
        raise TransportConfigError(
            f"{mask_url(url)!r}: lmtp://HOST:PORT has no path (a Unix socket is lmtp:/abs/path)"
        )
    host, port, username, password = _host_port(url, DEFAULT_LMTP_PORT)
    if username is not None or password is not None:
        raise TransportConfigError(f"{mask_url(url)!r}: an LMTP listener takes no user")
    return LmtpConfig(host=host, port=port)


def _parse_smtp(url: str) -> SmtpConfig:
    scheme = _scheme(url)
    parts = urlsplit(url)
    if parts.path not in ("", "/"):
        raise TransportConfigError(f"{mask_url(url)!r}: an SMTP URL has no path")
    params = _params(url, parts.query, {"tls", "timeout", "helo", "verify"})
    tls = _tls(url, params, scheme)
    host, port, username, password = _host_port(url, _SMTP_PORTS[tls])
    if password is not None and not username:
        raise TransportConfigError(f"{mask_url(url)!r}: a password without a user")
    helo = params.get("helo")
    if helo is not None and not re.fullmatch(r"[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]", helo):
        raise TransportConfigError(f"{mask_url(url)!r}: helo must be a host name, not {helo!r}")
    return SmtpConfig(
        host=host,
        port=port,
        username=username or None,
        password=password,
        tls=tls,
        verify=_bool(url, params, "verify", True),
        timeout=_positive_float(url, params, "timeout", 30.0),
        helo=helo,
    )
