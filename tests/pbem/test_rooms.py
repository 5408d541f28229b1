"""The rooms of `pbem/` and the engine: each imports only from the rooms below it, no
module imports another in a circle, and no module of `pbem/` or `engine/` is over 500
lines (but the engine's two generated data tables).

Every import counts, the ones inside functions and under ``TYPE_CHECKING`` too: an
import moved into a function to dodge a circle is still an arrow. The service's own
floors are `tests/pbem/service/test_layers.py`'s.
"""

from __future__ import annotations

import ast
from pathlib import Path

import engine
import pbem

ROOT = Path(pbem.__file__).parent.parent
LIMIT = 500
# The only modules exempt from LIMIT: generated data, not code. Each is written whole by
# its generator (``python -m <generator> ... --write``, the exact command in the table's
# docstring) and never edited by hand, so splitting it would only split a table.
GENERATED = {
    "engine.strategy.pegdata": "engine.strategy.pegtable",
    "engine.strategy.cribdata": "engine.strategy.cribtables",
}

# Lowest floor first; a room imports only its own floor's rooms (without a circle) and
# the floors below.
FLOORS: list[tuple[str, ...]] = [
    ("engine",),
    (
        "pbem",  # the package's own __init__
        "pbem.config",
        "pbem.names",
        "pbem.ratings",
        "pbem.repeats",
        "pbem.metrics",
        "pbem.logsetup",
        "pbem.commands",
        "pbem.transport",
        "pbem.mail",
    ),
    ("pbem.store", "pbem.render"),
    ("pbem.service",),
    ("pbem.run",),
    ("pbem.listen",),
    ("pbem.demo",),
    ("pbem.cli",),
]


def module_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in (Path(engine.__file__).parent, Path(pbem.__file__).parent):
        for path in sorted(package.rglob("*.py")):
            if "migrations" not in path.parts:
                found[module_of(path)] = path
    return found


def imported(path: Path, module: str) -> set[str]:
    """Every dotted name ``path`` imports (``from a import b`` → ``a.b``)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def arrows() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        targets = set()
        for name in imported(path, module):
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module and not module.startswith(name + "."):
                targets.add(name)
        graph[module] = targets
    return graph


def room_of(module: str) -> str:
    best = ""
    for rooms in FLOORS:
        for room in rooms:
            if (module == room or module.startswith(room + ".")) and len(room) > len(best):
                best = room
    assert best, f"{module} is in no room of FLOORS: give it one"
    return best


def floor_of(room: str) -> int:
    return next(number for number, rooms in enumerate(FLOORS) if room in rooms)


def test_no_module_of_pbem_or_the_engine_is_over_the_limit() -> None:
    found = modules()
    assert set(found) >= set(GENERATED), "an exempted data table is gone: drop its exemption"
    long = {
        str(path.relative_to(ROOT)): n
        for module, path in found.items()
        if module not in GENERATED and (n := len(path.read_text().splitlines())) > LIMIT
    }
    assert long == {}


def test_the_exempted_tables_say_they_are_generated() -> None:
    """Only a table its generator writes is exempt: its first lines name the command."""
    found = modules()
    for module, generator in GENERATED.items():
        head = found[module].read_text()[:400]
        assert f"python -m {generator}" in head and "do not edit" in head, module


def test_no_room_imports_a_room_above_it() -> None:
    upward = []
    for module, targets in arrows().items():
        mine = floor_of(room_of(module))
        for target in targets:
            if floor_of(room_of(target)) > mine:
                upward.append(f"{module} imports {target}")
    assert upward == []


def test_rooms_of_one_floor_import_each_other_without_a_circle() -> None:
    graph: dict[str, set[str]] = {}
    for module, targets in arrows().items():
        here = room_of(module)
        graph.setdefault(here, set()).update(
            room_of(t) for t in targets if room_of(t) != here and room_of(t) != "pbem"
        )
    assert find_circles(graph) == []


def test_no_module_imports_another_in_a_circle() -> None:
    assert find_circles(arrows()) == []


def find_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    circles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                circles.append([*trail[trail.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return circles
