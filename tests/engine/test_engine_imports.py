"""The engine's modules import one another in one direction: no import circle.

Every module of ``engine/`` is read with ``ast``, and every import in it counts, the
ones inside functions (imported on first use) and under ``TYPE_CHECKING`` too: a
circle hidden in a function is still a circle. ``from engine.strategy import hard``
is an arrow to ``engine.strategy.hard``; ``from engine import new_game`` one to the
package ``engine`` itself (its ``__init__``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ENGINE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def engine_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(ENGINE.rglob("*.py"))}


def imported(node: ast.Import | ast.ImportFrom, here: str, modules: set[str]) -> set[str]:
    """The engine modules one import statement in module ``here`` names."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in modules}
    base = node.module or ""
    if node.level:  # relative: from the package of ``here``
        package = here.split(".")
        is_package = (ENGINE.parent / Path(*package) / "__init__.py").exists()
        package = package[: len(package) - node.level + (1 if is_package else 0)]
        base = ".".join([*package, *([base] if base else [])])
    out: set[str] = set()
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in modules:
            out.add(sub)  # a submodule by name
        elif base in modules:
            out.add(base)  # a name defined in ``base``
    return out


def import_graph() -> dict[str, set[str]]:
    """Every engine module to the engine modules it imports, anywhere in its text."""
    paths = engine_modules()
    modules = set(paths)
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        arrows: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                arrows |= imported(node, name, modules)
        arrows.discard(name)
        graph[name] = arrows
    return graph


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as the path ``[a, b, ..., a]``, or None when there is none."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path: list[str] = [start]
        on_path = {start}
        stack = [iter(sorted(graph[start]))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                done.add(path[-1])
                on_path.discard(path.pop())
            elif nxt in on_path:
                return [*path[path.index(nxt) :], nxt]
            elif nxt not in done:
                path.append(nxt)
                on_path.add(nxt)
                stack.append(iter(sorted(graph[nxt])))
    return None


def test_the_graph_sees_the_engine() -> None:
    graph = import_graph()
    assert {"engine", "engine.players", "engine.levels", "engine.strategy.hard"} <= set(graph)
    assert "engine.players" in graph["engine.bsd"]
    assert "engine.strategy.winprobdata" in graph["engine.strategy.winprob"]


def test_a_circle_is_found_and_shown() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert find_circle(graph) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_circle_in_the_engine() -> None:
    circle = find_circle(import_graph())
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_the_helpers_import_no_level_or_strategy() -> None:
    """``engine.players`` is at the bottom of the computer players: the strategies and
    the level table import it, never the other way round."""
    arrows = import_graph()["engine.players"]
    upward = {"engine.levels", "engine.computer", "engine.easy", "engine.baselines", "engine.bsd"}
    assert not arrows & upward, sorted(arrows)
    assert not {a for a in arrows if a.startswith("engine.strategy")}, sorted(arrows)
