"""The real ``pbem`` command in a process of its own, for tests that run it as a user
or a service manager would."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

_FOUND = shutil.which("pbem")
PBEM: list[str] = [_FOUND] if _FOUND else [sys.executable, "-m", "pbem.cli"]
"""The installed console script, or the package run as a module."""


def start_pbem(*args: str, env: Mapping[str, str], cwd: Path) -> subprocess.Popen[str]:
    """``pbem ARGS…`` started in the background (e.g. ``serve``): no input, its output
    and errors read as text through pipes."""
    return subprocess.Popen(
        [*PBEM, *args],
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
