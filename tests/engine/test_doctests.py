"""The examples in the engine's docstrings run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "module",
    [
        "engine",
        "engine.cards",
        "engine.scoring",
        "engine.rng",
        "engine.actions",
        "engine.game",
        "engine.view",
        "engine.archive",
    ],
)
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), raise_on_error=False)
    assert result.failed == 0
