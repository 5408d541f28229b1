"""The service's floors: each module imports only from the floors below it.

Every import counts, the ones inside functions too: an import moved into a function to
dodge a circle is still an arrow. Within a floor, modules may import each other as long
as no circle forms. A new module must be given its floor here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import pbem.service
from tests.pbem import test_rooms as rooms

SERVICE = Path(pbem.service.__file__).parent

# Lowest floor first.
FLOORS: list[tuple[str, tuple[str, ...]]] = [
    ("what every stage stands on", ("context", "moves", "policy")),
    ("what a game keeps (no mail)", ("game",)),
    ("the mail they produce, by audience", ("send",)),
    ("the game operations the handlers share", ("ops",)),
    ("one handler per kind of mail", ("handle",)),
    ("intake: the chain of rules and the route table", ("intake",)),
    ("one stored message, top to bottom", ("flow",)),
    (
        "transactions, and the work beside the flow",
        (
            "transaction",
            "admin",
            "timers",
            "forget",
            "audit",
            "site",
            "unsubscribe",
            "mailbox",
        ),
    ),
    ("the package's front door", ("__init__",)),
]


def room_of(module: str) -> str:
    """``pbem.service.send.turns`` → ``send``; ``pbem.service`` → ``__init__``."""
    parts = module.split(".")[2:]
    return parts[0] if parts else "__init__"


def floor_of(room: str) -> int:
    for number, (_, names) in enumerate(FLOORS):
        if room in names:
            return number
    raise AssertionError(f"pbem/service/{room} has no floor in FLOORS: give it one")


def modules() -> dict[str, Path]:
    return {m: p for m, p in rooms.modules().items() if m.startswith("pbem.service")}


def arrows() -> dict[str, set[str]]:
    """The arrows between the service's modules (`tests.pbem.test_rooms.arrows`)."""
    return {
        module: {t for t in targets if t.startswith("pbem.service")}
        for module, targets in rooms.arrows().items()
        if module.startswith("pbem.service")
    }


def test_every_module_has_a_floor() -> None:
    for module in modules():
        floor_of(room_of(module))


def test_no_module_imports_a_floor_above_its_own() -> None:
    upward = []
    for module, targets in arrows().items():
        mine = floor_of(room_of(module))
        for target in targets:
            theirs = floor_of(room_of(target))
            if theirs > mine:
                upward.append(f"{module} (floor {mine}) imports {target} (floor {theirs})")
    assert upward == []


def test_no_import_circles_inside_the_service() -> None:
    assert rooms.find_circles(arrows()) == []


@pytest.mark.parametrize("room", ["game", "send", "ops", "handle", "intake"])
def test_each_room_has_a_map(room: str) -> None:
    init = SERVICE / room / "__init__.py"
    assert init.exists()
    doc = ast.get_docstring(ast.parse(init.read_text()))
    assert doc and len(doc.splitlines()) >= 3, f"pbem/service/{room}/__init__.py says what it holds"
