"""Shared pytest configuration: fixtures live in tests/fixtures/ and are loaded as plugins."""

# Imported at collection on purpose: Python 3.11.7 can fail to compile a module
# late in a session ("AST constructor recursion depth mismatch"), and the
# hypothesis plugin would otherwise import this lazily in the terminal summary.
import hypothesis
import hypothesis.internal.observability  # noqa: F401

pytest_plugins = [
    "tests.fixtures.db",
    "tests.fixtures.mailstack",
    "tests.fixtures.realmail",
    "tests.fixtures.service",
]

# The verifiable-deal protocol (setting fair_deals) is on by default for new games; the
# tests' games are dealt at once unless a test turns it on (tests/pbem/service/
# test_fair_deals.py). The environment reaches the command line the tests run too.
import os  # noqa: E402

os.environ.setdefault("PBEM_FAIR_DEALS", "false")


import pytest  # noqa: E402


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep a module whose tests share a module-scoped fixture (a built image, a browser,
    a corpus of archives) on one parallel worker: it is made once, not once a worker."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        shared = any(
            definition.scope == "module"
            for definitions in info.name2fixturedefs.values()
            for definition in definitions
        )
        if shared:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
