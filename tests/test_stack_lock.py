"""The mail stack's readers–writer lock (tests/fixtures/mailstack.py): tests that use
the stack share it, a ``serial`` test waits for them and has it alone, and tests that
come while it waits wait behind it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.fixtures import mailstack as stack_module


def _hold(
    alone: bool, entered: threading.Event, release: threading.Event, log: list[str], name: str
) -> threading.Thread:
    def run() -> None:
        with stack_module.stack_in_use(alone=alone):
            log.append(f"{name} in")
            entered.set()
            release.wait(10)
            log.append(f"{name} out")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_serial_test_waits_for_the_users_and_the_newcomers_wait_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stack_module, "LOCK_DIR", tmp_path / "locks")
    log: list[str] = []
    events = {name: (threading.Event(), threading.Event()) for name in ("a", "b", "s", "c")}

    def hold(name: str, alone: bool = False) -> threading.Thread:
        entered, release = events[name]
        return _hold(alone, entered, release, log, name)

    threads = [hold("a"), hold("b")]
    assert events["a"][0].wait(5) and events["b"][0].wait(5)  # two users share it
    threads.append(hold("s", alone=True))
    time.sleep(0.3)
    assert not events["s"][0].is_set()  # the serial test waits for both
    threads.append(hold("c"))
    time.sleep(0.3)
    assert not events["c"][0].is_set()  # a newcomer waits behind the serial test
    events["a"][1].set()
    time.sleep(0.3)
    assert not events["s"][0].is_set()  # one user is still in
    events["b"][1].set()
    assert events["s"][0].wait(5)
    time.sleep(0.3)
    assert not events["c"][0].is_set()  # alone means alone
    events["s"][1].set()
    assert events["c"][0].wait(5)
    events["c"][1].set()
    for thread in threads:
        thread.join(5)
    assert log.index("s in") > max(log.index("a out"), log.index("b out"))
    assert log.index("c in") > log.index("s out")


def test_the_lock_is_let_go_when_the_test_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stack_module, "LOCK_DIR", tmp_path / "locks")
    with pytest.raises(RuntimeError), stack_module.stack_in_use(alone=True):
        raise RuntimeError("the test failed")
    entered, release = threading.Event(), threading.Event()
    release.set()
    _hold(False, entered, release, [], "next").join(5)
    assert entered.is_set()
