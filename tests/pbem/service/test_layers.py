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
        ("transaction", "admin", "timers", "forget", "audit", "site", "unsubscribe"),
    ),
    ("the package's front door", ("__init__",)),
]


def room_of(module: str) -> str:
    """``pbem.service.send.turns`` → ``send``; ``pbem.service`` → ``__init__``."""
    parts = module.split(".")[2:]
    return parts[0] if parts else "__init__"


def floor_of(room: str) -> int:
    for number, (_, rooms) in enumerate(FLOORS):
        if room in rooms:
            return number
    raise AssertionError(f"pbem/service/{room} has no floor in FLOORS: give it one")


def module_of(path: Path) -> str:
    parts = path.relative_to(SERVICE.parent.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def service_imports(path: Path, module: str) -> set[str]:
    """The modules of ``pbem.service`` that ``path`` imports, anywhere in it."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from pbem.service import send`` names a module, ``… import utcnow`` a name
            # in one: `resolve` finds the module either way.
            names = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name.startswith("pbem.service"):
                found.add(name)
    return found


def modules() -> dict[str, Path]:
    return {module_of(p): p for p in sorted(SERVICE.rglob("*.py"))}


def resolve(name: str, known: dict[str, Path]) -> str | None:
    """The module an imported dotted name lands in (a module, or a name in one)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def arrows() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        targets = set()
        for name in service_imports(path, module):
            target = resolve(name, known)
            if target is not None and target != module:
                # The package of a module is imported with it: only name real arrows.
                if module.startswith(target + ".") and target.count(".") >= 2:
                    continue
                targets.add(target)
        graph[module] = targets
    return graph


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
    graph = arrows()
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
    assert circles == []


@pytest.mark.parametrize("room", ["game", "send", "ops", "handle", "intake"])
def test_each_room_has_a_map(room: str) -> None:
    init = SERVICE / room / "__init__.py"
    assert init.exists()
    doc = ast.get_docstring(ast.parse(init.read_text()))
    assert doc and len(doc.splitlines()) >= 3, f"pbem/service/{room}/__init__.py says what it holds"
