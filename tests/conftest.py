"""Shared pytest configuration: fixtures live in tests/fixtures/ and are loaded as plugins."""

pytest_plugins = [
    "tests.fixtures.db",
    "tests.fixtures.mailstack",
    "tests.fixtures.service",
]
