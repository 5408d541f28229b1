"""Logging for the command line and the daemon: one line per event, text or JSON.

Our own loggers live under ``pbem.``; ``configure_logging`` sets their level and leaves
every other library (SQLAlchemy, IMAPClient, aiosmtplib, asyncio) at WARNING, so ``-v``
shows our DEBUG lines without theirs. Every line goes through :class:`SecretFilter`
first: passwords in URLs and reply tokens in addresses and Message-IDs never reach the
log, whatever a message or its fields contain.

JSON lines (``--log-format json``) are one object each, for log shippers::

    {"ts": "2026-11-24T21:50:50.123Z", "level": "INFO", "logger": "pbem.daemon",
     "msg": "inbound 7 applied: ...", "inbound": 7, "outcome": "applied", ...}

The structured fields are what the call passed as ``extra``.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import IO, Any, Literal

LogFormat = Literal["text", "json"]

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# Libraries whose DEBUG and INFO lines are noise to an operator: WARNING and above only.
QUIET_LIBRARIES = ("sqlalchemy", "imapclient", "aiosmtplib", "asyncio", "alembic", "urllib3")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# A reply token (see pbem.mail.tokens: lowercase base32, 8-64 characters) after the '+' of
# an address or the '.' before the '@' of a Message-ID.
_TOKEN_IN_ADDRESS = re.compile(r"(?<=[+.])[a-z0-9]{16,64}(?=@)", re.IGNORECASE)
# user:password@ in a URL.
_URL_PASSWORD = re.compile(r"(?<=://)([^/:@\s]*):([^@\s/]+)@")

# Attributes every LogRecord has: anything else on a record came in through ``extra``.
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


def mask_secrets(text: str) -> str:
    """``cribbage+abcdefgh23456789abcd@x`` → ``cribbage+…@x``; ``imap://u:pw@h`` →
    ``imap://u:***@h``."""
    text = _URL_PASSWORD.sub(r"\1:***@", text)
    return _TOKEN_IN_ADDRESS.sub("…", text)


def mask_address(address: str | None) -> str:
    """An address fit for a log line (its reply token masked); '' for None."""
    return mask_secrets(address or "")


class SecretFilter(logging.Filter):
    """Masks secrets in a record's message and in its string fields (in place)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: log it as it is
            message = str(record.msg)
        record.msg = mask_secrets(message)
        record.args = None
        for key, value in list(vars(record).items()):
            if key not in _STANDARD and isinstance(value, str):
                setattr(record, key, mask_secrets(value))
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, then the record's own fields."""

    def format(self, record: logging.LogRecord) -> str:
        ts = datetime.fromtimestamp(record.created, UTC)
        data: dict[str, Any] = {
            "ts": ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in data:
                data[key] = value
        if record.exc_info:
            data["exc"] = mask_secrets(self.formatException(record.exc_info))
        return json.dumps(data, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def formatException(self, ei: Any) -> str:
        return mask_secrets(super().formatException(ei))


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time of each line (a test runner may
    swap it, and close the one there was when logging was set up)."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> IO[str]:
        return sys.stderr

    @stream.setter
    def stream(self, value: IO[str]) -> None:
        pass


def parse_level(value: str) -> int:
    """``"info"`` → ``logging.INFO``; raises ValueError for anything but the five levels."""
    name = value.strip().upper()
    if name not in LEVELS:
        raise ValueError(f"unknown log level {value!r}: one of {', '.join(LEVELS)}")
    return int(logging.getLevelName(name))


def configure_logging(
    level: int | str, fmt: LogFormat = "text", *, stream: IO[str] | None = None
) -> None:
    """Send log lines to ``stream`` (stderr) in ``fmt``; ``pbem.*`` at ``level``, every
    other logger at WARNING. Replaces whatever handlers the root logger had."""
    if isinstance(level, str):
        level = parse_level(level)
    handler: logging.Handler = (
        logging.StreamHandler(stream) if stream is not None else _StderrHandler()
    )
    handler.addFilter(SecretFilter())
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger("pbem").setLevel(level)
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(logging.WARNING)
