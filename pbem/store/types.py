"""Column types shared by the tables and the migrations.

- `UTCDateTime`: timezone-aware UTC datetimes on every backend. PostgreSQL keeps them in
  ``timestamptz``; SQLite has no time zones, so values are stored as naive UTC text and come
  back with ``tzinfo=UTC``. A naive datetime is refused, so local times cannot sneak in.
- `JSONText`: a JSON document kept as plain text, written canonically (sorted keys, no
  spaces) so equal documents are equal strings.
- `ID_TYPE`: BIGINT primary and foreign keys; INTEGER on SQLite, where only an
  ``INTEGER PRIMARY KEY`` column is an auto-incrementing row id.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import BigInteger, DateTime, Integer, Text
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

ID_TYPE: TypeEngine[int] = BigInteger().with_variant(Integer(), "sqlite")


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware datetime, normalised to UTC on the way in and out."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Convert an aware datetime to UTC; raise ValueError for a naive one."""
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: the store only accepts aware datetimes")
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            # Naive UTC text sorts and compares correctly as a string.
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Return the stored instant as an aware UTC datetime."""
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def dump_json(value: Any) -> str:
    """The canonical JSON text of `value`: sorted keys, compact separators, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class JSONText(TypeDecorator[Any]):
    """A JSON document stored as TEXT.

    Assign a new value to change it: mutating the loaded dict in place is not tracked.
    """

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        """Serialise `value` canonically; None stays SQL NULL."""
        if value is None:
            return None
        return dump_json(value)

    def process_result_value(self, value: str | None, dialect: Dialect) -> Any:
        """Parse the stored text back into Python values."""
        if value is None:
            return None
        return json.loads(value)
