"""The errors the store raises."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of the store's own errors."""


class ConcurrentUpdateError(StoreError):
    """Another transaction changed the same game first; reload the game and try again."""


class SchemaNotCurrentError(StoreError):
    """The database schema is not at the revision this version of the code needs."""
