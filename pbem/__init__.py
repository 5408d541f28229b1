"""The play-by-email service around the Cribbage engine (`engine`)."""

from __future__ import annotations

from functools import cache

DISTRIBUTION = "pbem-cribbage"
"""The installed distribution that holds the service and its engine."""


@cache
def engine_version() -> str:
    """The installed version of this distribution, whose engine plays the computer seats
    (an archive names it); "unknown" when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"
