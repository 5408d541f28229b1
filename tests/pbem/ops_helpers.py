"""An installation with games in every state, played by mail, for the operator's tools
(backup, restore, ``db copy``, ``player forget``)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from pbem.store.db import make_engine
from tests.e2e.helpers import ALICE, BOB, CAROL, DAVE, Harness


@dataclass
class Installation:
    """The harness and the id of its game in each state."""

    harness: Harness
    finished: int  # fair: both players cut by mail, played to the end, deals verifiable
    cutting: int  # fair: waiting for its players' cuts
    active: int  # with table talk
    paused: int
    aborted: int


def sqlite_harness(tmp_path: Path, template: Path, **overrides: object) -> Harness:
    """A harness with verifiable deals on a SQLite file copied from the migrated
    template."""
    overrides.setdefault("fair_deals", True)
    path = tmp_path / "pbem.db"
    shutil.copyfile(template, path)
    url = f"sqlite:///{path}"
    return Harness.build(tmp_path, url, make_engine(url), **overrides)


def populate(harness: Harness) -> Installation:
    """Play a few games by mail, leaving one in each state."""
    svc = harness.service
    finished = svc.new_game([ALICE, BOB], target=61)
    harness.step()
    harness.answer(ALICE[0], "cut 17 purple elephants", message_id="<alice-cut@example.com>")
    harness.answer(BOB[0], "cut", message_id="<bob-cut@example.org>")
    harness.play_until(finished, lambda g: g.is_over)

    cutting = svc.new_game([ALICE, CAROL], target=61)
    harness.step()

    # An admin's seed: dealt at once, not verifiable.
    active = harness.new_game([ALICE, DAVE], seed="ops-active")
    harness.play_until(active, lambda g: len(g.actions) >= 4)
    harness.answer(ALICE[0], "say Well played, Dave!")
    paused = harness.new_game([BOB, CAROL], seed="ops-paused")
    aborted = harness.new_game([ALICE, CAROL], seed="ops-aborted")
    svc.set_status(paused, "paused", "a holiday")
    svc.set_status(aborted, "aborted", "a player left")
    harness.step()
    return Installation(harness, finished, cutting, active, paused, aborted)


def clone(made: Installation, tmp_path: Path) -> Installation:
    """A copy of an installation (its database and mail folders) for one test."""
    dest = tmp_path / "installation"
    shutil.copytree(made.harness.tmp_path, dest)
    url = f"sqlite:///{dest / 'pbem.db'}"
    harness = Harness.build(dest, url, make_engine(url), fair_deals=True)
    harness.clock.now = made.harness.clock.now
    return replace(made, harness=harness)
