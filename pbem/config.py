"""Settings: from a TOML file and ``PBEM_*`` environment variables.

Precedence, highest first: environment variables, the config file (``--config``
or ``PBEM_CONFIG``; ``./pbem.toml`` when present), the defaults below.  The
defaults are the embedded setup: a SQLite file and Maildir folders under
``data_dir``, no servers needed.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class ConfigError(ValueError):
    """The configuration cannot be used (a bad file, a bad value)."""


class Settings(BaseSettings):
    """Everything the service can be told."""

    model_config = SettingsConfigDict(env_prefix="PBEM_", extra="forbid")

    data_dir: Path = Field(Path("pbem-data"), description="where the embedded defaults live")
    database_url: str = Field("", description="SQLAlchemy URL; default: SQLite in data_dir")
    inbound_url: str = Field(
        "",
        description="maildir:PATH, imap://… or lmtp://HOST:PORT (lmtp:/abs/socket): where "
        "mail comes in; default: data_dir/inbox",
    )
    outbound_url: str = Field("", description="maildir:PATH or smtp://…; default: data_dir/outbox")
    domain: str = Field("pbem.localhost", description="the domain of the service's address")
    local_part: str = Field("cribbage", description="local part of the service's address")
    from_name: str = Field("Cribbage by mail", description="display name on outgoing mail")
    admin_email: str = Field("", description="who hears about failures")
    reminder_hours: float = Field(24.0, ge=0, description="remind the player to move after this")
    timeout_days: float = Field(7.0, ge=0, description="after this the game's timeout applies")
    timeout_action: str = Field("autoplay", description="forfeit | autoplay | none")
    away_days_per_game: int = Field(
        14, ge=0, description="days a player may be 'away' (clocks stopped) in each game"
    )
    mail_replay: bool = Field(
        True,
        description="whether the game-over mail attaches the game's replay page (HTML) for "
        "a player who has not said 'mail replay on' or 'mail replay off'",
    )
    max_message_bytes: int = Field(1_000_000, gt=0)
    max_per_sender_per_hour: int = Field(
        120,
        gt=0,
        description="mails one sender may send in an hour that prove nothing but their "
        "From; more are not read (proven mail has its own, larger limit)",
    )
    max_proven_per_hour: int = Field(
        600,
        gt=0,
        description="mails one sender may send in an hour with their reply token (or the "
        "trusted server's pass); more wait until the hour allows them, and the sender is "
        "told once",
    )
    max_unproven_answers_per_day: int = Field(
        3,
        ge=0,
        description="answers one mailbox may get in a (UTC) day to mails proven by their "
        "From alone, whatever they ask (confirmation requests included)",
    )
    match_plus_tags: bool = Field(
        False,
        description="whether a+tag@x.test is the player a@x.test (and the other way "
        "round); off: such a reply is refused and its sender told why",
    )
    trusted_authserv_id: str = Field(
        "",
        description="the authserv-id of the provider whose Authentication-Results header "
        "is trusted; every mail then needs its DMARC pass (or an aligned DKIM or SPF "
        "pass), and a mail without one is not acted on nor answered. Empty: off",
    )
    lmtp_peers: list[str] = Field(
        default_factory=list,
        description="with trusted_authserv_id set, the client addresses (IPs or networks, "
        "e.g. 10.0.0.5 or 10.0.0.0/24) that may hand mail to the LMTP listener over TCP; "
        "empty: loopback only. Without a trusted server it takes mail from anyone who "
        "reaches it",
    )
    lobby: str = Field(
        "invite-only",
        description="who may start games by mail: open (anyone), invite-only (players "
        "of a game already), closed (only the admin, with pbem game new)",
    )
    lobby_domains: list[str] = Field(
        default_factory=list, description="the domains invitations may go to; empty: any"
    )
    fair_deals: bool = Field(
        True,
        description="deal new games by the verifiable-deal protocol (pbem-deal/1): a "
        "commitment in every mail, each player cuts for the deal, the server seed is "
        "revealed at game over (pbem verify checks it); off: the service picks the seed",
    )
    max_open_invitations: int = Field(5, ge=0, description="open invitations per player")
    max_new_games_per_day: int = Field(
        10, ge=0, description="games started by mail in one mailbox's name in a (UTC) day"
    )
    max_invitations_per_address_per_day: int = Field(
        2, ge=0, description="invitations one mailbox may get in a (UTC) day, from anyone"
    )
    invitation_days: float = Field(7.0, gt=0, description="an invitation expires after this")
    invitation_quiet_days: float = Field(
        30.0,
        ge=0,
        description="a mailbox that never confirmed gets at most one unasked mail in this "
        "many days (an invitation, a confirmation request…); one that declined or let an "
        "invitation lapse is not invited for this long",
    )
    max_says_per_game_per_hour: int = Field(
        10, ge=0, description="table talk (say) a player may send to one game in an hour"
    )
    say_max_chars: int = Field(500, ge=20, le=2000, description="the longest say relayed")
    max_observers_per_game: int = Field(20, ge=0, description="watchers of one game")
    max_watched_games: int = Field(10, ge=0, description="games one address may watch")
    digest_hour: int = Field(
        7, ge=0, le=23, description="the UTC hour the daily digest goes to players in digest mode"
    )
    outbox_max_age: float = Field(
        5.0,
        gt=0,
        description="days a mail that fails temporarily is retried (with capped exponential "
        "backoff) before it fails for good, as Postfix's maximal_queue_lifetime",
    )
    outbox_max_attempts: int | None = Field(
        None, gt=0, description="also fail a mail after this many attempts (default: no limit)"
    )
    outbox_backoff_seconds: float = Field(
        30.0, gt=0, description="the first retry's delay; it doubles, up to 4000 s"
    )
    mail_retention_days: float = Field(
        30.0,
        ge=0,
        le=36500,
        allow_inf_nan=False,
        description="days the raw bytes of a stored mail are kept once it is done with "
        "(processed, or delivered); its row and Message-ID stay (pbem db prune)",
    )
    game_mail_retention_days: float = Field(
        1.0,
        ge=0,
        le=36500,
        allow_inf_nan=False,
        description="days the raw bytes of a game's mail are kept once the game is over "
        "(its archive holds what it proved), when that comes before mail_retention_days",
    )
    poll_seconds: float = Field(5.0, gt=0)
    render_processes: int | None = Field(
        None,
        ge=0,
        le=8,
        description="helper processes that render a batch's mail while the daemon goes on "
        "(0: none; default: one on SQLite with two or more cores, none on PostgreSQL, "
        "where more workers use the cores)",
    )
    unsubscribe_url: str = Field(
        "",
        description="the HTTPS address of the one-click unsubscribe (RFC 8058), e.g. "
        "https://pbem.example.org/unsubscribe; game mails then carry it (with the seat's "
        "token appended) and List-Unsubscribe-Post, and pbem serve listens on http_listen. "
        "Empty: off (the mailto unsubscribe only)",
    )
    http_listen: str = Field(
        "127.0.0.1:8025",
        description="HOST:PORT where pbem serve answers the one-click unsubscribe (behind "
        "an HTTPS reverse proxy at unsubscribe_url) and /metrics; used only when unsubscribe_url "
        "or metrics is set",
    )
    metrics: bool = Field(
        False,
        description="answer Prometheus text at /metrics on http_listen (pbem serve then "
        "listens even without unsubscribe_url): to a client on the loopback that came "
        "through no proxy, or to one that sends metrics_token",
    )
    metrics_token: str = Field(
        "",
        description="a secret a scraper on another host sends as 'Authorization: Bearer "
        "TOKEN' for /metrics (empty: loopback only)",
    )
    log_level: str = Field(
        "INFO",
        description="DEBUG, INFO, WARNING, ERROR or CRITICAL: how much pbem serve logs "
        "(-v means DEBUG); other commands log warnings unless this is set",
    )

    @field_validator("timeout_action")
    @classmethod
    def _timeout_action(cls, value: str) -> str:
        if value not in ("forfeit", "autoplay", "none"):
            raise ValueError("must be forfeit, autoplay or none")
        return value

    @field_validator("lobby")
    @classmethod
    def _lobby(cls, value: str) -> str:
        if value not in ("open", "invite-only", "closed"):
            raise ValueError("must be open, invite-only or closed")
        return value

    @field_validator("lmtp_peers")
    @classmethod
    def _lmtp_peers(cls, value: list[str]) -> list[str]:
        import ipaddress

        for peer in value:
            try:
                ipaddress.ip_network(peer.strip(), strict=False)
            except ValueError:
                raise ValueError(f"{peer!r} is not an IP address or network") from None
        return [peer.strip() for peer in value]

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str) -> str:
        check_database_url(value)
        return value

    @field_validator("unsubscribe_url")
    @classmethod
    def _unsubscribe_url(cls, value: str) -> str:
        value = value.strip()
        if not value:
            return ""
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 - reading the port raises for a bad one
        except ValueError as exc:
            raise ValueError(f"not a URL ({exc})") from None
        if parts.scheme != "https" or not parts.hostname:
            raise ValueError("must be an https:// URL (RFC 8058)")
        if parts.query or parts.fragment or parts.username or parts.password:
            raise ValueError("must have no query, fragment or user")
        return value.rstrip("/")

    @field_validator("http_listen")
    @classmethod
    def _http_listen(cls, value: str) -> str:
        split_listen(value)
        return value.strip()

    @field_validator("log_level")
    @classmethod
    def _log_level(cls, value: str) -> str:
        name = value.strip().upper()
        if name not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ValueError("must be DEBUG, INFO, WARNING, ERROR or CRITICAL")
        return name

    @property
    def address(self) -> str:
        return f"{self.local_part}@{self.domain}"

    @property
    def loop_value(self) -> str:
        return f"{self.local_part}@{self.domain}"

    @property
    def db_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'pbem.sqlite').resolve()}"

    @property
    def inbound(self) -> str:
        return self.inbound_url or f"maildir:{(self.data_dir / 'inbox').resolve()}"

    @property
    def outbound(self) -> str:
        return self.outbound_url or f"maildir:{(self.data_dir / 'outbox').resolve()}"

    def masked(self) -> dict[str, Any]:
        """The effective configuration with secrets masked, for ``pbem config``."""
        out: dict[str, Any] = {}
        for key in type(self).model_fields:
            value = getattr(self, key)
            out[key] = str(value) if isinstance(value, Path) else value
        out["database_url"] = mask_url(self.db_url)
        out["inbound_url"] = mask_url(self.inbound)
        out["outbound_url"] = mask_url(self.outbound)
        out["address"] = self.address
        out["metrics_token"] = "***" if self.metrics_token else ""
        return out


def split_listen(value: str) -> tuple[str, int]:
    """``"127.0.0.1:8025"`` → ``("127.0.0.1", 8025)``; ``"[::1]:8025"`` → ``("::1", 8025)``.
    Raises ValueError unless the value is HOST:PORT with a port from 0 to 65535."""
    host, sep, port = value.strip().rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{value!r} is not HOST:PORT (e.g. 127.0.0.1:8025)")
    if any(c.isspace() for c in host) or (":" in host and not value.strip().startswith("[")):
        raise ValueError(f"{value!r} is not HOST:PORT (write an IPv6 host as [::1]:8025)")
    return host, int(port)


DATABASE_SCHEMES = ("sqlite", "postgresql", "postgresql+psycopg")


def check_database_url(url: str) -> None:
    """Accept ``""`` (the SQLite file in data_dir), ``sqlite:///PATH`` and
    ``postgresql://…`` or ``postgresql+psycopg://…``; raise ValueError naming the URL
    (password masked) otherwise, so a typo never opens some other database or makes a file."""
    if not url:
        return
    shown = mask_url(url)
    expected = "expected sqlite:///PATH or postgresql://USER@HOST/DATABASE"
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise ValueError(f"{shown!r} is not a database URL ({expected})")
    if scheme == "postgres":
        raise ValueError(f"{shown!r}: write postgresql:// instead of postgres:// ({expected})")
    if scheme not in DATABASE_SCHEMES:
        raise ValueError(f"{shown!r}: unsupported database {scheme!r} ({expected})")
    if scheme == "sqlite":
        if not rest.startswith("/") or not rest.strip("/"):
            raise ValueError(f"{shown!r} names no SQLite file ({expected})")
        return
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - reading the port raises for a bad one
    except ValueError as exc:
        raise ValueError(f"{shown!r} is not a valid PostgreSQL URL ({exc})") from None
    if not parts.hostname and not parts.path.strip("/"):
        raise ValueError(f"{shown!r} names no PostgreSQL host or database ({expected})")


def mask_url(url: str) -> str:
    """``imap://bob:secret@host/`` → ``imap://bob:***@host/``."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        # A port that is not a number: keep the scheme, hide the rest (it may hold a password).
        scheme, sep, _ = url.partition("://")
        return f"{scheme}://***" if sep else "***"
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if port:
        host = f"{host}:{port}"
    return urlunsplit((parts.scheme, f"{user}:***@{host}", parts.path, parts.query, ""))


def load_settings(config_file: str | Path | None = None, **overrides: Any) -> Settings:
    """Read the file (if any), then the environment; raise ``ConfigError`` with one clear line."""
    path: Path | None = None
    if config_file is not None:
        path = Path(config_file)
    elif os.environ.get("PBEM_CONFIG"):
        path = Path(os.environ["PBEM_CONFIG"])
    elif Path("pbem.toml").is_file():
        path = Path("pbem.toml")
    file_values: dict[str, Any] = {}
    if path is not None:
        try:
            with path.open("rb") as fh:
                data = tomllib.load(fh)
        except FileNotFoundError as exc:
            raise ConfigError(f"config file {path} does not exist") from exc
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
        file_values = dict(data.get("pbem", data))
    env_keys = {key for key in Settings.model_fields if f"PBEM_{key.upper()}" in os.environ}
    values = {k: v for k, v in file_values.items() if k not in env_keys}
    values.update(overrides)
    try:
        return Settings(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "config"
        source = f" in {path}" if path else ""
        message = str(first.get("msg", "")).removeprefix("Value error, ")
        raise ConfigError(f"bad setting {where}{source}: {message}") from exc
