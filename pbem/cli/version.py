"""The version line ``pbem --version`` prints, without typer, rich or anything else the
command line needs: ``pbem --version`` alone answers from here before typer is imported."""

from __future__ import annotations

from functools import cache


@cache
def package_version() -> str:
    """The installed package's version (``unknown`` when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pbem-cribbage")
    except PackageNotFoundError:
        return "unknown"


def version_line() -> str:
    """``pbem 0.1.0``: what ``pbem --version`` prints."""
    return f"pbem {package_version()}"
